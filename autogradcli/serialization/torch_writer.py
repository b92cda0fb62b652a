"""Writing PyTorch's zip layout: ``<archive>/data.pkl`` (a protocol-2 pickle whose tensors are
``torch._utils._rebuild_tensor_v2`` calls on storages named by persistent ids), one
``<archive>/data/<key>`` member of raw little-endian bytes per storage (64-byte aligned, as
``torch.save`` aligns them), ``byteorder``, ``version`` and ``.format_version``.

:func:`save_torch` writes tensors and plain containers only, so ``torch.load`` reads the file
with its default ``weights_only=True``; :func:`save_pickled` pickles anything (whole modules,
classes by reference), as ``torch.save(model, path)`` does.
"""

from __future__ import annotations

import io
import os
import pickle
import struct
import types
import zipfile
from collections import OrderedDict
from typing import IO, Any

import numpy as np

from .. import backend
from .._utils.atomic import atomic_open
from ..nn.parameter import Parameter
from ..tensor.dtype import DType
from ..tensor.tensor import Tensor, wrap
from .torch_tensors import STORAGE_NAMES

PathOrFile = str | os.PathLike | IO[bytes]

ALIGNMENT = 64  # torch.save's .storage_alignment


def _stand_in(name: str) -> Any:
    def stand_in(*args: Any) -> Any:  # never called: pickled by the name it stands for
        raise RuntimeError(f"{name} is a name in a pickle, not a function")

    stand_in.__qualname__ = stand_in.__name__ = name.rpartition(".")[2]
    return stand_in


_REBUILD_TENSOR = _stand_in("torch._utils._rebuild_tensor_v2")
_REBUILD_PARAMETER = _stand_in("torch._utils._rebuild_parameter")
_DEVICE = _stand_in("torch.device")


class _StorageType:
    """``torch.<Name>Storage`` in a persistent id."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __reduce__(self) -> str:
        return self.name  # a global: save_global writes torch.<name>


_STORAGE_TYPES = {dt: _StorageType(name) for dt, name in STORAGE_NAMES.items()}
_TORCH_NAMES: dict[int, tuple[str, str]] = {
    id(_REBUILD_TENSOR): ("torch._utils", "_rebuild_tensor_v2"),
    id(_REBUILD_PARAMETER): ("torch._utils", "_rebuild_parameter"),
    id(_DEVICE): ("torch", "device"),
    **{id(st): ("torch", st.name) for st in _STORAGE_TYPES.values()},
}


class _StorageRef:
    """A storage being written: its key and its flat C-ordered host array."""

    def __init__(self, key: str, array: np.ndarray, device: str, root: np.ndarray) -> None:
        self.key, self.array, self.device = key, array, device
        self.root = root  # keeps id(root) from being reused while the file is written


class _Storages:
    """Storages by the array they own, so tensors sharing memory share a storage in the file."""

    def __init__(self) -> None:
        self.refs: dict[int, _StorageRef] = {}

    def view_of(self, arr: np.ndarray, device: str) -> tuple[_StorageRef, int, tuple[int, ...]]:
        """The storage holding ``arr``, the offset and the strides (in elements) of ``arr`` in it."""
        root = arr
        while isinstance(root.base, np.ndarray):
            root = root.base
        found = _place_in(arr, root)
        if found is None:
            root = np.ascontiguousarray(arr).reshape(-1)
            found = (0, tuple(s // arr.itemsize for s in root.reshape(arr.shape).strides))
        ref = self.refs.get(id(root))
        if ref is None:
            flat = root.reshape(-1).astype(root.dtype.newbyteorder("<"), copy=False)
            ref = self.refs[id(root)] = _StorageRef(str(len(self.refs)), flat, device, root)
        return (ref, *found)


def _place_in(arr: np.ndarray, root: np.ndarray) -> tuple[int, tuple[int, ...]] | None:
    """``arr``'s element offset and strides inside the C-contiguous array ``root``, if it is a
    plain strided view of it (same dtype, non-negative strides)."""
    item = arr.itemsize
    if root.dtype != arr.dtype or not root.flags.c_contiguous or arr.size == 0:
        return None
    start = arr.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    if start < 0 or start % item or any(s < 0 or s % item for s in arr.strides):
        return None
    offset, strides = start // item, tuple(s // item for s in arr.strides)
    end = offset + sum((n - 1) * s for n, s in zip(arr.shape, strides)) + 1
    return (offset, strides) if end <= root.size else None


class _Pickler(pickle._Pickler):  # the Python implementation: its save_global can name torch's
    """Pickles tensors as ``torch.save`` does, with storages as persistent ids."""

    def __init__(self, file: IO[bytes], storages: _Storages) -> None:
        super().__init__(file, protocol=2)
        self.storages = storages

    def persistent_id(self, obj: Any) -> Any:
        if isinstance(obj, _StorageRef):
            stype = _STORAGE_TYPES[obj.array.dtype.newbyteorder("=")]
            return ("storage", stype, obj.key, obj.device, int(obj.array.size))
        return None

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, Parameter):
            plain = wrap(obj._data)
            return (_REBUILD_PARAMETER, (plain, obj.requires_grad, OrderedDict()))
        if isinstance(obj, Tensor):
            host = backend.to_numpy(obj._data)
            if host.dtype not in _STORAGE_TYPES:
                raise TypeError(f"cannot save a tensor of dtype {host.dtype} in PyTorch's format")
            ref, offset, strides = self.storages.view_of(host, str(obj.device))
            args = (ref, offset, tuple(host.shape), strides, obj.requires_grad, OrderedDict())
            return (_REBUILD_TENSOR, args)
        if isinstance(obj, backend.Device):
            return (_DEVICE, (str(obj),))
        return NotImplemented

    def save_global(self, obj: Any, name: Any = None) -> None:
        if isinstance(obj, DType):
            torch_name = ("torch", obj.name)
        else:
            torch_name = _TORCH_NAMES.get(id(obj))
        if torch_name is None:
            super().save_global(obj, name)
            return
        self.write(pickle.GLOBAL + f"{torch_name[0]}\n{torch_name[1]}\n".encode())
        self.memoize(obj)

    dispatch = dict(pickle._Pickler.dispatch)
    dispatch[types.FunctionType] = save_global


def write_torch_file(obj: Any, f: PathOrFile) -> None:
    """Pickle ``obj`` into PyTorch's zip layout at ``f`` (a path, written atomically, or a file)."""
    storages = _Storages()
    buf = io.BytesIO()
    _Pickler(buf, storages).dump(obj)
    if not isinstance(f, (str, os.PathLike)):
        _write_zip(f, "archive", buf.getvalue(), storages)
        return
    stem = os.path.splitext(os.path.basename(os.fspath(f)))[0]
    archive = stem if stem.isidentifier() else "archive"
    with atomic_open(f, "wb") as out:
        _write_zip(out, archive, buf.getvalue(), storages)


