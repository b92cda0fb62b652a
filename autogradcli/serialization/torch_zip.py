"""Reading PyTorch's zip layout (``torch.save`` since 1.6): ``<archive>/data.pkl`` unpickled
(with the allow-list unless ``weights_only=False``), each storage read from
``<archive>/data/<key>`` after its size is checked against the zip directory, so a storage
claiming more elements than the file holds, or a member inflating like a zip bomb, is refused
before anything is allocated or inflated."""

from __future__ import annotations

import io
import os
import pickletools
import struct
import zipfile
from typing import IO, Any

import numpy as np

from .npy_member import check_inflation, check_memory, read_exactly
from .safe_globals import allowed_by_user
from .torch_pickle import fix_name, torch_globals, unpickler
from .torch_tensors import Storage, TensorBuilder, check_storage_bytes, storage_from_pid

MAX_PICKLE_BYTES = 1 << 30


def torch_archive_prefix(names: list[str]) -> str | None:
    """``"<archive>/"`` if ``names`` are PyTorch's zip layout (a top-level folder's data.pkl)."""
    for name in names:
        if name.endswith("/data.pkl") and name.count("/") == 1:
            return name[: -len("data.pkl")]
    return None


def load_torch_zip(
    zf: zipfile.ZipFile,
    prefix: str,
    map_location: Any,
    weights_only: bool,
    where: str,
    mmap_path: str | None = None,
) -> Any:
    """The object in a PyTorch zip checkpoint whose records are under ``prefix``; with
    ``mmap_path`` (the file's path) uncompressed storages are mapped copy-on-write, not read."""
    byteorder = "little"
    if f"{prefix}byteorder" in zf.namelist():
        with zf.open(f"{prefix}byteorder") as member:
            byteorder = member.read(16).decode("ascii", "replace").strip()
        if byteorder not in ("little", "big"):
            raise ValueError(f"unknown byte order {byteorder[:20]!r}")
    storages: dict[str, Storage] = {}

    def persistent_load(pid: Any) -> Storage:
        storage = storage_from_pid(pid, storages)
        if storage.array is None and mmap_path is not None and byteorder == "little":
            storage.array = _map_storage(zf, prefix, storage, mmap_path)
        if storage.array is None:
            storage.fill(_read_storage(zf, prefix, storage), byteorder)
        return storage

    builder = TensorBuilder(map_location)
    pickled = _read_small(zf, f"{prefix}data.pkl")
    result = unpickler(io.BytesIO(pickled), builder, persistent_load, weights_only).load()
    builder.finish()
    return result


def _read_small(zf: zipfile.ZipFile, name: str) -> bytes:
    info = zf.getinfo(name)
    if info.file_size > MAX_PICKLE_BYTES:
        raise ValueError(f"{name} is implausibly large ({info.file_size} bytes)")
    check_inflation(name, info.file_size, info.compress_size)
    return zf.read(name)


def _map_storage(
    zf: zipfile.ZipFile, prefix: str, storage: Storage, path: str
) -> np.ndarray | None:
    """``storage`` mapped from the file (``mmap=True``), or None where it cannot be (a
    compressed or empty member): its bytes then are read."""
    name = f"{prefix}data/{storage.key}"
    info = zf.getinfo(name) if name in zf.NameToInfo else None
    if info is None or info.compress_type != zipfile.ZIP_STORED or storage.numel == 0:
        return None
    check_storage_bytes(storage, info.file_size, name)
    zf.fp.seek(info.header_offset)
    fields = struct.unpack(zipfile.structFileHeader, zf.fp.read(zipfile.sizeFileHeader))
    if fields[0] != zipfile.stringFileHeader:
        raise ValueError(f"{name} has a bad local file header")
    start = info.header_offset + zipfile.sizeFileHeader + fields[10] + fields[11]  # name, extra
    dtype = storage.dtype.newbyteorder("<")
    return np.memmap(path, dtype=dtype, mode="c", offset=start, shape=(storage.numel,))


def _read_storage(zf: zipfile.ZipFile, prefix: str, storage: Storage) -> bytearray:
    name = f"{prefix}data/{storage.key}"
    try:
        info = zf.getinfo(name)
    except KeyError:
        raise ValueError(
            f"data.pkl names storage {storage.key!r}, but the archive has no {name}"
        ) from None
    nbytes = check_storage_bytes(storage, info.file_size, name)
    check_inflation(name, info.file_size, info.compress_size)
    check_memory(name, nbytes)
    with zf.open(name) as member:
        return read_exactly(member, nbytes, name)


def get_unsafe_globals_in_checkpoint(f: str | os.PathLike | IO[bytes]) -> list[str]:
    """The globals a ``torch.save`` zip file names that a ``weights_only`` load would refuse
    (neither PyTorch's allow-list nor ``add_safe_globals``'), read from its pickle's opcodes
    without unpickling it, as PyTorch's function of that name does."""
    with zipfile.ZipFile(f) as zf:
        prefix = torch_archive_prefix(zf.namelist())
        if prefix is None:
            raise ValueError("Expected input to be a checkpoint returned by torch.save")
        pickled = _read_small(zf, f"{prefix}data.pkl")
    safe = set(torch_globals(TensorBuilder())) | set(allowed_by_user())
    found, strings = set(), []
    for op, arg, _ in pickletools.genops(pickled):
        if op.name in ("GLOBAL", "INST"):
            found.add(".".join(fix_name(*arg.split(" ", 1))))
        elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
            found.add(".".join(fix_name(strings[-2], strings[-1])))
        elif isinstance(arg, str):
            strings.append(arg)
    return sorted(found - safe)
