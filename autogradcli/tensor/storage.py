"""``Tensor.untyped_storage()``, ``storage()`` and ``storage_offset()``: the memory under a tensor
(the numpy array that owns it, which views share), as PyTorch exposes its storages."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import backend

if TYPE_CHECKING:
    from .dtype import DType
    from .tensor import Tensor

_TYPED_WARNED = [False]


def _owner(arr: Any) -> Any:
    """The array at the bottom of ``arr``'s chain of views: the memory it and its views share."""
    while isinstance(getattr(arr, "base", None), type(arr)):
        arr = arr.base
    return arr


def _address(arr: Any) -> int:
    if backend.is_cpu_array(arr):
        return int(arr.__array_interface__["data"][0])
    return int(arr.data.ptr)


def array_offset(arr: Any) -> int:
    """Elements between the start of the memory ``arr`` views and its first element."""
    owner = _owner(arr)
    return 0 if owner is arr else (_address(arr) - _address(owner)) // arr.itemsize


def storage_offset(t: Tensor) -> int:
    """Where ``t``'s first element is in its storage, counted in elements."""
    return array_offset(t._data)


class UntypedStorage:
    """The bytes under a tensor: ``nbytes``, ``data_ptr``, ``device``, ``tolist`` of byte values."""

    def __init__(self, owner: Any) -> None:
        self._owner = owner

    def nbytes(self) -> int:
        return int(self._owner.nbytes)

    size = nbytes

    def __len__(self) -> int:
        return self.nbytes()

    def element_size(self) -> int:
        return 1

    def data_ptr(self) -> int:
        return _address(self._owner)

    @property
    def device(self) -> Any:
        return backend.device_of(self._owner)

    def _bytes(self) -> np.ndarray:
        return backend.to_numpy(self._owner).reshape(-1).view(np.uint8)

    def tolist(self) -> list[int]:
        return self._bytes().tolist()

    def __getitem__(self, index: int) -> int:
        return int(self._bytes()[index])

    def is_shared(self) -> bool:
        from ..backend import shared_memory

        return shared_memory.find(self._owner) is not None


class TypedStorage:
    """The elements under a tensor, of its dtype (deprecated in PyTorch, with its warning)."""

    def __init__(self, owner: Any, dtype: DType) -> None:
        self._owner, self.dtype = owner, dtype

    def _untyped(self) -> UntypedStorage:
        return UntypedStorage(self._owner)

    def untyped(self) -> UntypedStorage:
        return self._untyped()

    def size(self) -> int:
        return int(self._owner.size)

    def __len__(self) -> int:
        return self.size()

    def element_size(self) -> int:
        return self.dtype.itemsize

    def nbytes(self) -> int:
        return int(self._owner.nbytes)

    def data_ptr(self) -> int:
        return _address(self._owner)

    @property
    def device(self) -> Any:
        return backend.device_of(self._owner)

    def tolist(self) -> list[Any]:
        return backend.to_numpy(self._owner).reshape(-1).tolist()

    def __getitem__(self, index: int) -> Any:
        return backend.to_numpy(self._owner).reshape(-1)[index].item()

    def __iter__(self) -> Any:
        return iter(self.tolist())

    def is_shared(self) -> bool:
        return self._untyped().is_shared()

    def __repr__(self) -> str:
        body = "\n".join(f" {v}" for v in self.tolist())
        kind = f"dtype={self.dtype}, device={self.device}"
        return f"{body}\n[autogradcli.storage.TypedStorage({kind}) of size {self.size()}]"


def untyped_storage(t: Tensor) -> UntypedStorage:
    return UntypedStorage(_owner(t._data))


def typed_storage(t: Tensor) -> TypedStorage:
    """``Tensor.storage()``: PyTorch's deprecated TypedStorage, with its one-time warning."""
    if not _TYPED_WARNED[0]:
        _TYPED_WARNED[0] = True
        warnings.warn(
            "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will "
            "be the only storage class. This should only matter to you if you are using storages "
            "directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead "
            "of tensor.storage()",
            UserWarning,
            stacklevel=2,
        )
    return TypedStorage(_owner(t._data), t.dtype)