def _write_zip(out: IO[bytes], archive: str, pickled: bytes, storages: _Storages) -> None:
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as zf:
        zf.writestr(f"{archive}/data.pkl", pickled)
        zf.writestr(f"{archive}/.format_version", "1")
        zf.writestr(f"{archive}/.storage_alignment", str(ALIGNMENT))
        zf.writestr(f"{archive}/byteorder", "little")
        for ref in storages.refs.values():
            _write_aligned(zf, f"{archive}/data/{ref.key}", ref.array)
        zf.writestr(f"{archive}/version", "3\n")


def _write_aligned(zf: zipfile.ZipFile, name: str, arr: np.ndarray) -> None:
    """Write ``arr``'s bytes as member ``name``, its data starting on an ``ALIGNMENT`` boundary
    (padding in a local-header extra field, as PyTorch's writer does)."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    big = arr.nbytes >= zipfile.ZIP64_LIMIT
    if not big:
        start = zf.fp.tell() + 30 + len(name.encode()) + 4  # header, name, extra-field header
        pad = -start % ALIGNMENT
        info.extra = struct.pack("<HH", 0x4246, pad) + b"Z" * pad
    with zf.open(info, "w", force_zip64=big) as member:
        member.write(
            memoryview(np.ascontiguousarray(arr).reshape(-1).view(np.uint8))
        )  # bfloat16 too


def save_torch(obj: Any, path: PathOrFile) -> None:
    """Write ``obj`` (Tensors in nested dicts/lists/tuples of plain values: a state dict, an
    optimizer's) in PyTorch's zip layout, which ``torch.load(path)`` reads with its default
    ``weights_only=True``."""
    _check_weights_only(obj)
    write_torch_file(obj, path)


_PLAIN = (str, int, float, bool, bytes, type(None), DType, backend.Device)


def _check_weights_only(obj: Any) -> None:
    stack = [(obj, "obj")]
    while stack:
        node, where = stack.pop()
        if isinstance(node, (Tensor, *_PLAIN)):
            continue
        if isinstance(node, dict):
            for key, value in node.items():
                if not isinstance(key, (str, int, float, bool, type(None), tuple)):
                    raise TypeError(f"save_torch cannot save the dict key {key!r} at {where}")
                stack.append((value, f"{where}[{key!r}]"))
        elif isinstance(node, (list, tuple)):
            stack.extend((v, f"{where}[{i}]") for i, v in enumerate(node))
        else:
            raise TypeError(
                f"save_torch writes Tensors in dicts, lists and tuples of plain values (what "
                f"torch.load reads with weights_only=True); {where} is a {type(node).__name__}"
            )
