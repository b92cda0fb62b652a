"""The collectives of ``torch.distributed`` on tensors: checks, then the backend on the arrays.

Tensors are updated in place as PyTorch does (``all_reduce``, ``broadcast``, the outputs of the
gathers and scatters); ``async_op=True`` returns a ``Work`` whose ``wait()`` completes the op.
Each writes through the tensor's array and bumps its version, so autograd sees the change.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..backend import array_module
from ..tensor.tensor import Tensor
from .backend_base import Backend, Pending
from .process_group import _require
from .reduce_op import ReduceOp


class Work:
    """``torch.distributed.Work``: an operation in flight."""

    def __init__(self, pending: Pending, after: Any = None) -> None:
        self._pending = pending
        self._after = after

    def is_completed(self) -> bool:
        return self._pending.is_completed()

    def wait(self, timeout: Any = None) -> bool:
        self._pending.wait()
        if self._after is not None:
            after, self._after = self._after, None
            after()
        return True


def _finish(pending: Pending, async_op: bool, after: Any = None) -> Work | None:
    if async_op:
        return Work(pending, after)
    pending.wait()
    if after is not None:
        after()
    return None


def _tensor(t: Any, name: str, what: str = "tensor") -> Tensor:
    if not isinstance(t, Tensor):
        raise TypeError(f"{name}: {what} must be a Tensor, got {type(t).__name__}")
    if not t._data.flags.c_contiguous:
        raise ValueError(f"{name}: Tensors must be contiguous ({what} of shape {tuple(t.shape)})")
    return t


def _op(op: Any, name: str) -> ReduceOp:
    try:
        return ReduceOp(op)
    except ValueError:
        raise ValueError(
            f"{name}: unsupported reduce op {op!r}; use ReduceOp.SUM, AVG, PRODUCT, MIN or MAX"
        ) from None


def _src(pg: Backend, src: int, name: str) -> int:
    if not 0 <= src < pg.size:
        raise ValueError(f"{name}: invalid root rank: {src} (world size {pg.size})")
    return src


def _touch(*tensors: Tensor) -> None:
    for t in tensors:
        t._bump_version()


def all_reduce(
    tensor: Tensor, op: ReduceOp = ReduceOp.SUM, group: Any = None, async_op: bool = False
) -> Work | None:
    """Reduce ``tensor`` across ranks with ``op``; every rank's tensor holds the result (in place)."""
    pg = _require(group)
    t = _tensor(tensor, "all_reduce")
    pending = pg.all_reduce(t._data, _op(op, "all_reduce"))
    return _finish(pending, async_op, lambda: _touch(t))


def broadcast(
    tensor: Tensor, src: int, group: Any = None, async_op: bool = False, group_src: Any = None
) -> Work | None:
    """Copy rank ``src``'s ``tensor`` into every rank's ``tensor`` (in place)."""
    pg = _require(group)
    t = _tensor(tensor, "broadcast")
    pending = pg.broadcast(t._data, _src(pg, src, "broadcast"))
    return _finish(pending, async_op, lambda: _touch(t))


def _same_meta(t: Tensor, ref: Tensor, name: str, index: int, what: str) -> None:
    if tuple(t.shape) != tuple(ref.shape):
        raise ValueError(
            f"{name}: invalid tensor size at index {index} (expected {tuple(ref.shape)}, got "
            f"{tuple(t.shape)}) in {what}"
        )
    if t.dtype != ref.dtype:
        raise TypeError(
            f"{name}: {what}[{index}] has dtype {t.dtype}, the input has {ref.dtype}; they must match"
        )


def all_gather(
    tensor_list: Sequence[Tensor], tensor: Tensor, group: Any = None, async_op: bool = False
) -> Work | None:
    """Fill ``tensor_list[r]`` with rank r's ``tensor``, on every rank."""
    pg = _require(group)
    t = _tensor(tensor, "all_gather")
    outs = list(tensor_list)
    if len(outs) != pg.size:
        raise ValueError(
            f"all_gather: invalid output tensor list (expected length {pg.size}, got {len(outs)})"
        )
    for i, o in enumerate(outs):
        _tensor(o, "all_gather", f"tensor_list[{i}]")
        _same_meta(o, t, "all_gather", i, "tensor_list")
    xp = array_module(t._data)
    flat = xp.empty((pg.size,) + t._data.shape, dtype=t._data.dtype)
    pending = pg.all_gather(flat, t._data)

    def after() -> None:
        for i, o in enumerate(outs):
            o._data[...] = flat[i]
            o._bump_version()

    return _finish(pending, async_op, after)


