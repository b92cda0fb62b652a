"""Reading PyTorch's oldest format (``torch.save`` before 0.4): a tar archive of three members,

- ``storages``: a pickled count, then per storage a pickled ``(key, location, storage type)``
  followed by an int64 element count and the raw bytes; then a pickled list of storage views
  ``(view key, root key, offset, numel)``;
- ``tensors``: a pickled count, then per tensor a pickled ``(key, storage key, tensor type)``
  followed by an int32 ndim, 4 padding bytes, ndim int64 sizes, ndim int64 strides and an int64
  storage offset;
- ``pickle``: the object, each tensor a persistent id naming its key.

PyTorch refuses this format with ``weights_only=True``; here every pickle in it goes through
the same allow-list (plus the legacy ``torch.FloatTensor``-style type names), so it is read
without running code. Nothing is extracted to disk.
"""

from __future__ import annotations

import struct
import tarfile
from collections.abc import Iterator
from typing import IO, Any

from .npy_member import check_memory, read_exactly
from .torch_pickle import unpickler
from .torch_tensors import Storage, StorageType, TensorBuilder, check_storage_bytes


def _member(tar: tarfile.TarFile, name: str) -> tuple[IO[bytes], int]:
    try:
        info = tar.getmember(name)
    except KeyError:
        raise ValueError(f"the tar archive has no {name!r} member") from None
    fh = tar.extractfile(info)
    if fh is None:
        raise ValueError(f"the tar member {name!r} is not a file")
    return fh, info.size


def load_tar(fh: IO[bytes], map_location: Any, weights_only: bool, where: str) -> Any:
    """The object in a tar-format PyTorch file."""
    builder = TensorBuilder(map_location)
    with tarfile.open(fileobj=fh, mode="r:") as tar:
        storages = _read_storages(tar, builder, weights_only)
        tensors = _read_tensors(tar, builder, storages, weights_only)

        def persistent_load(pid: Any) -> Any:
            if isinstance(pid, tuple):  # a whole module's class and source
                if weights_only:
                    raise ValueError("the file pickles whole modules")
                return pid[0]
            if str(pid) not in tensors:
                raise ValueError(f"the pickle names tensor {str(pid)[:40]!r}, which is not stored")
            return tensors[str(pid)]

        pickled, _ = _member(tar, "pickle")
        result = unpickler(pickled, builder, persistent_load, weights_only).load()
    return result


def _plain(fh: IO[bytes], builder: TensorBuilder, weights_only: bool) -> Any:
    def no_storages(pid: Any) -> Any:
        raise ValueError("a record of the tar format refers to a storage")

    return unpickler(fh, builder, no_storages, weights_only).load()


def _records(
    fh: IO[bytes], builder: TensorBuilder, weights_only: bool, what: str
) -> Iterator[tuple]:
    """A member's pickled record count, then each 3-tuple record (its raw data follows it)."""
    count = _plain(fh, builder, weights_only)
    if not isinstance(count, int) or count < 0:
        raise ValueError(f"invalid {what} count {count!r}")
    for _ in range(count):
        record = _plain(fh, builder, weights_only)
        if not (isinstance(record, tuple) and len(record) == 3):
            raise ValueError(f"invalid {what} record {str(record)[:80]}")
        yield record


def _read_storages(
    tar: tarfile.TarFile, builder: TensorBuilder, weights_only: bool
) -> dict[str, Storage]:
    fh, size = _member(tar, "storages")
    storages: dict[str, Storage] = {}
    for record in _records(fh, builder, weights_only, "storage"):
        key, location, stype = record
        if not isinstance(stype, StorageType) or not isinstance(location, str):
            raise ValueError(f"invalid storage record {str(record)[:80]}")
        numel = struct.unpack("<q", read_exactly(fh, 8, f"storage {key!r}"))[0]
        if numel < 0:
            raise ValueError(f"storage {key!r} has a negative size")
        storage = Storage(str(key), stype.dtype, numel, location)
        nbytes = check_storage_bytes(storage, size - fh.tell(), "the storages member")
        check_memory(f"storage {key!r}", nbytes)
        storage.fill(read_exactly(fh, nbytes, f"storage {key!r}"))
        storages[str(key)] = storage
    views = _plain(fh, builder, weights_only)
    for view in views if isinstance(views, list) else [views]:
        if not (isinstance(view, tuple) and len(view) == 4):
            raise ValueError(f"invalid storage view {str(view)[:80]}")
        target, root, offset, numel = view
        base = storages.get(str(root))
        ints = isinstance(offset, int) and isinstance(numel, int)
        if base is None or not (ints and offset >= 0 and numel >= 0):
            raise ValueError(f"invalid storage view {str(view)[:80]}")
        if offset + numel > base.numel:
            raise ValueError(f"storage view {str(view)[:80]} reaches outside its storage")
        sub = Storage(str(target), base.dtype, numel, base.location)
        sub.array = base.array[offset : offset + numel]
        storages[str(target)] = sub
    return storages


def _read_tensors(
    tar: tarfile.TarFile, builder: TensorBuilder, storages: dict[str, Storage], weights_only: bool
) -> dict[str, Any]:
    fh, _ = _member(tar, "tensors")
    tensors: dict[str, Any] = {}
    for record in _records(fh, builder, weights_only, "tensor"):
        key, storage_key = record[0], str(record[1])
        if storage_key not in storages:
            raise ValueError(f"tensor {key!r} names storage {storage_key!r}, which is not stored")
        (ndim,) = struct.unpack("<i", read_exactly(fh, 4, f"tensor {key!r}"))
        if not 0 <= ndim <= 64:
            raise ValueError(f"tensor {key!r} has {ndim} dimensions")
        read_exactly(fh, 4, f"tensor {key!r}")  # padding
        dims = struct.unpack(f"<{2 * ndim + 1}q", read_exactly(fh, 8 * (2 * ndim + 1), str(key)))
        size, stride, offset = dims[:ndim], dims[ndim:-1], dims[-1]
        tensors[str(key)] = builder.rebuild_tensor_v2(storages[storage_key], offset, size, stride)
    return tensors


def is_tar(head: bytes) -> bool:
    """Whether ``head`` (the file's first 512 bytes) starts a tar archive."""
    return head[257:262] == b"ustar"
