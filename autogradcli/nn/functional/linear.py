"""Functional forms of the linear-algebra and lookup layers: ``linear``, ``bilinear``, ``dropout``,
``embedding``, ``one_hot``."""

from __future__ import annotations

import warnings
from typing import Any

from ...autograd.function import Function
from ...autograd.grad_mode import STATE, no_grad
from ...backend import array_module, dots
from ...backend.rows import sum_rows_at
from ...ops._util import scalar_type_name
from ...tensor.random import generator_for
from ...tensor.tensor import Tensor, wrap
from ..parameter import typename

__all__ = ["dropout", "embedding", "linear", "one_hot"]


class Linear(Function):
    """``x @ W.T + b`` as one node; leading batch dims of ``x`` are flattened for the products."""

    _backward_name = "AddmmBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, weight: Tensor, bias: Tensor | None) -> Any:
        xa, wa = x._data, weight._data
        wdt = wa.dtype
        if xa.dtype is not wdt and xa.dtype != wdt:
            raise RuntimeError(
                "expected m1 and m2 to have the same dtype, but got: "
                f"{scalar_type_name(xa.dtype).lower()} != {scalar_type_name(wa.dtype).lower()}"
            )
        if bias is not None and bias._data.dtype is not wdt and bias._data.dtype != wdt:
            raise RuntimeError(
                "self and mat2 must have the same dtype, but got "
                f"{scalar_type_name(bias._data.dtype)} and {scalar_type_name(wa.dtype)}"
            )
        if wa.ndim != 2 or xa.ndim == 0 or xa.shape[-1] != wa.shape[1]:
            rows = xa.size // xa.shape[-1] if xa.ndim and xa.shape[-1] else 1
            lhs = f"{rows}x{xa.shape[-1] if xa.ndim else 1}"
            rhs = "x".join(str(s) for s in reversed(wa.shape))
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({lhs} and {rhs})")
        nx, nw, _ = ctx.needs_input_grad
        ctx.save_for_backward(x if nw else None, weight if nx else None)
        x2 = xa.reshape(-1, xa.shape[-1]) if xa.ndim != 2 else xa
        xp = array_module(xa)
        out = xp.matmul(x2, wa.T)
        if bias is not None:
            out += bias._data
        if xa.ndim != 2:
            out = out.reshape(*xa.shape[:-1], wa.shape[0])
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, Any, Any]:
        x, weight = ctx.saved_tensors
        nx, nw, nb = ctx.needs_input_grad
        if not STATE.enabled:  # no create_graph: the same products on the arrays, no nodes
            return _backward_arrays(g._data, x, weight, nx, nw, nb)
        gx = gw = gb = None
        g2 = g if g.ndim == 2 else g.reshape(-1, g.shape[-1])
        if nx:
            gx = g.matmul(weight)
        if nw:
            x2 = x if x.ndim == 2 else x.reshape(-1, x.shape[-1])
            gw = g2.t().matmul(x2)
        if nb:
            gb = g2.sum(0)
        return gx, gw, gb


def _backward_arrays(g: Any, x: Any, weight: Any, nx: bool, nw: bool, nb: bool) -> tuple:
    """Linear's backward without recording (the common case): three array products/sums."""
    g2 = g if g.ndim == 2 else g.reshape(-1, g.shape[-1])
    xp = array_module(g)
    gx = None
    if nx:  # one GEMM over the flattened rows (numpy loops a 3-d @ 2-d product per matrix)
        gx = xp.matmul(g2, weight._data)
        gx = wrap(gx if g.ndim == 2 else gx.reshape(*g.shape[:-1], gx.shape[-1]))
    gw = gb = None
    if nw:
        xa = x._data
        gw = wrap(dots.matmul(xp, g2.T, xa if xa.ndim == 2 else xa.reshape(-1, xa.shape[-1])))
    if nb:  # the column sums as ones @ g: numpy's sum(0) measured 0.19 ms on 1024 x 128, this 0.007
        gb = wrap(xp.matmul(xp.ones(g2.shape[0], dtype=g2.dtype), g2))
    return gx, gw, gb


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias`` (one fused autograd node)."""
    return Linear.apply(input, weight, bias)


class _Dropout(Function):
    _backward_name = "NativeDropoutBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, p: float) -> Any:
        arr = x._data
        xp = array_module(arr)
        gen = generator_for(xp)
        if p == 1.0:
            mask = xp.zeros(arr.shape, dtype=arr.dtype)
        else:
            keep = gen.random(arr.shape, dtype=arr.dtype if arr.dtype.kind in "fV" else None) >= p
            mask = keep.astype(arr.dtype)
            mask *= 1.0 / (1.0 - p)
        ctx.mask = wrap(mask)
        return arr * mask

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None]:
        return g * ctx.mask, None


def check_dropout_p(p: float) -> None:
    """torch's check of a dropout probability (shared with the channel dropouts)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)`` (training only)."""
    check_dropout_p(p)
    if not training or p == 0.0:
        return input
    if inplace:
        from ...ops.inplace import apply_inplace

        return apply_inplace(input, "dropout_", lambda s: _Dropout.apply(s, p))
    return _Dropout.apply(input, p)


