"""``save`` and ``load``: checkpoints as zip archives that never run code when read.

File format (format name ``"autogradcli"``, version 1)
------------------------------------------------------
A zip archive (members stored uncompressed) holding:

- ``header.json``: UTF-8 JSON ``{"format": "autogradcli", "version": 1, "root": TREE}``, where
  TREE is the saved object as described in :mod:`autogradcli.serialization.format` (tensors and
  numpy arrays appear as references ``{"$": "tensor", "file": "tensors/0.npy", ...}``).
- ``tensors/<n>.npy``: one numpy ``.npy`` file per tensor or array, always on the host; the
  header records the device it came from.

Loading reads only JSON and ``.npy`` data (``allow_pickle=False``); there is no pickle anywhere,
so a file can never execute code. A zip without our header, a newer format version, a truncated
or corrupted archive raises :class:`SerializationError` naming the file and the problem
(``entry.load`` sends PyTorch and safetensors files to their own readers).

Saving to a path is atomic: the archive is written to a temporary file in the same directory,
flushed and fsynced, then moved over ``path`` with ``os.replace``. A crash mid-write leaves any
previous file at ``path`` untouched and removes the temporary file. Saving to a file-like object
writes into it directly (no atomicity).
"""

from __future__ import annotations

import json
import os
import zipfile
from typing import IO, Any

import numpy as np

from .._utils.atomic import atomic_open
from .format import SerializationError, decode, encode
from .npy_member import check_member_size, read_npy_member

FORMAT_NAME = "autogradcli"
FORMAT_VERSION = 1
HEADER = "header.json"
_MAX_HEADER_BYTES = 256 * 2**20

PathOrFile = str | os.PathLike | IO[bytes]


Prepared = tuple[bytes, list[tuple[str, np.ndarray]]]


def save_archive(obj: Any, f: PathOrFile) -> None:
    """Save ``obj`` (nested dicts/lists/tuples of Tensors, numbers, strings...) to ``f``."""
    header, arrays = _prepare(obj)
    if not isinstance(f, (str, os.PathLike)):
        _write_archive(f, header, arrays)
        return
    with atomic_open(f, "wb") as out:
        _write_archive(out, header, arrays)


def _prepare(obj: Any) -> Prepared:
    """The header bytes of ``obj`` and the ``(member name, host array)`` pairs it references."""
    tree, arrays = encode(obj)
    header = json.dumps(
        {"format": FORMAT_NAME, "version": FORMAT_VERSION, "root": tree},
        ensure_ascii=False,
        allow_nan=False,
    ).encode("utf-8")
    return header, arrays


def prepare_archive(obj: Any, copy: bool = True) -> Prepared:
    """What ``save_archive(obj, f)`` writes: the tree walk and the header (Python) done now,
    the archive (checksums and writes: no GIL for large arrays) left to ``write_prepared``.
    ``copy``: every array copied (``detached``), so that a later write on another thread
    writes ``obj`` as it is now, whatever changes it in place meanwhile (an optimizer step)."""
    prepared = _prepare(obj)
    return detached(prepared) if copy else prepared


def detached(prepared: Prepared) -> Prepared:
    """``prepared`` with its arrays copied (no longer views of the objects they came from)."""
    return prepared[0], [(name, arr.copy()) for name, arr in prepared[1]]


def prepared_nbytes(prepared: Prepared) -> int:
    """The bytes of a ``prepare_archive`` result's header and arrays (about its file size)."""
    return len(prepared[0]) + sum(arr.nbytes for _, arr in prepared[1])


def write_prepared(prepared: Prepared, out: IO[bytes]) -> None:
    """Write a ``prepare_archive`` result into the open binary file ``out``."""
    _write_archive(out, *prepared)


def _write_archive(out: IO[bytes], header: bytes, arrays: list[tuple[str, np.ndarray]]) -> None:
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as zf:
        zf.writestr(HEADER, header)
        for name, arr in arrays:
            _write_array(zf, name, arr)


