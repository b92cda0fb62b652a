"""Whole-sequence recurrent layers as one Function per layer and direction (cuDNN's scheme).

Forward: the input projection of every time step is one batched product ``W_ih @ x^T``;
only the hidden projection runs per step (ops/recurrent_cells.py, feature-major: (G, N) blocks). Backward runs the recurrence
backwards for the gate gradients of every step, then each weight gradient is one product over
the sequence (``dW_ih = dgates^T @ x``, ``dW_hh = dgates^T @ h_prev``), each bias one sum and the
input's gradient one product. Under ``create_graph`` the backward recomputes the layer with the
per-step composition the caller passes (``composed``) and differentiates that, so grad-of-grad
works as it did.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..autograd.function import Function
from ..autograd.grad_mode import STATE
from ..backend import array_module
from ..tensor.tensor import Tensor, wrap
from .recurrent_cells import CELLS

__all__ = ["recurrent_sequence"]


def _scaled(w: Any, scale: Any) -> Any:
    """``w`` with its gate rows multiplied by ``scale`` (exact: factors are 0.5 or 1)."""
    if w is None or scale is None:
        return w
    return w * (scale[:, None] if w.ndim == 2 else scale)


def _swap(xp: Any, a: Any, reverse: bool) -> Any:
    """(L, A, B) to (L, B, A), contiguous, time reversed for the reverse direction: time-major
    (L, N, F) arrays to the loops' feature-major steps and back."""
    return xp.ascontiguousarray((a[::-1] if reverse else a).transpose(0, 2, 1))


def _gate_matrix(xp: Any, d: Any, reverse: bool) -> Any:
    """The loops' (L, G, N) gate gradients as one (G, L*N) matrix in time order."""
    L, G, N = d.shape
    return xp.ascontiguousarray((d[::-1] if reverse else d).transpose(1, 0, 2)).reshape(G, L * N)


