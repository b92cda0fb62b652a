"""``unique``: the distinct values of a tensor (or its distinct slices along ``dim``)."""

from __future__ import annotations

from typing import Any

from ..tensor.tensor import Tensor, wrap
from ._util import array_module, wrap_dim

__all__ = ["unique", "unique_consecutive"]


def unique(
    input: Tensor,
    sorted: bool = True,
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: int | None = None,
) -> Any:
    """Sorted distinct values; with ``return_inverse`` each element's index into them, with
    ``return_counts`` how often each occurs (both int64), as PyTorch returns them."""
    arr = input._data
    xp = array_module(arr)
    axis = None if dim is None else wrap_dim(int(dim), arr.ndim)
    values, inverse, counts = xp.unique(arr, return_inverse=True, return_counts=True, axis=axis)
    out = [wrap(values)]
    if return_inverse:
        shape = arr.shape if axis is None else (arr.shape[axis],)
        out.append(wrap(inverse.reshape(shape).astype("int64")))
    if return_counts:
        out.append(wrap(counts.astype("int64")))
    return out[0] if len(out) == 1 else tuple(out)


def unique_consecutive(
    input: Tensor, return_inverse: bool = False, return_counts: bool = False, dim: int | None = None
) -> Any:
    """``input`` with each run of equal consecutive values (or slices along ``dim``) kept once;
    ``return_inverse``: each element's run, ``return_counts``: each run's length."""
    arr = input._data
    xp = array_module(arr)
    if dim is None:
        flat = arr.reshape(-1)
        starts = xp.ones(flat.shape[0], dtype=bool)
        starts[1:] = flat[1:] != flat[:-1]
        values = flat[starts]
        inverse_shape = arr.shape
    else:
        axis = wrap_dim(int(dim), arr.ndim)
        moved = xp.moveaxis(arr, axis, 0).reshape(arr.shape[axis], -1)
        starts = xp.ones(moved.shape[0], dtype=bool)
        starts[1:] = (moved[1:] != moved[:-1]).any(axis=1)
        values = xp.compress(starts, arr, axis=axis)
        inverse_shape = (arr.shape[axis],)
    out = [wrap(values)]
    if return_inverse:
        out.append(wrap((xp.cumsum(starts) - 1).reshape(inverse_shape).astype("int64")))
    if return_counts:
        edges = xp.concatenate([xp.nonzero(starts)[0], xp.asarray([starts.shape[0]])])
        out.append(wrap(xp.diff(edges).astype("int64")))
    return out[0] if len(out) == 1 else tuple(out)


def sum_to_size(input: Tensor, *size: Any) -> Tensor:
    """``input`` summed down to ``size`` (which it must broadcast to)."""
    from ..autograd.gradient_ops import sum_to

    shape = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (list, tuple)) else size
    return sum_to(input, tuple(int(s) for s in shape))


TENSOR_METHODS: dict[str, Any] = {
    "unique": unique,
    "unique_consecutive": unique_consecutive,
    "sum_to_size": sum_to_size,
}
