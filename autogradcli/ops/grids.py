"""``meshgrid``: coordinate grids from 1-D tensors, each an expanded view of its input."""

from __future__ import annotations

import warnings
from typing import Any

from ..tensor.tensor import Tensor
from ._util import scalar_type_name
from .join import _check_same_device

__all__ = ["cartesian_prod", "meshgrid"]

_WARNED = [False]  # PyTorch warns once per process when indexing is left out


def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple[Tensor, ...]:
    """Grids of shape ``(len(t0), len(t1), ...)`` (``indexing="ij"``) or with the first two
    dims swapped (``"xy"``, numpy's default); PyTorch's default is "ij", with a warning."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    if indexing is None:
        if not _WARNED[0]:
            _WARNED[0] = True
            warnings.warn(
                "torch.meshgrid: in an upcoming release, it will be required to pass the "
                "indexing argument.",
                UserWarning,
                stacklevel=2,
            )
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(
            f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}'
        )
    for t in tensors:
        if t._data.ndim > 1:
            raise RuntimeError(
                "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got a "
                f"{t._data.ndim}D tensor of shape {list(t._data.shape)} "
                f"({scalar_type_name(t._data.dtype)})"
            )
    if len({t._data.dtype for t in tensors}) > 1:
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    _check_same_device(tensors)
    swap = indexing == "xy" and len(tensors) >= 2
    order = [1, 0, *range(2, len(tensors))] if swap else list(range(len(tensors)))
    ordered = [tensors[i] for i in order]
    shape = [t._data.size for t in ordered]
    grids = []
    for i, t in enumerate(ordered):
        view = [1] * len(shape)
        view[i] = shape[i]
        grids.append(t.reshape(view).expand(*shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """Every combination of one entry from each 1-D tensor, as rows (one tensor: itself)."""
    if len(tensors) == 1:
        return tensors[0]
    from .join import stack

    return stack([g.reshape(-1) for g in meshgrid(*tensors, indexing="ij")], 1)


TENSOR_METHODS: dict[str, Any] = {}
