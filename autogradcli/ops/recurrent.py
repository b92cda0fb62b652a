"""Whole-sequence recurrent layers as one Function per layer and direction (cuDNN's scheme).

Forward: the input projection of every time step is one batched product ``W_ih @ x^T``;
only the hidden projection runs per step (ops/recurrent_cells.py, feature-major: (G, N) blocks). Backward runs the recurrence
backwards for the gate gradients of every step, then each weight gradient is one product over
the sequence (``dW_ih = dgates^T @ x``, ``dW_hh = dgates^T @ h_prev``), each bias one sum and the
input's gradient one product. Under ``create_graph`` the backward recomputes the layer with the
per-step composition the caller passes (``composed``) and differentiates that, so grad-of-grad
works as it did.

A ``PackedSequence``'s rows (``sizes``: its batch sizes) go through the same products over the
packed rows only (input projection, output, the input's and the weights' gradients); the loops
run on a padded layout, each step on its running sequences' columns.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..autograd.composed import composed_gradients
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


def _packed_columns(xp: Any, a: Any, reverse: bool, sizes: tuple[int, ...]) -> Any:
    """The loops' (L, F, N) buffers (processing order) as one (F, T) matrix of the packed
    (time-major) rows: the running sequences' columns of every step."""
    last = len(sizes) - 1
    steps = [a[last - t if reverse else t][:, :b] for t, b in enumerate(sizes)]
    return xp.concatenate(steps, axis=1)


def _loop_columns(xp: Any, cols: Any, reverse: bool, sizes: tuple[int, ...]) -> Any:
    """The inverse of ``_packed_columns``: a (F, T) matrix of packed columns as the loops'
    (L, F, N) buffer, zero where a sequence does not run."""
    out = xp.zeros((len(sizes), cols.shape[0], sizes[0]), cols.dtype)
    start, last = 0, len(sizes) - 1
    for t, b in enumerate(sizes):
        out[last - t if reverse else t][:, :b] = cols[:, start : start + b]
        start += b
    return out


def _loop_grads(xp: Any, g: Any, reverse: bool, sizes: tuple[int, ...] | None) -> Any:
    """The output's gradient as the loops' (L, H, N) buffer; zero where a sequence has ended."""
    return _swap(xp, g, reverse) if sizes is None else _loop_columns(xp, g.T, reverse, sizes)