class _Embedding(Function):
    _backward_name = "EmbeddingBackward0"

    @staticmethod
    def forward(
        ctx: Any, weight: Tensor, indices: Tensor, padding_idx: int, scale_grad_by_freq: bool
    ) -> Any:
        idx = indices._data
        n = weight._data.shape[0]
        if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= n):
            raise IndexError("index out of range in self")
        ctx.idx, ctx.n, ctx.padding_idx, ctx.scale = idx, n, padding_idx, scale_grad_by_freq
        return weight._data[idx]

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None, None, None]:
        from ...ops.indexing import IndexAddInto

        idx = ctx.idx
        xp = array_module(idx)
        scale = None
        if ctx.padding_idx >= 0:
            scale = (idx != ctx.padding_idx).astype(g._data.dtype)
        if ctx.scale:
            counts = xp.bincount(idx.reshape(-1) % ctx.n, minlength=ctx.n)
            freq = (1.0 / counts[idx % ctx.n]).astype(g._data.dtype)
            scale = freq if scale is None else scale * freq
        if not STATE.enabled:  # no create_graph: the rows summed on the arrays (CPU)
            ga = g._data if scale is None else g._data * scale[..., None]
            rows = sum_rows_at(idx, ga, ctx.n)
            if rows is not None:
                return wrap(rows), None, None, None
        if scale is not None:
            g = g * wrap(scale[..., None])
        shape = (ctx.n, g.shape[-1])
        return IndexAddInto.apply(g, shape, idx, False), None, None, None


def _embedding_renorm_(weight: Tensor, idx: Any, max_norm: float, norm_type: float) -> None:
    """Rescale (in place, untracked) the looked-up rows whose norm exceeds ``max_norm``."""
    xp = array_module(weight._data)
    rows = xp.unique(idx.reshape(-1))
    w = weight._data
    sel = w[rows]
    norms = (xp.abs(sel) ** norm_type).sum(axis=1) ** (1.0 / norm_type)
    scale = xp.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0).astype(w.dtype)
    w[rows] = sel * scale[:, None]
    weight._bump_version()


def embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """Rows of ``weight`` picked by the integer tensor ``input`` (``padding_idx``'s row gets no gradient)."""
    n = weight.shape[0]
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < n, "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -n, "Padding_idx must be within num_embeddings"
            padding_idx = n + padding_idx
    else:
        padding_idx = -1
    if input._data.dtype.kind not in "iu":
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar types: "
            f"Long, Int; but got {typename(input)} instead (while checking arguments for "
            "embedding)"
        )
    if sparse:
        warnings.warn("sparse embedding gradients are computed densely", stacklevel=2)
    if max_norm is not None:
        with no_grad():
            _embedding_renorm_(weight, input._data, max_norm, norm_type)
    return _Embedding.apply(weight, input, padding_idx, scale_grad_by_freq)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 one-hot encoding of ``tensor`` with ``num_classes`` classes (inferred when -1)."""
    from ... import ops

    return ops.one_hot(tensor, num_classes)
