"""``unique``: the distinct values of a tensor (or its distinct slices along ``dim``)."""

from __future__ import annotations

from typing import Any

from ..tensor.tensor import Tensor, wrap
from ._util import array_module, wrap_dim

__all__ = ["unique"]


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


TENSOR_METHODS: dict[str, Any] = {"unique": unique}
