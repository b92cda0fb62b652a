"""``Tensor.share_memory_`` and ``is_shared``: a CPU tensor's array moved into memory that other
processes map (backend/shared_memory.py), in place, so a model shared before starting worker
processes is trained by all of them (hogwild)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..backend import shared_memory

if TYPE_CHECKING:
    from .tensor import Tensor


def is_shared(t: Tensor) -> bool:
    """True when the data is in shared memory; always True on CUDA, as in PyTorch."""
    if t.device.type == "cuda":
        return True
    return shared_memory.find(t._data) is not None


def share_memory_(t: Tensor) -> Tensor:
    """Move ``t``'s data to shared memory (a no-op on CUDA or when already shared)."""
    if is_shared(t):
        return t
    root = t
    while root._base is not None:
        root = root._base
    if root is t or not root._data.flags.c_contiguous:
        t._data = shared_memory.shared_copy(t._data)
        return t
    # a view: share the whole base, then point the view at the same place in the new memory
    offset = t._data.__array_interface__["data"][0] - root._data.__array_interface__["data"][0]
    root._data = shared_memory.shared_copy(root._data)
    segment, start = shared_memory.find(root._data)
    t._data = shared_memory.array_in(
        segment, start + offset, t._data.shape, t._data.strides, t._data.dtype
    )
    return t
