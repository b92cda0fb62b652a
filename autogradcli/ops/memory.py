"""Tensor methods about the memory under a tensor: ``storage``, ``untyped_storage``,
``storage_offset``, ``pin_memory`` and ``is_pinned``, with PyTorch's behaviour on a machine
without (or with) an accelerator."""

from __future__ import annotations

from typing import Any

from ..backend import cuda
from ..tensor import storage
from ..tensor.tensor import Tensor
from .conversion import clone


def pin_memory(self: Tensor, device: Any = None) -> Tensor:
    """A copy in page-locked memory for fast host-to-GPU copies; without a GPU PyTorch refuses,
    and so do we. (numpy memory needs no pinning: with a GPU the copy is a plain one.)"""
    if not cuda.is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")
    return clone(self)


def is_pinned(self: Tensor, device: Any = None) -> bool:
    return False


TENSOR_METHODS: dict[str, Any] = {
    "storage": storage.typed_storage,
    "untyped_storage": storage.untyped_storage,
    "storage_offset": storage.storage_offset,
    "pin_memory": pin_memory,
    "is_pinned": is_pinned,
}