def _write_array(zf: zipfile.ZipFile, name: str, arr: np.ndarray) -> None:
    with zf.open(name, "w", force_zip64=arr.nbytes > 2**30) as member:
        np.lib.format.write_array(member, arr, allow_pickle=False)


def load_archive(zf: zipfile.ZipFile, where: str, map_location: Any) -> Any:
    """The object in an open autogradcli checkpoint (see :func:`autogradcli.load`)."""
    header = _read_header(zf, where)
    planned = _plan_arrays(zf, header["root"])

    def read_array(name: str) -> np.ndarray:
        return read_npy_member(zf, name, *planned[name])

    return decode(header["root"], read_array, map_location)


def _plan_arrays(zf: zipfile.ZipFile, root: Any) -> dict[str, tuple[np.dtype, tuple[int, ...]]]:
    """The dtype and shape of every array the header refers to, checked against the sizes the
    zip directory declares before anything is inflated: a member holding more than its array
    (a zip bomb) or less (an array claiming more elements than the file has) is refused."""
    planned: dict[str, tuple[np.dtype, tuple[int, ...]]] = {}
    members = set(zf.namelist())
    stack = [root]
    while stack:  # iterative: a hostile header may nest deeply
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            if node.get("$") in ("tensor", "ndarray"):
                if isinstance(node.get("file"), str) and node["file"] not in members:
                    raise ValueError(f"the header refers to {node['file']}, which is missing")
                name, dtype, shape = _array_node(node)
                planned[name] = (dtype, shape)
                check_member_size(zf, name, dtype, shape)
            else:
                stack.extend(node.values())
    return planned


def _array_node(node: dict[str, Any]) -> tuple[str, np.dtype, tuple[int, ...]]:
    name, dtype, shape = node.get("file"), node.get("dtype"), node.get("shape")
    if not isinstance(name, str):
        raise ValueError(f"an array reference has no file name: {str(node)[:80]}")
    try:
        # bfloat16 members hold its 16-bit patterns (format.py); np.dtype("bfloat16") would be
        # ml_dtypes' own dtype, which .npy headers cannot name
        dt = np.dtype(np.uint16 if dtype == "bfloat16" else dtype)
    except (TypeError, ValueError):
        raise ValueError(f"{name} has an unknown dtype {dtype!r}") from None
    if dt.hasobject or dt.itemsize == 0:
        raise ValueError(f"{name} has dtype {dtype!r}, which would need pickle or holds nothing")
    ok = isinstance(shape, list) and all(
        isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape
    )
    if not ok:
        raise ValueError(f"{name} has an invalid shape {shape!r}")
    return name, dt, tuple(shape)


def _read_header(zf: zipfile.ZipFile, where: str) -> dict[str, Any]:
    try:
        info = zf.getinfo(HEADER)
    except KeyError:
        names = zf.namelist()
        raise SerializationError(
            f"{where} is a zip archive but not an autogradcli checkpoint (no {HEADER}; it holds "
            f"{names[:5]})"
        ) from None
    if info.file_size > _MAX_HEADER_BYTES:
        raise SerializationError(f"{where}: {HEADER} is implausibly large ({info.file_size} bytes)")
    try:
        header = json.loads(zf.read(HEADER).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise SerializationError(f"{where}: {HEADER} is not valid JSON: {err}") from err
    if not isinstance(header, dict) or header.get("format") != FORMAT_NAME:
        found = header.get("format") if isinstance(header, dict) else type(header).__name__
        raise SerializationError(
            f"{where} is not an autogradcli checkpoint (format {found!r}, expected {FORMAT_NAME!r})"
        )
    version = header.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise SerializationError(f"{where} has an invalid format version {version!r}")
    if version > FORMAT_VERSION:
        raise SerializationError(
            f"{where} was written by a newer autogradcli (format version {version}; this one "
            f"reads up to {FORMAT_VERSION}); upgrade autogradcli to load it"
        )
    if "root" not in header:
        raise SerializationError(f"{where} is corrupted: {HEADER} has no 'root'")
    return header
