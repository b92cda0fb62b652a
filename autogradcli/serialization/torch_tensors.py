"""PyTorch's storages and tensor rebuild functions, as autogradcli builds them from a ``.pt`` file.

A storage is a flat array of one dtype; a tensor is a strided view of it (offset, size, stride),
so tensors sharing a storage in the file share memory here too. Every size, stride and offset is
checked against the storage before a view is made: a hostile file cannot read outside it.
"""

from __future__ import annotations

import math
from typing import Any

import ml_dtypes
import numpy as np

from ..nn.parameter import Parameter
from ..tensor import dtype as dtypes
from ..tensor.tensor import Tensor, wrap
from .format import SerializationError, place
from .npy_member import check_memory

BFLOAT16 = np.dtype(ml_dtypes.bfloat16)

# torch.<Name>Storage -> element dtype (UntypedStorage holds bytes)
STORAGE_DTYPES: dict[str, np.dtype] = {
    name: np.dtype(dt)
    for name, dt in {
        "DoubleStorage": np.float64,
        "FloatStorage": np.float32,
        "HalfStorage": np.float16,
        "BFloat16Storage": ml_dtypes.bfloat16,
        "LongStorage": np.int64,
        "IntStorage": np.int32,
        "ShortStorage": np.int16,
        "CharStorage": np.int8,
        "ByteStorage": np.uint8,
        "BoolStorage": np.bool_,
        "UntypedStorage": np.uint8,
        "ComplexFloatStorage": np.complex64,
        "ComplexDoubleStorage": np.complex128,
    }.items()
}
# numpy dtype -> the storage type torch.save names for it (the writer's table)
STORAGE_NAMES: dict[np.dtype, str] = {
    dt: name for name, dt in STORAGE_DTYPES.items() if name != "UntypedStorage"
}

# torch.<name> dtype objects -> autogradcli's
TORCH_DTYPES: dict[str, dtypes.DType] = {
    "float64": dtypes.float64,
    "double": dtypes.float64,
    "float32": dtypes.float32,
    "float": dtypes.float32,
    "float16": dtypes.float16,
    "half": dtypes.float16,
    "bfloat16": dtypes.bfloat16,
    "int64": dtypes.int64,
    "long": dtypes.int64,
    "int32": dtypes.int32,
    "int": dtypes.int32,
    "int16": dtypes.int16,
    "short": dtypes.int16,
    "int8": dtypes.int8,
    "uint8": dtypes.uint8,
    "bool": dtypes.bool_,
}


class StorageType:
    """``torch.FloatStorage`` and friends as they appear in a pickle: only their dtype matters."""

    __slots__ = ("dtype", "name")

    def __init__(self, name: str) -> None:
        self.name = name
        self.dtype = STORAGE_DTYPES[name]

    def __repr__(self) -> str:
        return f"torch.{self.name}"


class Storage:
    """One storage of a file: ``numel`` elements of ``dtype``; ``array`` once its bytes are read."""

    __slots__ = ("array", "dtype", "key", "location", "numel")

    def __init__(self, key: str, dtype: np.dtype, numel: int, location: str) -> None:
        self.key, self.dtype, self.numel, self.location = key, dtype, numel, location
        self.array: np.ndarray | None = None

    def fill(self, data: bytearray | bytes, byteorder: str = "little") -> None:
        """Take the storage's raw bytes (exactly ``numel`` elements, in ``byteorder``)."""
        dt = self.dtype.newbyteorder("<" if byteorder == "little" else ">")
        arr = np.frombuffer(data, dtype=dt, count=self.numel)
        if not dt.isnative and dt.itemsize > 1:
            arr = arr.astype(self.dtype)
        self.array = arr


def storage_from_pid(pid: Any, storages: dict[str, Storage]) -> Storage:
    """The storage a persistent id ``('storage', type, key, location, numel[, view])`` names, one
    object per key; ``ValueError`` for anything else."""
    if not isinstance(pid, tuple) or len(pid) not in (5, 6) or pid[0] != "storage":
        raise ValueError(f"unknown persistent id {str(pid)[:80]}")
    stype, key, location, numel = pid[1:5]
    if not isinstance(stype, StorageType):
        raise ValueError(f"a storage names the type {stype!r}, not a torch storage type")
    if not (isinstance(key, str) and isinstance(location, str)):
        raise ValueError(f"a storage has an invalid key or location: {str(pid)[:80]}")
    if not isinstance(numel, int) or isinstance(numel, bool) or numel < 0:
        raise ValueError(f"storage {key!r} has an invalid size {numel!r}")
    if len(pid) == 6 and pid[5] is not None:
        raise ValueError(f"storage {key!r} is a storage view (torch < 0.4), not supported")
    found = storages.get(key)
    if found is None:
        found = storages[key] = Storage(key, stype.dtype, numel, location)
    elif (found.dtype, found.numel) != (stype.dtype, numel):
        raise ValueError(f"storage {key!r} is named with two different types or sizes")
    return found


def _ints(value: Any, what: str) -> tuple[int, ...]:
    if not isinstance(value, (tuple, list)) or not all(
        isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value
    ):
        raise ValueError(f"a tensor has an invalid {what} {str(value)[:80]}")
    return tuple(value)