def all_gather_into_tensor(
    output_tensor: Tensor, input_tensor: Tensor, group: Any = None, async_op: bool = False
) -> Work | None:
    """Every rank's ``input_tensor`` concatenated (along dim 0) or stacked into ``output_tensor``."""
    pg = _require(group)
    t = _tensor(input_tensor, "all_gather_into_tensor", "input_tensor")
    out = _tensor(output_tensor, "all_gather_into_tensor", "output_tensor")
    if out.numel() != t.numel() * pg.size:
        raise ValueError(
            f"all_gather_into_tensor: output tensor size must be equal to world_size times input "
            f"tensor size: output {tuple(out.shape)} ({out.numel()} elements), input "
            f"{tuple(t.shape)} ({t.numel()} elements), world size {pg.size}"
        )
    if out.dtype != t.dtype:
        raise TypeError(
            f"all_gather_into_tensor: output dtype {out.dtype} differs from input dtype {t.dtype}"
        )
    pending = pg.all_gather(out._data.reshape(-1), t._data)
    return _finish(pending, async_op, lambda: _touch(out))


def reduce_scatter_tensor(
    output: Tensor,
    input: Tensor,
    op: ReduceOp = ReduceOp.SUM,
    group: Any = None,
    async_op: bool = False,
) -> Work | None:
    """Reduce ``input`` across ranks and give rank r chunk r (``input`` split evenly along dim 0)."""
    pg = _require(group)
    out = _tensor(output, "reduce_scatter_tensor", "output")
    t = _tensor(input, "reduce_scatter_tensor", "input")
    if t.numel() != out.numel() * pg.size:
        raise ValueError(
            f"reduce_scatter_tensor: input tensor must be the same size as output size times world "
            f"size: input {tuple(t.shape)} ({t.numel()} elements), output {tuple(out.shape)} "
            f"({out.numel()} elements), world size {pg.size}"
        )
    if out.dtype != t.dtype:
        raise TypeError(
            f"reduce_scatter_tensor: output dtype {out.dtype} differs from input dtype {t.dtype}"
        )
    pending = pg.reduce_scatter(
        out._data.reshape(-1), t._data.reshape(-1), _op(op, "reduce_scatter_tensor")
    )
    return _finish(pending, async_op, lambda: _touch(out))


def reduce_scatter(
    output: Tensor,
    input_list: Sequence[Tensor],
    op: ReduceOp = ReduceOp.SUM,
    group: Any = None,
    async_op: bool = False,
) -> Work | None:
    """Rank r's ``output`` gets the reduction over ranks of ``input_list[r]``."""
    pg = _require(group)
    out = _tensor(output, "reduce_scatter", "output")
    ins = list(input_list)
    if len(ins) != pg.size:
        raise ValueError(
            f"reduce_scatter: invalid input tensor list (expected length {pg.size}, got {len(ins)})"
        )
    for i, x in enumerate(ins):
        _tensor(x, "reduce_scatter", f"input_list[{i}]")
        _same_meta(x, out, "reduce_scatter", i, "input_list")
    xp = array_module(out._data)
    flat = xp.concatenate([x._data.reshape(-1) for x in ins]) if ins else out._data[:0]
    pending = pg.reduce_scatter(out._data.reshape(-1), flat, _op(op, "reduce_scatter"))
    return _finish(pending, async_op, lambda: _touch(out))


def barrier(group: Any = None, async_op: bool = False, device_ids: Any = None) -> Work | None:
    """Wait until every rank has reached the barrier."""
    pg = _require(group)
    return _finish(pg.barrier(), async_op)


__all__ = [
    "Work",
    "all_gather",
    "all_gather_into_tensor",
    "all_reduce",
    "barrier",
    "broadcast",
    "reduce_scatter",
    "reduce_scatter_tensor",
]
