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
so a file can never execute code. Anything else (a torch pickle, a text file, a zip without our
header, a newer format version, a truncated or corrupted archive) raises
:class:`SerializationError` naming the file and the problem.

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


def save(obj: Any, f: PathOrFile) -> None:
    """Save ``obj`` (nested dicts/lists/tuples of Tensors, numbers, strings...) to ``f``."""
    tree, arrays = encode(obj)
    header = json.dumps(
        {"format": FORMAT_NAME, "version": FORMAT_VERSION, "root": tree},
        ensure_ascii=False,
        allow_nan=False,
    ).encode("utf-8")
    if not isinstance(f, (str, os.PathLike)):
        _write_archive(f, header, arrays)
        return
    with atomic_open(f, "wb") as out:
        _write_archive(out, header, arrays)


def _write_archive(out: IO[bytes], header: bytes, arrays: list[tuple[str, np.ndarray]]) -> None:
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as zf:
        zf.writestr(HEADER, header)
        for name, arr in arrays:
            _write_array(zf, name, arr)


def _write_array(zf: zipfile.ZipFile, name: str, arr: np.ndarray) -> None:
    with zf.open(name, "w", force_zip64=arr.nbytes > 2**30) as member:
        np.lib.format.write_array(member, arr, allow_pickle=False)


def load(f: PathOrFile, map_location: Any = None, weights_only: bool | None = None) -> Any:
    """Load an object saved by :func:`save`.

    ``weights_only`` is accepted for PyTorch compatibility and changes nothing: loading never
    runs code, whatever its value. A saved ``Parameter`` comes back as a plain Tensor with
    ``requires_grad=True``.

    ``map_location`` moves tensors: ``None`` restores each on the device it was saved from,
    ``'cpu'``/``'cuda:0'``/a ``device`` sends all there, a dict maps saved device names
    (``{'cuda:0': 'cpu'}``), and a callable gets the saved device name and returns the target.
    """
    where = repr(os.fspath(f)) if isinstance(f, (str, os.PathLike)) else _describe(f)
    if isinstance(f, (str, os.PathLike)):
        try:
            with open(f, "rb") as fh:
                return _load_from(fh, where, map_location)
        except OSError as err:
            raise SerializationError(f"cannot read checkpoint {where}: {err}") from err
    return _load_from(f, where, map_location)


def _describe(f: Any) -> str:
    name = getattr(f, "name", None)
    return repr(name) if isinstance(name, str) else f"<{type(f).__name__}>"


def _load_from(fh: IO[bytes], where: str, map_location: Any) -> Any:
    start = fh.read(4)
    fh.seek(-len(start), os.SEEK_CUR)
    if not start:
        raise SerializationError(f"{where} is empty: not an autogradcli checkpoint")
    if start[:1] == b"\x80":
        raise SerializationError(
            f"{where} is a Python pickle (e.g. a legacy torch.save file); autogradcli never "
            "unpickles, because loading a pickle can run arbitrary code"
        )
    if start != b"PK\x03\x04":
        raise SerializationError(
            f"{where} is not an autogradcli checkpoint: it is not a zip archive "
            f"(starts with {start!r})"
        )
    try:
        with zipfile.ZipFile(fh) as zf:
            header = _read_header(zf, where)
            planned = _plan_arrays(zf, header["root"])

            def read_array(name: str) -> np.ndarray:
                return read_npy_member(zf, name, *planned[name])

            return decode(header["root"], read_array, map_location)
    except SerializationError as err:
        if str(err).startswith(where):
            raise
        raise SerializationError(f"{where}: {err}") from err
    except (zipfile.BadZipFile, EOFError, zipfile.LargeZipFile) as err:
        raise SerializationError(f"{where} is truncated or corrupted: {err}") from err
    except (ValueError, KeyError, TypeError, RecursionError, OSError) as err:
        raise SerializationError(f"{where} is corrupted: {type(err).__name__}: {err}") from err


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
        if any(n.endswith("data.pkl") for n in names):
            raise SerializationError(
                f"{where} looks like a PyTorch checkpoint (a pickle inside a zip); autogradcli "
                "never unpickles, because loading a pickle can run arbitrary code"
            ) from None
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
