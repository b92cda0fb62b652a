"""Reading PyTorch's legacy format (``torch.save(..., _use_new_zipfile_serialization=False)``,
the default before 1.6): five pickles and raw data in one stream,

1. the magic number ``0x1950a86a20f9469cfc6c``, 2. the protocol version ``1001``,
3. system info (``little_endian``, type sizes), 4. the object, its storages as persistent ids
``('storage', type, key, location, numel, view)``, 5. the list of storage keys in data order,

then for each key an int64 element count and the storage's raw bytes. Tensors are built empty
while the object is unpickled and filled once their storage is read (``TensorBuilder.finish``).
The older tar format (PyTorch < 0.4) is read by ``torch_tar``.
"""

from __future__ import annotations

import io
import os
from typing import IO, Any

from .format import SerializationError
from .npy_member import check_memory, read_exactly
from .torch_pickle import WeightsUnpickler, unpickler
from .torch_tensors import Storage, TensorBuilder, check_storage_bytes, storage_from_pid

MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001


def _plain(fh: IO[bytes], what: str) -> Any:
    """The next pickle of plain data (no globals, no storages)."""

    def no_storages(pid: Any) -> Any:
        raise ValueError(f"the {what} refers to a storage")

    return WeightsUnpickler(fh, TensorBuilder(), no_storages).load()


def load_legacy(fh: IO[bytes], map_location: Any, weights_only: bool, where: str) -> Any:
    """The object in a legacy PyTorch file (``fh`` at its start)."""
    if not fh.seekable():
        fh = io.BytesIO(fh.read())
    start = fh.tell()
    size = fh.seek(0, os.SEEK_END) - start
    fh.seek(start)
    try:
        magic = _plain(fh, "magic number")
    except Exception:  # whatever it holds, it is not PyTorch's magic number
        magic = None
    if magic != MAGIC_NUMBER:
        raise SerializationError(
            "it is a Python pickle but not a PyTorch file (no PyTorch magic number); "
            "autogradcli unpickles only PyTorch files, with an allow-list"
        )
    protocol = _plain(fh, "protocol version")
    if protocol != PROTOCOL_VERSION:
        raise ValueError(f"unknown PyTorch legacy protocol version {protocol!r}")
    info = _plain(fh, "system info")
    little = not isinstance(info, dict) or info.get("little_endian", True) is not False
    storages: dict[str, Storage] = {}
    builder = TensorBuilder(map_location)

    def persistent_load(pid: Any) -> Any:
        if weights_only is False and isinstance(pid, tuple) and pid[:1] == ("module",):
            return pid[1]  # an old whole-module pickle's class, with its source
        return storage_from_pid(pid, storages)

    result = unpickler(fh, builder, persistent_load, weights_only).load()
    keys = _plain(fh, "storage key list")
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise ValueError("the storage key list is not a list of keys")
    for key in keys:
        storage = storages.get(key)
        if storage is None:
            raise ValueError(
                f"the file stores data for storage {key!r}, which its pickle never names"
            )
        _read_storage(fh, storage, size - (fh.tell() - start), little)
    builder.finish()
    return result


def _read_storage(fh: IO[bytes], storage: Storage, left: int, little: bool) -> None:
    count = int.from_bytes(
        read_exactly(fh, 8, f"storage {storage.key!r}"), "little" if little else "big"
    )
    if count != storage.numel:
        raise ValueError(
            f"storage {storage.key!r} holds {count} elements but its pickle says {storage.numel}"
        )
    nbytes = check_storage_bytes(storage, left - 8, "the rest of the file")
    check_memory(f"storage {storage.key!r}", nbytes)
    storage.fill(
        read_exactly(fh, nbytes, f"storage {storage.key!r}"), "little" if little else "big"
    )
