"""The collectives tensor parallelism puts in the graph, each an autograd Function."""

from __future__ import annotations

from typing import Any

from ...autograd.function import Function
from ...backend import array_module
from ...tensor.tensor import Tensor, wrap
from ..backend_base import Backend
from ..reduce_op import ReduceOp
from .placement_types import chunk_bounds


def _summed(arr: Any, pg: Backend) -> Any:
    out = array_module(arr).ascontiguousarray(arr).copy()
    pg.all_reduce(out, ReduceOp.SUM).wait()
    return out


class _AllReduceSum(Function):
    """Forward: sum the partial outputs of every rank; backward: the identity (each rank's
    partial output fed the sum with weight 1)."""

    @staticmethod
    def forward(ctx: Any, x: Tensor, pg: Backend) -> Any:
        return _summed(x._data, pg)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Tensor, None]:
        return g, None


class _IdentityAllReduceBackward(Function):
    """Forward: the identity on a replicated input; backward: sum the input gradients every
    rank's shard of the computation gives."""

    @staticmethod
    def forward(ctx: Any, x: Tensor, pg: Backend) -> Any:
        ctx.pg = pg
        return x._data.copy()

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Tensor, None]:
        return wrap(_summed(g._data, ctx.pg)), None


class _AllGather(Function):
    """Forward: the global tensor from every rank's chunk along ``dim`` (``size`` long there);
    backward: this rank's chunk of the (replicated) gradient."""

    @staticmethod
    def forward(ctx: Any, x: Tensor, pg: Backend, dim: int, size: int) -> Any:
        arr = x._data
        xp = array_module(arr)
        step = -(-size // pg.size)
        pad = [(0, 0)] * arr.ndim
        pad[dim] = (0, step - arr.shape[dim])
        local = xp.ascontiguousarray(xp.pad(arr, pad))
        flat = xp.empty((pg.size,) + local.shape, dtype=local.dtype)
        pg.all_gather(flat, local).wait()
        full = xp.concatenate(list(flat), axis=dim)
        ctx.bounds, ctx.dim = chunk_bounds(size, pg.size, pg.rank), dim
        keep = (slice(None),) * dim + (slice(0, size),)
        return xp.ascontiguousarray(full[keep])

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Tensor, None, None, None]:
        start, stop = ctx.bounds
        return g.narrow(ctx.dim, start, stop - start), None, None, None
