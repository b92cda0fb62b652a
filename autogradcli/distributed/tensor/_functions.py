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


def _gathered(arr: Any, pg: Backend, dim: int) -> Any:
    """Every rank's ``arr`` (all of one shape) concatenated along ``dim``."""
    xp = array_module(arr)
    local = xp.ascontiguousarray(arr)
    flat = xp.empty((pg.size,) + local.shape, dtype=local.dtype)
    pg.all_gather(flat, local).wait()
    return xp.concatenate(list(flat), axis=dim)


def _scattered(arr: Any, pg: Backend, dim: int) -> Any:
    """This rank's chunk along ``dim`` of the sum over ranks of ``arr``."""
    n = arr.shape[dim]
    if n % pg.size:
        raise ValueError(
            f"tensor parallel: dim {dim} of size {n} (shape {tuple(arr.shape)}) does not split "
            f"evenly over {pg.size} ranks for the reduce-scatter of a Shard({dim}) layout"
        )
    xp = array_module(arr)
    moved = xp.ascontiguousarray(xp.moveaxis(arr, dim, 0))
    out = xp.empty((n // pg.size,) + moved.shape[1:], dtype=moved.dtype)
    pg.reduce_scatter(out.reshape(-1), moved.reshape(-1), ReduceOp.SUM).wait()
    return xp.ascontiguousarray(xp.moveaxis(out, 0, dim))


class _AllGatherReduceScatterBackward(Function):
    """Forward: the shards along ``dim`` gathered (sequence parallel's input); backward: each
    rank keeps its chunk of the input gradients summed over ranks."""

    @staticmethod
    def forward(ctx: Any, x: Tensor, pg: Backend, dim: int) -> Any:
        ctx.pg, ctx.dim = pg, dim
        return _gathered(x._data, pg, dim)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Tensor, None, None]:
        return wrap(_scattered(g._data, ctx.pg, ctx.dim)), None, None


class _ReduceScatterAllGatherBackward(Function):
    """Forward: the partial outputs summed over ranks, each rank keeping its chunk along ``dim``;
    backward: the gradient chunks gathered."""

    @staticmethod
    def forward(ctx: Any, x: Tensor, pg: Backend, dim: int) -> Any:
        ctx.pg, ctx.dim = pg, dim
        return _scattered(x._data, pg, dim)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Tensor, None, None]:
        return wrap(_gathered(g._data, ctx.pg, ctx.dim)), None, None


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
        full = _gathered(xp.pad(arr, pad), pg, dim)
        ctx.bounds, ctx.dim = chunk_bounds(size, pg.size, pg.rank), dim
        keep = (slice(None),) * dim + (slice(0, size),)
        return xp.ascontiguousarray(full[keep])

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Tensor, None, None, None]:
        start, stop = ctx.bounds
        return g.narrow(ctx.dim, start, stop - start), None, None, None