class RecurrentSequence(Function):
    """One recurrent layer in one direction over a whole (L, N, I) sequence."""

    _backward_name = "RecurrentSequenceBackward0"

    @staticmethod
    def forward(
        ctx: Any,
        x: Tensor,
        h0: Tensor,
        c0: Tensor | None,
        w_ih: Tensor,
        w_hh: Tensor,
        b_ih: Tensor | None,
        b_hh: Tensor | None,
        w_hr: Tensor | None,
        mode: str,
        reverse: bool,
        composed: Callable[..., Any],
    ) -> Any:
        cell = CELLS[mode]
        xa = x._data
        xp = array_module(xa)
        H = w_hh._data.shape[0] // cell.gates
        scale = cell.scale(xp, H, xa.dtype)
        # the input projection of every step, feature-major: (G, I) @ (L, I, N), one batched
        # product (OpenBLAS runs it up to 4x faster than (L*N, I) @ (I, G) and a transpose)
        xw = xp.matmul(_scaled(w_ih._data, scale), _swap(xp, xa, reverse))
        if b_ih is not None:
            bias = b_ih._data + b_hh._data if cell.fold_bias else b_ih._data
            xw += _scaled(bias, scale)[:, None]
        b_col = None
        if not cell.fold_bias and b_hh is not None:
            b_col = _scaled(b_hh._data, scale)[:, None]
        states = [h0._data.T] if c0 is None else [h0._data.T, c0._data.T]
        hs, saved, finals = cell.forward(
            xp,
            xw,
            states,
            _scaled(w_hh._data, scale),
            b_col,
            None if w_hr is None else w_hr._data,
        )
        ctx.arrays = (hs, saved)
        ctx.mode, ctx.reverse, ctx.composed = mode, reverse, composed
        ctx.save_for_backward(x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr)
        out = _swap(xp, hs[1:], reverse)
        return (out, *(f.T.copy() for f in finals))

    @staticmethod
    def backward(ctx: Any, dout: Tensor, *dfinal: Tensor) -> tuple[Any, ...]:
        if STATE.enabled:  # create_graph: differentiate the per-step composition instead
            return _composed_backward(ctx, (dout, *dfinal))
        x, _, _, w_ih, w_hh, _, _, w_hr = ctx.saved_tensors
        cell = CELLS[ctx.mode]
        hs, saved = ctx.arrays
        xa = x._data
        xp = array_module(xa)
        L, N, I = xa.shape
        rev = ctx.reverse
        dxg, dhg, dstates, dproj = cell.backward(
            xp,
            hs,
            saved,
            _swap(xp, dout._data, rev),
            [g._data.T for g in dfinal],
            w_hh._data,
            None if w_hr is None else w_hr._data,
        )
        nx, nh, nc, nwi, nwh, nbi, nbh, nwr = ctx.needs_input_grad[:8]
        dx2 = _gate_matrix(xp, dxg, rev)  # (G, L*N)
        dh2 = dx2 if dhg is dxg else _gate_matrix(xp, dhg, rev)
        gx = gwi = gwh = gbi = gbh = gwr = None
        if nx:
            gx = wrap(xp.matmul(dx2.T, w_ih._data).reshape(L, N, I))
        if nwi:
            gwi = wrap(xp.matmul(dx2, xa.reshape(L * N, I)))
        if nwh:  # each time step's previous hidden state, (L*N, H) in time order
            gwh = wrap(xp.matmul(dh2, _swap(xp, hs[:-1], rev).reshape(L * N, -1)))
        if nbi:
            gbi = wrap(dx2.sum(1))
        if nbh:  # the same sum as b_ih's where b_hh is folded into the input projection
            gbh = wrap(gbi._data.copy() if gbi is not None and dh2 is dx2 else dh2.sum(1))
        if nwr:  # dW_hr: the projected h's gradients against the unprojected h, one GEMM
            hr = _swap(xp, saved[3], rev).reshape(L * N, -1)
            gwr = wrap(xp.matmul(_gate_matrix(xp, dproj, rev), hr))
        gh = wrap(dstates[0].T.copy()) if nh else None
        gc = wrap(dstates[1].T.copy()) if nc and len(dstates) > 1 else None
        return gx, gh, gc, gwi, gwh, gbi, gbh, gwr, None, None, None


def _composed_backward(ctx: Any, grads: tuple[Tensor, ...]) -> tuple[Any, ...]:
    """Backward under create_graph: recompute the layer with the per-step ops and take their
    gradients with a graph, so that they can be differentiated again."""
    from ..autograd.engine import grad

    inputs = ctx.saved_tensors[:8]
    wanted = [i for i, t in enumerate(inputs) if t is not None and ctx.needs_input_grad[i]]
    outs = ctx.composed(*inputs)
    pairs = [(o, g) for o, g in zip(outs, grads) if g is not None and o.requires_grad]
    got = grad(
        [o for o, _ in pairs],
        [inputs[i] for i in wanted],
        [g for _, g in pairs],
        create_graph=True,
        allow_unused=True,
    )
    result: list[Any] = [None] * 11
    for i, g in zip(wanted, got):
        result[i] = g
    return tuple(result)


def recurrent_sequence(
    mode: str,
    x: Tensor,
    states: list[Tensor],
    weights: tuple[Any, ...],
    reverse: bool,
    composed: Callable[..., Any],
) -> tuple[Tensor, list[Tensor]]:
    """One layer-direction of mode ``mode`` ("LSTM", "GRU", "RNN_TANH", "RNN_RELU") over the
    (L, N, I) sequence ``x`` from ``states`` ([h0] or [h0, c0]) with ``weights`` (w_ih, w_hh,
    b_ih, b_hh, w_hr; biases and LSTM's projection w_hr may be None): the (L, N, H) output and
    the final states. ``composed(x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr)`` is the same layer as
    per-step ops (used for create_graph)."""
    c0 = states[1] if len(states) > 1 else None
    res = RecurrentSequence.apply(x, states[0], c0, *weights[:5], mode, reverse, composed)
    return res[0], list(res[1:])
