"""Group normalization as one Function (torch's ``NativeGroupNormBackward0``).

Over (N, G, Cg, S) (Cg channels of a group, S spatial positions): each (sample, group) row is
shifted by a pilot near its mean (the mean of its first channel), the shifted sum and sum of
squares give the mean and variance (no float32 cancellation when the mean is large), and the
per-channel affine is folded into one scale and one offset per (sample, channel): two output
passes. Backward: per-(sample, channel) sums of g and g * c give the weight and bias gradients
and the per-row sums of the fused formula. With ``create_graph`` the backward runs in Tensor ops.
"""

from __future__ import annotations

from typing import Any

from ...autograd.function import Function
from ...autograd.grad_mode import STATE
from ...backend import array_module
from ...backend.dots import sum_of_products
from ...tensor.tensor import Tensor, wrap

__all__ = ["GroupNormFn"]


def _grouped(arr: Any, groups: int) -> Any:
    """(N, C, *) as (N, G, Cg, S)."""
    n, c = arr.shape[0], arr.shape[1]
    return arr.reshape(n, groups, c // groups, -1)


class GroupNormFn(Function):
    """(N, C, *) normalized over each group of channels (and space) per sample, then affine."""

    _backward_name = "NativeGroupNormBackward0"

    @staticmethod
    def forward(
        ctx: Any, x: Tensor, weight: Tensor | None, bias: Tensor | None, groups: int, eps: float
    ) -> Any:
        arr = x._data
        xp = array_module(arr)
        x4 = _grouped(arr, groups)
        count = x4.shape[2] * x4.shape[3]
        pilot = x4[:, :, 0].mean(axis=-1)
        c = x4 - pilot[:, :, None, None]
        shift = c.sum(axis=(2, 3)) / count
        var = sum_of_products(xp, "ngcs,ngcs->ng", c, c) / count - shift * shift
        invstd = 1.0 / xp.sqrt(var + eps)
        scale = xp.broadcast_to(invstd[:, :, None], x4.shape[:3])
        if weight is not None:
            scale = scale * weight._data.reshape(x4.shape[1:3])
        offset = -shift[:, :, None] * scale
        if bias is not None:
            offset = offset + bias._data.reshape(x4.shape[1:3])
        out = c * scale[..., None]
        out += offset[..., None]
        ctx.save_for_backward(x, weight)
        ctx.stats = (c, shift, invstd, groups, eps)
        return out.reshape(arr.shape)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, ...]:
        x, weight = ctx.saved_tensors
        nx, nw, nb = ctx.needs_input_grad[:3]
        c, shift, invstd, groups, eps = ctx.stats
        if STATE.enabled:  # create_graph: the same formula in Tensor ops, differentiable
            return (*_graph_backward(x, weight, g, groups, eps, nx, nw, nb), None, None)
        xp = array_module(c)
        g4 = _grouped(g._data, groups)
        count = c.shape[2] * c.shape[3]
        sg = g4.sum(axis=3)  # (N, G, Cg)
        sgx = (sum_of_products(xp, "ngcs,ngcs->ngc", g4, c) - shift[:, :, None] * sg) * invstd[
            :, :, None
        ]
        gx = gw = gb = None
        if nx:
            w = 1.0 if weight is None else weight._data.reshape(c.shape[1:3])
            a = (sg * w).sum(axis=2)  # per row: sum of g * weight
            b = (sgx * w).sum(axis=2)  # per row: sum of g * weight * xhat
            slope = -invstd * invstd * b / count  # gx's factor on c
            k = xp.broadcast_to(invstd[:, :, None] * w, c.shape[:3])
            gx = c * slope[:, :, None, None]
            gx += (-slope * shift - invstd * a / count)[:, :, None, None]
            gx += g4 * k[..., None]
            gx = wrap(gx.reshape(x.shape))
        if nw:
            gw = wrap(sgx.sum(axis=0).reshape(-1).astype(weight._data.dtype, copy=False))
        if nb:
            gb = wrap(sg.sum(axis=0).reshape(-1))
        return gx, gw, gb, None, None


def _graph_backward(
    x: Tensor,
    weight: Tensor | None,
    g: Tensor,
    groups: int,
    eps: float,
    nx: bool,
    nw: bool,
    nb: bool,
) -> tuple[Any, Any, Any]:
    """The backward in differentiable Tensor ops on the saved input (for create_graph)."""
    n, ch = x.shape[0], x.shape[1]
    shape = (1, ch) + (1,) * (x.ndim - 2)
    dims = (0,) + tuple(range(2, x.ndim))
    x3 = x.reshape(n, groups, -1)
    centered = x3 - x3.mean(2, keepdim=True)
    invstd = ((centered * centered).mean(2, keepdim=True) + eps).rsqrt()
    xhat3 = centered * invstd
    gx = None
    if nx:
        gy = g if weight is None else g * weight.reshape(shape)
        gy3 = gy.reshape(n, groups, -1)
        inner = gy3 - gy3.mean(2, keepdim=True) - xhat3 * (gy3 * xhat3).mean(2, keepdim=True)
        gx = (invstd * inner).reshape(x.shape)
    gw = (g * xhat3.reshape(x.shape)).sum(dims) if nw else None
    return gx, gw, g.sum(dims) if nb else None
