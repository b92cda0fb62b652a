"""Batch normalization with batch statistics as one Function (torch's ``NativeBatchNormBackward0``).

Forward over (N, C, S): the input's sum and sum of squares (two reductions, no temporary) give
the mean and the variance; where a channel's mean is large against its spread (float32 would
cancel), and on devices, they are taken of the input shifted by a pilot near each channel's
mean instead (one more pass, the shifted copy kept for backward; ``_centred``). Then one scale
and one shift pass give the output. Backward is the standard fused formula from two per-channel sums (of g and of g * c):
``gx = weight * invstd * (g - mean(g) - xhat * mean(g * xhat))``. With ``create_graph`` the
backward is written in Tensor ops on the saved input, so grad-of-grad works.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...autograd.function import Function
from ...autograd.grad_mode import STATE
from ...backend import array_module
from ...backend.dots import sum_of_products
from ...tensor.tensor import Tensor, wrap

__all__ = ["BatchNormEval", "BatchNormTrain", "channel_sums"]


def _as3(arr: Any) -> Any:
    """(N, C, *) as (N, C, S): a view when the memory allows, else a copy."""
    return arr.reshape(arr.shape[0], arr.shape[1], -1)


def channel_sums(xp: Any, a: Any, b: Any | None = None) -> Any:
    """Per-channel sums over (N, C, S) ``a`` (of ``a * b`` when ``b`` is given), no temporary.
    A float array's plain sum is a product with ones (BLAS: 3x numpy's two-axis sum)."""
    if b is not None:
        return sum_of_products(xp, "ncs,ncs->c", a, b)
    if a.dtype.kind == "f" and a.dtype.itemsize >= 4:
        return xp.matmul(a, xp.ones(a.shape[2], dtype=a.dtype)).sum(axis=0)
    return a.sum(axis=(0, 2))


def _column(v: Any) -> Any:
    return v.reshape(-1, 1)


_ROW_ELEMENTS = 1 << 16  # per-channel rows up to this size are spelled out (below)


def _rows(xp: Any, v: Any, s: int) -> Any:
    """Per-channel values ``v`` (C,) as the operand of an elementwise op over (N, C, S): spelled
    out as (C, S) rows when small, so that numpy's loop runs over whole contiguous images
    (1.5x faster than broadcasting a (C, 1) column along short rows of S), else the column."""
    if s == 1 or v.size * s > _ROW_ELEMENTS:
        return _column(v)
    return xp.ascontiguousarray(xp.broadcast_to(_column(v), (v.size, s)))


# E[x^2] - mean^2 in float32 keeps the variance to ~3e-6 (relative) while every channel's
# mean^2 <= _PLAIN_SUMS_RATIO * var (measured on 64x32x256: 1e-6 at 1, 3e-6 at 4, 1e-5 at 16);
# a ResNet's convs after ReLU give 1.5-3.8
_PLAIN_SUMS_RATIO = 4.0


def _centred(xp: Any, x3: Any) -> tuple[Any, Any, Any, Any]:
    """(c, pilot, shift, var) of (N, C, S) ``x3``: c = x3 less a per-channel pilot (what the
    output and backward passes read), shift = mean - pilot, var the biased variance. On the CPU
    the sums of x3 itself come first (pilot 0, no shifting pass) and are kept where every
    channel's squared mean is within _PLAIN_SUMS_RATIO of its variance; otherwise, and on
    devices (no sync), x3 is shifted by a pilot near the mean (the mean of the first sample's
    channel), so float32 does not cancel when the mean is large."""
    count = x3.shape[0] * x3.shape[2]
    if xp is np:
        mean = channel_sums(xp, x3) / count
        var = channel_sums(xp, x3, x3) / count - mean * mean
        if (mean * mean <= _PLAIN_SUMS_RATIO * var).all():
            return x3, 0.0, mean, var
    pilot = x3[0].mean(axis=1)
    c = x3 - _rows(xp, pilot, x3.shape[2])
    shift = channel_sums(xp, c) / count
    return c, pilot, shift, channel_sums(xp, c, c) / count - shift * shift


class BatchNormTrain(Function):
    """(N, C, *) normalized per channel by its batch statistics, then scaled and shifted."""

    _backward_name = "NativeBatchNormBackward0"

    @staticmethod
    def forward(
        ctx: Any,
        x: Tensor,
        weight: Tensor | None,
        bias: Tensor | None,
        eps: float,
        running: tuple[Tensor | None, Tensor | None, float],
    ) -> Any:
        arr = x._data
        xp = array_module(arr)
        x3 = _as3(arr)
        count, s = x3.shape[0] * x3.shape[2], x3.shape[2]
        c, pilot, shift, var = _centred(xp, x3)
        invstd = 1.0 / xp.sqrt(var + eps)
        scale = invstd if weight is None else invstd * weight._data
        out = c * _rows(xp, scale, s)
        offset = -shift * scale
        if bias is not None:
            offset += bias._data
        out += _rows(xp, offset, s)
        _update_running(running, pilot + shift, var, count)
        ctx.save_for_backward(x, weight)
        ctx.stats = (c, shift, invstd, eps)
        return out.reshape(arr.shape)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, ...]:
        x, weight = ctx.saved_tensors
        nx, nw, nb = ctx.needs_input_grad[:3]
        if STATE.enabled:  # create_graph: the same formula in Tensor ops, differentiable
            return (*_graph_backward(x, weight, g, ctx.stats[3], nx, nw, nb), None, None)
        c, shift, invstd, _ = ctx.stats  # xhat = (c - shift) * invstd
        xp = array_module(c)
        g3 = _as3(g._data)
        count, s = g3.shape[0] * g3.shape[2], g3.shape[2]
        sg = channel_sums(xp, g3)
        sgx = (channel_sums(xp, g3, c) - shift * sg) * invstd  # sum of g * xhat
        gx = gw = gb = None
        if nx:
            k = invstd if weight is None else invstd * weight._data
            slope = k * invstd * sgx * (-1.0 / count)  # gx's factor on c
            gx = c * _rows(xp, slope, s)
            gx += _rows(xp, -slope * shift - k * sg * (1.0 / count), s)
            gx += g3 * _rows(xp, k, s)
            gx = wrap(gx.reshape(x.shape))
        if nw:
            gw = wrap(sgx.astype(weight._data.dtype, copy=False))
        if nb:
            gb = wrap(sg.astype(g3.dtype, copy=False))
        return gx, gw, gb, None, None


def _update_running(running: tuple[Any, Any, float], mean: Any, var: Any, count: int) -> None:
    """running = (1 - momentum) * running + momentum * batch stat (unbiased var), in place."""
    rm, rv, momentum = running
    if rm is not None:
        arr = rm._data
        arr *= 1.0 - momentum
        arr += (mean * momentum).astype(arr.dtype, copy=False)
        rm._bump_version()
    if rv is not None:
        arr = rv._data
        arr *= 1.0 - momentum
        arr += (var * (momentum * count / (count - 1))).astype(arr.dtype, copy=False)
        rv._bump_version()


def _graph_backward(
    x: Tensor, weight: Tensor | None, g: Tensor, eps: float, nx: bool, nw: bool, nb: bool
) -> tuple[Any, Any, Any]:
    """The backward in differentiable Tensor ops on the saved input (for create_graph)."""
    dims = (0,) + tuple(range(2, x.ndim))
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    centered = x - x.mean(dims, keepdim=True)
    invstd = ((centered * centered).mean(dims, keepdim=True) + eps).rsqrt()
    xhat = centered * invstd
    gxhat = (g * xhat).sum(dims)
    gx = None
    if nx:
        k = invstd if weight is None else invstd * weight.reshape(shape)
        mg = g.mean(dims, keepdim=True)
        gx = k * (g - mg - xhat * (gxhat.reshape(shape) / (x.numel() // x.shape[1])))
    return gx, gxhat if nw else None, g.sum(dims) if nb else None


class BatchNormEval(Function):
    """(N, C, *) normalized by given (running) statistics: ``x * scale + offset``, two passes."""

    _backward_name = "NativeBatchNormBackward0"

    @staticmethod
    def forward(
        ctx: Any,
        x: Tensor,
        weight: Tensor | None,
        bias: Tensor | None,
        mean: Tensor,
        var: Tensor,
        eps: float,
    ) -> Any:
        arr = x._data
        xp = array_module(arr)
        invstd = 1.0 / xp.sqrt(var._data + eps)
        scale = invstd if weight is None else invstd * weight._data
        offset = -mean._data * scale
        if bias is not None:
            offset = offset + bias._data
        x3 = _as3(arr)
        out = x3 * _rows(xp, scale.astype(arr.dtype, copy=False), x3.shape[2])
        out += _rows(xp, offset.astype(arr.dtype, copy=False), x3.shape[2])
        ctx.save_for_backward(x, weight, mean, var)
        ctx.eps = eps
        return out.reshape(arr.shape)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, ...]:
        x, weight, mean, var = ctx.saved_tensors
        nx, nw, nb = ctx.needs_input_grad[:3]
        shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
        dims = (0,) + tuple(range(2, x.ndim))
        invstd = (var + ctx.eps).rsqrt().reshape(shape)
        gx = gw = gb = None
        if nx:
            gx = g * (invstd if weight is None else invstd * weight.reshape(shape))
        if nw:
            gw = (g * ((x - mean.reshape(shape)) * invstd)).sum(dims)
        if nb:
            gb = g.sum(dims)
        return gx, gw, gb, None, None, None
