"""Zip bombs built cheaply for the hostile suite (no tests here): a zip member that inflates to
1 GiB of zeros from ~1 MB, written without ever holding or compressing the gigabyte.

Raw deflate of 1 MiB of zeros ended with a full flush resets the compressor, so the same ~1 KB
block repeated 1024 times is a valid stream for 1 GiB. The archive is written by hand (local
headers, central directory, end record) because ``zipfile`` cannot store pre-compressed data.
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib

import numpy as np

GIB = 1 << 30
_MIB = 1 << 20


def npy_header(dtype: str, shape: tuple[int, ...]) -> bytes:
    """The bytes of an ``.npy`` header (magic and dict) for an array of ``dtype`` and ``shape``."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": dtype, "fortran_order": False, "shape": shape}
    )
    return b"\x93NUMPY\x01\x00" + buf.getvalue()[8:]


def deflated_zeros(prefix: bytes, mib: int) -> tuple[bytes, int, int]:
    """(raw deflate stream, CRC-32, inflated size) of ``prefix`` then ``mib`` MiB of zeros."""
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = comp.compress(prefix) + comp.flush(zlib.Z_FULL_FLUSH)
    zeros = bytes(_MIB)
    block = comp.compress(zeros) + comp.flush(zlib.Z_FULL_FLUSH)
    crc = zlib.crc32(prefix)
    for _ in range(mib):
        crc = zlib.crc32(zeros, crc)
    return head + block * mib + comp.flush(), crc, len(prefix) + mib * _MIB


def write_zip(path: str, members: dict[str, bytes | tuple[bytes, int, int]]) -> None:
    """A zip at ``path``: a ``bytes`` value is stored as is; a ``(deflate stream, crc, size)``
    from :func:`deflated_zeros` is written as a deflated member."""
    out, central = io.BytesIO(), io.BytesIO()
    for name, value in members.items():
        if isinstance(value, bytes):
            data, crc, size, method = value, zlib.crc32(value), len(value), zipfile.ZIP_STORED
        else:
            (data, crc, size), method = value, zipfile.ZIP_DEFLATED
        raw = name.encode()
        offset = out.tell()
        fields = (20, 0, method, 0, 0x21, crc, len(data), size, len(raw))
        out.write(struct.pack("<4s5HL2L2H", b"PK\x03\x04", *fields, 0) + raw + data)
        central.write(
            struct.pack("<4s6HL2L5H2L", b"PK\x01\x02", 20, *fields, 0, 0, 0, 0, 0, offset) + raw
        )
    start, cd = out.tell(), central.getvalue()
    n = len(members)
    out.write(cd + struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, n, n, len(cd), start, 0))
    with open(path, "wb") as f:
        f.write(out.getvalue())


def npz_bomb(path: str, y: np.ndarray) -> None:
    """An ``.npz`` whose ``x.npy`` declares (and inflates to) 1 GiB of float32 zeros from ~1 MB;
    ``y`` stored beside it."""
    buf = io.BytesIO()
    np.save(buf, y)
    x = deflated_zeros(npy_header("<f4", (GIB // 4,)), GIB // _MIB)
    write_zip(path, {"x.npy": x, "y.npy": buf.getvalue()})
