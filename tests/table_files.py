"""Table files for the tests of ``dataset: table``: the raw penguins CSV the palmerpenguins
package ships, and a Parquet file whose metadata claims more rows than it holds."""

from __future__ import annotations

import os
import struct

import pytest


def penguins_csv() -> str:
    """The path of palmerpenguins' own penguins.csv (344 rows, NA cells); skips without it."""
    pkg = pytest.importorskip("palmerpenguins")
    return os.path.join(os.path.dirname(pkg.__file__), "data", "penguins.csv")


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        if not n:
            return bytes(out + bytes([low]))
        out.append(low | 0x80)


def parquet_claiming(path: str, rows: int) -> str:
    """A 3-row Parquet file at ``path`` whose footer's ``num_rows`` says ``rows``: the footer's
    Thrift field 3 (i64, compact protocol: byte 0x16, then the zigzag varint 6 for 3) is
    rewritten, and the footer length after it."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    pq.write_table(pa.table({"x": [1.0, 2.0, 3.0], "y": ["a", "b", "a"]}), path)
    with open(path, "rb") as fh:
        data = fh.read()
    size = struct.unpack("<I", data[-8:-4])[0]
    body, footer = data[: -8 - size], data[-8 - size : -8]
    at = footer.index(b"\x16\x06")
    footer = footer[:at] + b"\x16" + _varint(2 * rows) + footer[at + 2 :]
    with open(path, "wb") as fh:
        fh.write(body + footer + struct.pack("<I", len(footer)) + b"PAR1")
    assert pq.ParquetFile(path).metadata.num_rows == rows
    return path