def strided_view(storage: Storage, offset: Any, size: Any, stride: Any) -> np.ndarray:
    """The view ``(offset, size, stride)`` of a filled storage, after checking it lies inside."""
    size, stride = _ints(size, "size"), _ints(stride, "stride")
    (offset,) = _ints((offset,), "storage offset")
    if len(size) != len(stride):
        raise ValueError(f"a tensor has size {list(size)} but stride {list(stride)}")
    if 0 in size:
        return np.empty(size, dtype=storage.dtype)
    check_memory(f"a tensor of size {list(size)}", math.prod(size) * storage.dtype.itemsize)
    end = offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1
    if end > storage.numel:
        raise ValueError(
            f"a tensor of size {list(size)}, stride {list(stride)} and offset {offset} needs "
            f"{end} elements of storage {storage.key!r}, which holds {storage.numel}"
        )
    assert storage.array is not None
    item = storage.dtype.itemsize
    return np.lib.stride_tricks.as_strided(
        storage.array[offset:], shape=size, strides=[s * item for s in stride]
    )


class TensorBuilder:
    """The rebuild functions of one load (``torch._utils._rebuild_tensor_v2`` and friends).

    Tensors whose storage is not read yet (the legacy format stores data after the pickle) are
    made empty and filled by :meth:`finish`.
    """

    def __init__(self, map_location: Any = None) -> None:
        self.map_location = map_location
        self.pending: list[tuple[Tensor, Storage, Any, Any, Any]] = []

    def _array(self, storage: Storage, offset: Any, size: Any, stride: Any, t: Any) -> Any:
        arr = strided_view(storage, offset, size, stride)
        try:
            dtypes.from_numpy_dtype(arr.dtype)
        except TypeError:
            raise SerializationError(
                f"the file holds a tensor of dtype {arr.dtype} (storage {storage.key!r}), "
                "which autogradcli does not have"
            ) from None
        return place(arr, storage.location, self.map_location)

    def rebuild_tensor_v2(
        self,
        storage: Any,
        storage_offset: Any,
        size: Any,
        stride: Any,
        requires_grad: Any = False,
        backward_hooks: Any = None,
        metadata: Any = None,
    ) -> Tensor:
        """``torch._utils._rebuild_tensor_v2``: a tensor viewing ``storage``."""
        if not isinstance(storage, Storage):
            raise ValueError(f"a tensor's storage is a {type(storage).__name__}, not a storage")
        t = wrap(np.empty((0,), dtype=storage.dtype))
        if storage.array is None:
            _ints(size, "size"), _ints(stride, "stride")
            self.pending.append((t, storage, storage_offset, size, stride))
        else:
            t._data = self._array(storage, storage_offset, size, stride, t)
        if requires_grad is True and t._data.dtype.kind in "fV":
            t.requires_grad = True
        return t

    def rebuild_tensor(self, storage: Any, storage_offset: Any, size: Any, stride: Any) -> Tensor:
        """``torch._utils._rebuild_tensor`` (older files)."""
        return self.rebuild_tensor_v2(storage, storage_offset, size, stride)

    def rebuild_parameter(
        self, data: Any, requires_grad: Any = True, backward_hooks: Any = None, state: Any = None
    ) -> Parameter:
        """``torch._utils._rebuild_parameter[_with_state]``: a Parameter sharing ``data``."""
        if not isinstance(data, Tensor):
            raise ValueError(f"a Parameter's data is a {type(data).__name__}, not a tensor")
        param = Parameter(data, requires_grad=requires_grad is True and data.is_floating_point())
        for t, *spec in list(self.pending):
            if t is data:
                self.pending.append((param, *spec))
        return param

    def rebuild_from_type_v2(self, func: Any, new_type: Any, args: Any, state: Any) -> Any:
        """``torch._tensor._rebuild_from_type_v2``: ``func(*args)``, made a Parameter if asked."""
        if func not in (self.rebuild_tensor_v2, self.rebuild_tensor, self.rebuild_parameter):
            raise ValueError(f"_rebuild_from_type_v2 of {func!r}")
        out = func(*args)
        if new_type is Parameter and not isinstance(out, Parameter):
            out = self.rebuild_parameter(out, out.requires_grad)
        return out

    def finish(self) -> None:
        """Fill the tensors made before their storage was read."""
        for t, storage, offset, size, stride in self.pending:
            if storage.array is None:
                raise ValueError(f"storage {storage.key!r} has no data in the file")
            t._data = self._array(storage, offset, size, stride, t)
        self.pending.clear()


def check_storage_bytes(storage: Storage, available: int, where: str) -> int:
    """The byte size of ``storage``; ``ValueError`` if the file holds fewer bytes (a storage
    claiming more elements than the file has)."""
    nbytes = storage.dtype.itemsize * storage.numel
    if nbytes > available:
        raise ValueError(
            f"storage {storage.key!r} claims {storage.numel} elements of {storage.dtype} "
            f"({nbytes} bytes) but {where} holds only {available} bytes"
        )
    return nbytes
