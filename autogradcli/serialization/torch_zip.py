"""Reading PyTorch's zip layout (``torch.save`` since 1.6): ``<archive>/data.pkl`` unpickled
(with the allow-list unless ``weights_only=False``), each storage read from
``<archive>/data/<key>`` after its size is checked against the zip directory, so a storage
claiming more elements than the file holds, or a member inflating like a zip bomb, is refused
before anything is allocated or inflated."""

from __future__ import annotations

import io
import zipfile
from typing import Any

from .npy_member import check_inflation, check_memory, read_exactly
from .torch_pickle import unpickler
from .torch_tensors import Storage, TensorBuilder, check_storage_bytes, storage_from_pid

MAX_PICKLE_BYTES = 1 << 30


def torch_archive_prefix(names: list[str]) -> str | None:
    """``"<archive>/"`` if ``names`` are PyTorch's zip layout (a top-level folder's data.pkl)."""
    for name in names:
        if name.endswith("/data.pkl") and name.count("/") == 1:
            return name[: -len("data.pkl")]
    return None


def load_torch_zip(
    zf: zipfile.ZipFile, prefix: str, map_location: Any, weights_only: bool, where: str
) -> Any:
    """The object in a PyTorch zip checkpoint whose records are under ``prefix``."""
    byteorder = "little"
    if f"{prefix}byteorder" in zf.namelist():
        with zf.open(f"{prefix}byteorder") as member:
            byteorder = member.read(16).decode("ascii", "replace").strip()
        if byteorder not in ("little", "big"):
            raise ValueError(f"unknown byte order {byteorder[:20]!r}")
    storages: dict[str, Storage] = {}

    def persistent_load(pid: Any) -> Storage:
        storage = storage_from_pid(pid, storages)
        if storage.array is None:
            storage.fill(_read_storage(zf, prefix, storage), byteorder)
        return storage

    builder = TensorBuilder(map_location)
    pickled = _read_small(zf, f"{prefix}data.pkl")
    result = unpickler(io.BytesIO(pickled), builder, persistent_load, weights_only).load()
    builder.finish()
    builder.warn_bfloat16(result, where)
    return result


def _read_small(zf: zipfile.ZipFile, name: str) -> bytes:
    info = zf.getinfo(name)
    if info.file_size > MAX_PICKLE_BYTES:
        raise ValueError(f"{name} is implausibly large ({info.file_size} bytes)")
    check_inflation(name, info.file_size, info.compress_size)
    return zf.read(name)


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