def _layout(xp: Any, reverse: bool, sizes: tuple[int, ...] | None, L: int, N: int) -> tuple:
    """``(cols, rows)``: the loops' (L, F, N) buffers as (F, steps) and (steps, F) matrices in
    time order, over every (t, n) of a padded sequence or the packed rows of a packed one."""
    if sizes is None:
        return (
            lambda a: _gate_matrix(xp, a, reverse),
            lambda a: _swap(xp, a, reverse).reshape(L * N, -1),
        )
    return (
        lambda a: _packed_columns(xp, a, reverse, sizes),
        lambda a: _packed_columns(xp, a, reverse, sizes).T,
    )


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
        sizes: tuple[int, ...] | None = None,
    ) -> Any:
        cell = CELLS[mode]
        xa = x._data
        xp = array_module(xa)
        H = w_hh._data.shape[0] // cell.gates
        scale = cell.scale(xp, H, xa.dtype)
        if sizes is None:
            # the input projection of every step, feature-major: (G, I) @ (L, I, N), one batched
            # product (OpenBLAS runs it up to 4x faster than (L*N, I) @ (I, G) and a transpose)
            xw = xp.matmul(_scaled(w_ih._data, scale), _swap(xp, xa, reverse))
        else:  # packed (T, I) rows: one (G, I) @ (I, T) product, then the loops' layout
            xw = _loop_columns(xp, xp.matmul(_scaled(w_ih._data, scale), xa.T), reverse, sizes)
        if b_ih is not None:
            bias = b_ih._data + b_hh._data if cell.fold_bias else b_ih._data
            xw += _scaled(bias, scale)[:, None]
        b_col = None
        if not cell.fold_bias and b_hh is not None:
            b_col = _scaled(b_hh._data, scale)[:, None]
        states = [h0._data.T] if c0 is None else [h0._data.T, c0._data.T]
        weights = (_scaled(w_hh._data, scale), b_col, None if w_hr is None else w_hr._data)
        hs, saved, finals = cell.forward(xp, xw, states, weights, _in_order(sizes, reverse))
        ctx.arrays = (hs, saved)
        ctx.mode, ctx.reverse, ctx.composed, ctx.sizes = mode, reverse, composed, sizes
        ctx.save_for_backward(x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr)
        if sizes is None:
            out = _swap(xp, hs[1:], reverse)
        else:
            out = xp.ascontiguousarray(_packed_columns(xp, hs[1:], reverse, sizes).T)
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
        rev, sizes = ctx.reverse, ctx.sizes
        I = xa.shape[-1]
        L, N = (xa.shape[0], xa.shape[1]) if sizes is None else (len(sizes), sizes[0])
        grads = (_loop_grads(xp, dout._data, rev, sizes), [g._data.T for g in dfinal])
        weights = (w_hh._data, None if w_hr is None else w_hr._data)
        dxg, dhg, dstates, dproj = cell.backward(
            xp, hs, saved, grads, weights, _in_order(sizes, rev)
        )
        nx, nh, nc, nwi, nwh, nbi, nbh, nwr = ctx.needs_input_grad[:8]
        cols, rows = _layout(xp, rev, sizes, L, N)
        dx2 = cols(dxg)  # (G, steps): one column per (t, n) that ran
        dh2 = dx2 if dhg is dxg else cols(dhg)
        gx = gwi = gwh = gbi = gbh = gwr = None
        if nx:
            gx = wrap(xp.matmul(dx2.T, w_ih._data).reshape(xa.shape))
        if nwi:
            gwi = wrap(xp.matmul(dx2, xa.reshape(-1, I)))
        if nwh:  # each step's previous hidden state, (steps, H) in time order
            gwh = wrap(xp.matmul(dh2, rows(hs[:-1])))
        if nbi:
            gbi = wrap(dx2.sum(1))
        if nbh:  # the same sum as b_ih's where b_hh is folded into the input projection
            gbh = wrap(gbi._data.copy() if gbi is not None and dh2 is dx2 else dh2.sum(1))
        if nwr:  # dW_hr: the projected h's gradients against the unprojected h, one GEMM
            gwr = wrap(xp.matmul(cols(dproj), rows(saved[3])))
        gh = wrap(dstates[0].T.copy()) if nh else None
        gc = wrap(dstates[1].T.copy()) if nc and len(dstates) > 1 else None
        return gx, gh, gc, gwi, gwh, gbi, gbh, gwr, None, None, None, None


def _composed_backward(ctx: Any, grads: tuple[Tensor, ...]) -> tuple[Any, ...]:
    """Backward under create_graph: the layer recomputed with the per-step ops, differentiated."""
    inputs = ctx.saved_tensors[:8]
    return composed_gradients(ctx, inputs, ctx.composed(*inputs), grads, 12)


def _in_order(sizes: tuple[int, ...] | None, reverse: bool) -> tuple[int, ...] | None:
    """The running batch size of each step in the loops' processing order."""
    if sizes is None:
        return None
    return sizes[::-1] if reverse else sizes


def recurrent_sequence(
    mode: str,
    x: Tensor,
    states: list[Tensor],
    weights: tuple[Any, ...],
    reverse: bool,
    composed: Callable[..., Any],
    sizes: tuple[int, ...] | None = None,
) -> tuple[Tensor, list[Tensor]]:
    """One layer-direction of mode ``mode`` ("LSTM", "GRU", "RNN_TANH", "RNN_RELU") over the
    (L, N, I) sequence ``x`` from ``states`` ([h0] or [h0, c0]) with ``weights`` (w_ih, w_hh,
    b_ih, b_hh, w_hr; biases and LSTM's projection w_hr may be None): the (L, N, H) output and
    the final states. ``composed(x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr)`` is the same layer as
    per-step ops (used for create_graph). With ``sizes`` (a packed sequence's batch sizes),
    ``x`` is the packed (T, I) rows, the output is packed the same way, each sequence's final
    states are those of its own last step and the reverse direction starts at its own end."""
    c0 = states[1] if len(states) > 1 else None
    res = RecurrentSequence.apply(x, states[0], c0, *weights[:5], mode, reverse, composed, sizes)
    return res[0], list(res[1:])
