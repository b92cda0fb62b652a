"""``Tensor.storage()``/``untyped_storage()``: a read-only description of the memory a tensor
views (its root array): size, data pointer, element size, dtype, device, values."""

from __future__ import annotations

import warnings
from typing import Any

from ..backend import device_of, is_cpu_array, to_numpy
from ..tensor import dtype as dtypes
from ..tensor.tensor import Tensor

__all__: list[str] = []


def _root(arr: Any) -> Any:
    while isinstance(arr.base, type(arr)):
        arr = arr.base
    return arr


def _pointer(arr: Any) -> int:
    return int(arr.__array_interface__["data"][0]) if is_cpu_array(arr) else int(arr.data.ptr)


class UntypedStorage:
    """The bytes under a tensor (``tensor.untyped_storage()``)."""

    def __init__(self, root: Any) -> None:
        self._root = root

    def nbytes(self) -> int:
        return int(self._root.nbytes)

    def size(self) -> int:
        return self.nbytes()

    def __len__(self) -> int:
        return self.nbytes()

    def data_ptr(self) -> int:
        return _pointer(self._root)

    def element_size(self) -> int:
        return 1

    @property
    def device(self) -> Any:
        return device_of(self._root)


class TypedStorage(UntypedStorage):
    """The elements under a tensor (``tensor.storage()``, deprecated in PyTorch)."""

    def size(self) -> int:
        return int(self._root.size)

    def __len__(self) -> int:
        return self.size()

    def element_size(self) -> int:
        return int(self._root.itemsize)

    @property
    def dtype(self) -> dtypes.DType:
        return dtypes.from_numpy_dtype(self._root.dtype)

    def tolist(self) -> list[Any]:
        return to_numpy(self._root).reshape(-1).tolist()

    def __getitem__(self, index: int) -> Any:
        return to_numpy(self._root).reshape(-1)[index].item()

    def untyped(self) -> UntypedStorage:
        return UntypedStorage(self._root)


def storage(self: Tensor) -> TypedStorage:
    """The memory this tensor views, element by element (PyTorch's deprecation warning)."""
    warnings.warn(
        "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will "
        "be the only storage class. This should only matter to you if you are using storages "
        "directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead of "
        "tensor.storage()",
        UserWarning,
        stacklevel=2,
    )
    return TypedStorage(_root(self._data))


def untyped_storage(self: Tensor) -> UntypedStorage:
    """The bytes of memory this tensor views."""
    return UntypedStorage(_root(self._data))


TENSOR_METHODS: dict[str, Any] = {"storage": storage, "untyped_storage": untyped_storage}
