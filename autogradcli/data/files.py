"""Datasets from files: the bundled digits, ``.npz``, CSV and MNIST-style IDX files.

Every loader returns a ``TensorDataset`` (features first, then labels when there are any) and
names the file at fault in its errors.
"""

from __future__ import annotations

import gzip
import math
import os
import zipfile
import zlib
from importlib import resources
from typing import Any

import numpy as np

from ..serialization.npy_member import (
    check_inflation,
    check_memory,
    read_exactly,
    read_npy_member,
)
from ..tensor.tensor import wrap
from .dataset import TensorDataset

PathLike = str | os.PathLike


class NoRowsError(ValueError):
    """A data file that holds no samples; ``why`` says how (empty, only a header)."""

    def __init__(self, where: str, why: str) -> None:
        super().__init__(f"{where} has no rows: {why}")
        self.why = why


def load_digits(flatten: bool = False) -> TensorDataset:
    """The bundled handwritten digits: 1,797 8x8 images and their classes 0..9.

    Images are float32 scaled to [0, 1], shaped (1797, 1, 8, 8), or (1797, 64) with
    ``flatten=True``; labels are int64. Source: the test set of the UCI "Optical Recognition of
    Handwritten Digits" data set (E. Alpaydin, C. Kaynak, 1998), licence CC BY 4.0.
    """
    source = resources.files(__package__).joinpath("files/digits.npz")
    with source.open("rb") as fh, zipfile.ZipFile(fh) as zf:
        images, labels = (read_npy_member(zf, f"{k}.npy") for k in ("images", "labels"))
    x = (images.astype(np.float32) / np.float32(16.0)).reshape(len(images), 1, 8, 8)
    if flatten:
        x = x.reshape(len(images), 64)
    return TensorDataset(wrap(x), wrap(labels.astype(np.int64)))


def load_npz(path: PathLike, x_key: str = "x", y_key: str | None = "y") -> TensorDataset:
    """Arrays ``x_key`` (and ``y_key`` unless None) of an ``.npz`` file; float arrays become
    float32, integer labels int64."""
    where = repr(os.fspath(path))
    keys: list[str] = []
    try:
        with open(path, "rb") as fh:
            if fh.read(4) != b"PK\x03\x04":
                raise ValueError(f"{where} is not an .npz file (not a zip archive)")
            fh.seek(0)
            with zipfile.ZipFile(fh) as zf:
                members = {n[: -len(".npy")]: n for n in zf.namelist() if n.endswith(".npy")}
                keys = list(members)
                for k in (x_key, y_key):
                    if k is not None and k not in members:
                        raise KeyError(k)
                wanted = [x_key] + ([y_key] if y_key is not None else [])
                arrays = [read_npy_member(zf, members[k]) for k in wanted]
    except KeyError as err:
        raise ValueError(f"{where} has no array {err.args[0]!r} (it has {keys})") from None
    except (OSError, zipfile.BadZipFile, EOFError) as err:
        raise ValueError(f"cannot read {where} as an .npz file: {err}") from err
    except ValueError as err:
        if where in str(err):
            raise
        raise ValueError(f"cannot read {where} as an .npz file: {err}") from err
    return _dataset(path, [_standard(a, path, k) for a, k in zip(arrays, (x_key, y_key))])


def _standard(arr: np.ndarray, path: PathLike, key: Any) -> np.ndarray:
    if arr.dtype.kind in "fV":
        bad = ~np.isfinite(arr)
        if bad.any():
            at = tuple(int(i) for i in np.argwhere(bad)[0])
            raise ValueError(
                f"{os.fspath(path)!r}: array {key!r} holds {arr[at]} at index {list(at)}: the "
                "data must be finite numbers"
            )
        return _float32(arr, repr(os.fspath(path)))
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64)
    if arr.dtype.kind == "b":
        return arr
    raise ValueError(f"{os.fspath(path)!r}: array {key!r} has non-numeric dtype {arr.dtype}")


