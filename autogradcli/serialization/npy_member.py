"""Reading one ``.npy`` member of a zip archive (a checkpoint, an ``.npz`` data file) without
trusting it: the sizes the zip directory declares are checked against the array's dtype and
shape before anything is inflated, and the member's own ``.npy`` header before numpy allocates.
A zip bomb, an array claiming more elements than the file holds, or a header that disagrees
with the data is refused with ``ValueError``; nothing is ever unpickled.
"""

from __future__ import annotations

import math
import os
import zipfile

import numpy as np

__all__ = ["check_member_size", "read_npy_member"]

# Bytes an .npy member may hold beyond its array's data: the magic string and header (numpy's
# are a few hundred bytes; the format allows up to 4 GiB, which no real file needs).
NPY_OVERHEAD = 64 * 1024


def _memory_bytes() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 1 << 62


def size_text(n: float) -> str:
    """``n`` bytes for a message: ``24 bytes``, ``3.6 TiB``."""
    if n < 1024:
        return f"{int(n)} bytes"
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        n /= 1024
        if n < 1024 or unit == "TiB":
            break
    return f"{n:.1f} {unit}"


def check_member_size(zf: zipfile.ZipFile, name: str, dtype: np.dtype, shape: tuple) -> None:
    """Refuse member ``name`` unless the zip directory's size for it fits a ``dtype`` array of
    ``shape`` (its data plus an .npy header), and the array fits this machine's memory."""
    info = zf.getinfo(name)
    nbytes = dtype.itemsize * math.prod(shape)
    if not nbytes <= info.file_size <= nbytes + NPY_OVERHEAD:
        raise ValueError(
            f"{name} should hold {size_text(nbytes)} ({dtype} {list(shape)}) but the zip "
            f"directory says it holds {size_text(info.file_size)}; refusing to read it"
        )
    if nbytes > _memory_bytes():
        raise ValueError(f"{name} holds {size_text(nbytes)}, more than this machine's memory")


def _npy_header(member: zipfile.ZipExtFile, name: str) -> tuple[np.dtype, tuple, bool]:
    version = np.lib.format.read_magic(member)
    if version == (1, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(member)
    elif version in ((2, 0), (3, 0)):
        shape, fortran, dtype = np.lib.format.read_array_header_2_0(member)
    else:
        raise ValueError(f"{name} has an unsupported .npy version {version}")
    if dtype.hasobject:
        raise ValueError(f"{name} holds Python objects, which would need pickle to read")
    return dtype, tuple(shape), fortran


def read_npy_member(
    zf: zipfile.ZipFile, name: str, dtype: np.dtype | None = None, shape: tuple | None = None
) -> np.ndarray:
    """The array in member ``name``. With ``dtype`` and ``shape`` (from a trusted-shape
    header that ``check_member_size`` has already checked) the member's own header must agree;
    without them its header is taken, checked against the zip directory first."""
    with zf.open(name) as member:
        got_dtype, got_shape, fortran = _npy_header(member, name)
        if dtype is None or shape is None:
            dtype, shape = got_dtype, got_shape
            check_member_size(zf, name, dtype, shape)
        if got_dtype != dtype or got_shape != tuple(shape):
            raise ValueError(
                f"{name} holds {got_dtype.str} {list(got_shape)} but the header says "
                f"{dtype.str} {list(shape)}"
            )
        data = bytearray(dtype.itemsize * math.prod(shape))
        view, got = memoryview(data), 0
        while got < len(data):
            n = member.readinto(view[got:])
            if not n:
                raise EOFError(f"{name} is truncated")
            got += n
    arr = np.frombuffer(data, dtype=dtype)
    if fortran:
        return arr.reshape(shape[::-1]).T
    return arr.reshape(shape)
