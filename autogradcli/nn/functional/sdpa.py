"""``scaled_dot_product_attention`` as one Function: two batched GEMMs and an in-place softmax
forward; backward as four batched GEMMs and one fused softmax backward ``P * (dP - rowsum(dP P))``.

A mask is folded into the scores in place (a causal or bool mask by a masked store of -inf, a
float mask added); rows that no key may attend give zeros, as torch's ``_safe_softmax``.
Dropout draws its keep-mask as ``F.dropout`` does. Under create_graph the backward runs the same
formulas as Tensor ops (the weights recomputed from the saved inputs), so grad-of-grad works.
"""

from __future__ import annotations

from typing import Any

from ...autograd.function import Function
from ...autograd.grad_mode import STATE
from ...backend import array_module
from ...tensor.random import generator_for
from ...tensor.tensor import Tensor, wrap

__all__ = ["SDPA"]


def _masked_scores(xp: Any, s: Any, causal: bool, mask: Any) -> Any:
    """Fold the mask into the fresh scores ``s`` in place (a float mask: added) and return them."""
    if causal:
        xp.copyto(s, float("-inf"), where=~xp.tri(*s.shape[-2:], dtype=bool))
    elif mask is not None:
        if mask.dtype.kind == "b":
            xp.copyto(s, float("-inf"), where=~mask)
        else:
            s += mask.astype(s.dtype, copy=False)
    return s


def _softmax_rows(xp: Any, s: Any) -> Any:
    """Softmax over the last dim of ``s`` in place; rows of -inf only give zeros."""
    m = s.max(axis=-1, keepdims=True)
    dead = ~xp.isfinite(m)
    if dead.any():
        m = xp.where(dead, 0.0, m).astype(s.dtype)
    s -= m
    s = xp.exp(s, out=s)
    total = s.sum(axis=-1, keepdims=True)
    if dead.any():
        total = xp.where(total == 0, 1.0, total).astype(s.dtype)
    s /= total
    return s


class SDPA(Function):
    """softmax(Q K^T * scale + mask) [dropout] V over (..., L, E) queries, (..., S, E) keys."""

    _backward_name = "ScaledDotProductAttentionBackward0"

    @staticmethod
    def forward(
        ctx: Any, q: Tensor, k: Tensor, v: Tensor, mask: Any, causal: bool, p: float, scale: float
    ) -> Any:
        qa, ka, va = q._data, k._data, v._data
        xp = array_module(qa)
        s = xp.matmul(qa, xp.swapaxes(ka, -1, -2))
        s *= scale
        s = _masked_scores(xp, s, causal, None if mask is None else mask._data)
        w = _softmax_rows(xp, s)
        keep = None
        if p == 1.0:
            keep = xp.zeros(w.shape, dtype=w.dtype)
        elif p > 0.0:  # the keep-mask drawn as F.dropout draws it
            keep = (generator_for(xp).random(w.shape, dtype=w.dtype) >= p).astype(w.dtype)
            keep *= 1.0 / (1.0 - p)
        wd = w if keep is None else w * keep
        ctx.save_for_backward(q, k, v, mask)
        ctx.w, ctx.keep, ctx.scale, ctx.causal = w, keep, scale, causal
        return xp.matmul(wd, va)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, ...]:
        q, k, v, mask = ctx.saved_tensors
        nq, nk, nv = ctx.needs_input_grad[:3]
        if STATE.enabled:
            return (*_backward_tensors(ctx, g, q, k, v, mask), None, None, None, None)
        xp = array_module(g._data)
        ga, w, keep = g._data, ctx.w, ctx.keep
        wd = w if keep is None else w * keep
        gq = gk = gv = None
        if nv:
            gv = wrap(xp.matmul(xp.swapaxes(wd, -1, -2), ga))
        if nq or nk:
            gw = xp.matmul(ga, xp.swapaxes(v._data, -1, -2))
            if keep is not None:
                gw *= keep
            rows = (gw * w).sum(axis=-1, keepdims=True)
            gw -= rows
            gw *= w
            gw *= ctx.scale  # now the gradient of q k^T
            if nq:
                gq = wrap(xp.matmul(gw, k._data))
            if nk:
                gk = wrap(xp.matmul(xp.swapaxes(gw, -1, -2), q._data))
        return gq, gk, gv, None, None, None, None


def _backward_tensors(ctx: Any, g: Tensor, q: Tensor, k: Tensor, v: Tensor, mask: Any) -> tuple:
    """The same gradients as Tensor ops from the saved inputs (create_graph)."""
    from ...ops.activation import softmax
    from .attention import _safe_softmax

    s = (q @ k.transpose(-2, -1)) * ctx.scale
    if ctx.causal:
        allowed = array_module(s._data).tri(*s.shape[-2:], dtype=bool)
        s = s.masked_fill(wrap(~allowed), float("-inf"))
    elif mask is not None:
        is_bool = mask._data.dtype.kind == "b"
        s = s.masked_fill(mask.logical_not(), float("-inf")) if is_bool else s + mask
    w = _safe_softmax(s) if ctx.causal or mask is not None else softmax(s, -1)
    keep = None if ctx.keep is None else wrap(ctx.keep)
    wd = w if keep is None else w * keep
    nq, nk, nv = ctx.needs_input_grad[:3]
    gv = wd.transpose(-2, -1) @ g if nv else None
    gq = gk = None
    if nq or nk:
        gw = g @ v.transpose(-2, -1)
        if keep is not None:
            gw = gw * keep
        gs = w * (gw - (gw * w).sum(-1, keepdim=True)) * ctx.scale
        gq = gs @ k if nq else None
        gk = gs.transpose(-2, -1) @ q if nk else None
    return gq, gk, gv