def _dataset(path: PathLike, arrays: list[np.ndarray]) -> TensorDataset:
    sizes = [len(a) if a.ndim else 0 for a in arrays]
    if any(a.ndim == 0 for a in arrays) or len(set(sizes)) != 1:
        raise ValueError(
            f"{os.fspath(path)!r}: features and labels must have the same number of rows, got "
            f"shapes {[a.shape for a in arrays]}"
        )
    return TensorDataset(*(wrap(a) for a in arrays))


def load_csv(
    path: PathLike,
    target_column: int | str | None = -1,
    header: bool | str = "auto",
    delimiter: str = ",",
) -> TensorDataset:
    """A numeric CSV file: features (float32) and the target column (int64 when every target is
    a whole number, else float32). ``target_column`` is an index, a header name, or None for no
    target. ``header='auto'`` treats the first row as names when it is not numeric."""
    where = repr(os.fspath(path))
    try:
        with open(path, encoding="utf-8") as fh:
            rows = [line.rstrip("\r\n") for line in fh if line.strip()]
    except (OSError, UnicodeDecodeError) as err:
        raise ValueError(f"cannot read CSV file {where}: {err}") from err
    if not rows:
        raise NoRowsError(f"CSV file {where}", "it is empty")
    cells = [row.split(delimiter) for row in rows]
    names: list[str] | None = None
    if header is True or (header == "auto" and not _is_numeric_row(cells[0])):
        names, cells = [c.strip() for c in cells[0]], cells[1:]
    if not cells:
        raise NoRowsError(f"CSV file {where}", "it has a header but no data rows")
    width = len(cells[0])
    data = np.empty((len(cells), width), dtype=np.float64)
    for r, row in enumerate(cells):
        line = r + 1 + (names is not None)
        if len(row) != width:
            raise ValueError(f"{where}, line {line}: expected {width} columns, found {len(row)}")
        try:
            data[r] = [float(c) for c in row]
        except ValueError as err:
            raise ValueError(f"{where}, line {line}: non-numeric value ({err})") from err
    bad = ~np.isfinite(data)
    if bad.any():
        r, c = (int(i) for i in np.argwhere(bad)[0])
        line = r + 1 + (names is not None)
        raise ValueError(
            f"{where}, line {line}, column {c + 1}: {data[r, c]} is not a finite number"
        )
    if target_column is None:
        return TensorDataset(wrap(_float32(data, where)))
    col = _column_index(target_column, names, width, where)
    if width == 1:
        raise ValueError(
            f"CSV file {where} has only the target column: there are no feature columns"
        )
    x = _float32(np.delete(data, col, axis=1), where)
    y = data[:, col]
    whole = np.all(np.mod(y, 1) == 0) and np.all(np.abs(y) <= _MAX_CLASS)
    y = y.astype(np.int64) if whole else _float32(y, where)
    return TensorDataset(wrap(x), wrap(y))


# Whole-number targets up to this are class indices (int64); larger ones are values (float32).
_MAX_CLASS = 2**31 - 1
_FLOAT32_MAX = float(np.finfo(np.float32).max)


def _float32(values: np.ndarray, where: str) -> np.ndarray:
    """``values`` as float32, refusing numbers float32 cannot hold (they would become inf);
    float32 data comes back as it is, without a copy."""
    if values.dtype == np.float32:
        return values
    too_big = np.abs(values) > _FLOAT32_MAX
    if too_big.any():
        v = values[too_big].flat[0]
        raise ValueError(f"{where}: {v:g} is too large for float32 (the largest is 3.4e38)")
    return values.astype(np.float32)


def _is_numeric_row(row: list[str]) -> bool:
    try:
        [float(c) for c in row]
    except ValueError:
        return False
    return True


