"""The one checked reader of arrays in zip archives (a checkpoint, an ``.npz`` data file) and of
compressed data files, trusting nothing they claim.

Before anything is inflated, the sizes the zip directory declares are checked: against the
array's dtype and shape, against the memory this process may use, and against how far real
array data inflates (``check_inflation``: a zip bomb inflates a thousandfold). The member's own
``.npy`` header is checked before numpy allocates, and data is read in bounded chunks into one
buffer of the declared size. Every refusal is a ``ValueError`` naming the member; nothing is
ever unpickled and ``np.load`` never sees an untrusted archive.
"""

from __future__ import annotations

import math
import os
import zipfile
from typing import IO

import numpy as np

__all__ = [
    "INFLATE_GRACE",
    "MAX_INFLATE_RATIO",
    "check_inflation",
    "check_member_size",
    "check_memory",
    "read_exactly",
    "read_npy_member",
]

# Bytes an .npy member may hold beyond its array's data: the magic string and header (numpy's
# are a few hundred bytes; the format allows up to 4 GiB, which no real file needs).
NPY_OVERHEAD = 64 * 1024

# How many times its compressed size a member may inflate to. Real arrays compress a few times
# (images, sparse features tens of times); deflate's limit, reached by a zip bomb, is ~1030x.
# The same rule as Apache POI's ZipSecureFile (minimum inflate ratio 0.01).
MAX_INFLATE_RATIO = 100
# A member inflating to at most this is never refused for its ratio (small zero arrays
# compress a thousandfold and are harmless).
INFLATE_GRACE = 1 << 20

# Data is inflated this many bytes at a time, so no read allocates more than the result.
CHUNK = 1 << 20


def memory_limit() -> int:
    """Bytes this process may hold: the machine's memory, or less under ``RLIMIT_AS``."""
    try:
        limit = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        limit = 1 << 62
    try:
        import resource  # POSIX only
    except ImportError:
        return limit
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return limit if soft == resource.RLIM_INFINITY else min(limit, soft)


def size_text(n: float) -> str:
    """``n`` bytes for a message: ``24 bytes``, ``3.6 TiB``."""
    if n < 1024:
        return f"{int(n)} bytes"
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        n /= 1024
        if n < 1024 or unit == "TiB":
            break
    return f"{n:.1f} {unit}"


def check_inflation(name: str, inflated: int, stored: int) -> None:
    """Refuse ``name`` if ``stored`` compressed bytes claim to inflate to ``inflated`` bytes,
    beyond ``INFLATE_GRACE`` and more than ``MAX_INFLATE_RATIO`` times: a zip bomb."""
    if inflated <= INFLATE_GRACE or inflated <= MAX_INFLATE_RATIO * stored:
        return
    ratio = f"{inflated / stored:.0f}x" if stored else "from nothing"
    raise ValueError(
        f"{name} inflates from {size_text(stored)} to {size_text(inflated)} ({ratio}), more "
        f"than the {MAX_INFLATE_RATIO}x real array data does; refusing to read it (a zip "
        "bomb?). Genuine data this compressible can be saved uncompressed (np.savez)"
    )


def check_member_size(zf: zipfile.ZipFile, name: str, dtype: np.dtype, shape: tuple) -> None:
    """Refuse member ``name`` unless the zip directory's size for it fits a ``dtype`` array of
    ``shape`` (its data plus an .npy header), inflates no further than real data does, and the
    array fits the memory this process may use."""
    info = zf.getinfo(name)
    nbytes = dtype.itemsize * math.prod(shape)
    if not nbytes <= info.file_size <= nbytes + NPY_OVERHEAD:
        raise ValueError(
            f"{name} should hold {size_text(nbytes)} ({dtype} {list(shape)}) but the zip "
            f"directory says it holds {size_text(info.file_size)}; refusing to read it"
        )
    check_inflation(name, info.file_size, info.compress_size)
    check_memory(name, nbytes)


def check_memory(name: str, nbytes: int) -> None:
    """Refuse ``name``'s ``nbytes`` of data if they exceed what this process may use."""
    limit = memory_limit()
    if nbytes > limit:
        raise ValueError(
            f"{name} holds {size_text(nbytes)}, more than this process may use "
            f"({size_text(limit)}); refusing to read it"
        )


def read_exactly(fh: IO[bytes], n: int, name: str) -> bytearray:
    """The next ``n`` bytes of ``fh``, read ``CHUNK`` bytes at a time into one buffer;
    ``EOFError`` naming ``name`` if it ends first, ``ValueError`` if memory runs out."""
    try:
        data = bytearray(n)
    except MemoryError:
        raise ValueError(f"not enough memory to read {name} ({size_text(n)})") from None
    view, got = memoryview(data), 0
    while got < n:
        k = fh.readinto(view[got : got + CHUNK])
        if not k:
            raise EOFError(f"{name} is truncated")
        got += k
    return data


def _npy_header(member: IO[bytes], name: str) -> tuple[np.dtype, tuple, bool]:
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
    info = zf.getinfo(name)
    check_inflation(name, info.file_size, info.compress_size)  # before a byte is inflated
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
        data = read_exactly(member, dtype.itemsize * math.prod(shape), name)
    arr = np.frombuffer(data, dtype=dtype)
    if fortran:
        return arr.reshape(shape[::-1]).T
    return arr.reshape(shape)