def _column_index(column: int | str, names: list[str] | None, width: int, where: str) -> int:
    if isinstance(column, str):
        if names is None or column not in names:
            raise ValueError(f"CSV file {where} has no column named {column!r} (header: {names})")
        return names.index(column)
    if not -width <= column < width:
        raise ValueError(f"target_column {column} is out of range for {width} columns in {where}")
    return column % width


_IDX_DTYPES = {
    0x08: np.dtype(np.uint8),
    0x09: np.dtype(np.int8),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}


def read_idx(path: PathLike) -> np.ndarray:
    """The array in an IDX file (MNIST's format), plain or gzipped (``.gz``). The size its
    header claims is checked before reading: against memory, the file's size (plain) or how
    far real data inflates (gzipped)."""
    where = repr(os.fspath(path))
    gzipped = os.fspath(path).endswith(".gz")
    try:
        stored = os.path.getsize(path)
        with (gzip.open if gzipped else open)(path, "rb") as fh:
            raw = fh.read(4)
            if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in _IDX_DTYPES:
                raise ValueError(
                    f"{where} is not an IDX file: bad magic number {raw[:4].hex() or '(empty)'} "
                    "(expected 00 00 <type code 08/09/0b/0c/0d/0e> <number of dims>)"
                )
            dtype, ndim = _IDX_DTYPES[raw[2]], raw[3]
            raw += fh.read(4 * ndim)
            if len(raw) < 4 + 4 * ndim:
                raise ValueError(f"{where} is truncated: its header names {ndim} dims")
            shape = tuple(int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
            expected = math.prod(shape) * dtype.itemsize
            check_memory(where, expected)
            if gzipped:
                check_inflation(where, expected, stored)
            elif expected > stored - len(raw):
                raise _idx_size_error(where, stored - len(raw), expected, shape, dtype)
            try:
                data = read_exactly(fh, expected, where)
            except EOFError:
                raise _idx_size_error(where, None, expected, shape, dtype) from None
            if fh.read(1):  # one byte more tells a file longer than its header
                raise _idx_size_error(where, expected + 1, expected, shape, dtype)
    except (OSError, EOFError, zlib.error) as err:
        raise ValueError(f"cannot read IDX file {where}: {err}") from err
    native = dtype.newbyteorder("=")
    return np.frombuffer(data, dtype=dtype).reshape(shape).astype(native, copy=False)


def _idx_size_error(
    where: str, got: int | None, expected: int, shape: tuple, dtype: Any
) -> ValueError:
    """The error for data bytes (``got``; None: fewer, count unknown) that do not match the
    header's ``expected``."""
    held = "fewer" if got is None else ("more than " * (got > expected)) + str(min(got, expected))
    return ValueError(
        f"{where} holds {held} data bytes but its header says shape {shape} of {dtype.name} "
        f"({expected} bytes): truncated or corrupted"
    )


def load_idx(
    images_path: PathLike, labels_path: PathLike | None = None, flatten: bool = False
) -> TensorDataset:
    """MNIST-style IDX images (N, H, W) as float32 (N, 1, H, W) scaled to [0, 1] (uint8 data is
    divided by 255), or (N, H*W) with ``flatten=True``; labels (N,) as int64."""
    images = read_idx(images_path)
    if images.ndim != 3:
        raise ValueError(
            f"{os.fspath(images_path)!r}: expected (N, H, W) images, got {images.shape}"
        )
    x = images.astype(np.float32)
    if images.dtype == np.uint8:
        x /= np.float32(255.0)
    x = x.reshape(len(x), -1) if flatten else x[:, None]
    if labels_path is None:
        return TensorDataset(wrap(x))
    labels = read_idx(labels_path)
    if labels.ndim != 1 or len(labels) != len(x):
        raise ValueError(
            f"{os.fspath(labels_path)!r}: expected {len(x)} labels for the images in "
            f"{os.fspath(images_path)!r}, got shape {labels.shape}"
        )
    return TensorDataset(wrap(x), wrap(labels.astype(np.int64)))
