"""Reading text files for ``dataset: text``: UTF-8 only, decoded in bounded chunks, with a
decoding error located by line and byte offset, and the ``.txt`` files of a folder in a stable
order."""

from __future__ import annotations

import codecs
import os
from collections.abc import Iterator

from ..kinds.base import DataError, Problem

__all__ = ["CHUNK_BYTES", "TEXT_SUFFIXES", "iter_utf8", "read_utf8", "text_files"]

TEXT_SUFFIXES = (".txt",)  # what counts as a text file in a folder
CHUNK_BYTES = 1 << 20  # bytes read at a time: a text of any size is never held whole


def iter_utf8(path: str, chunk_bytes: int | None = None) -> Iterator[str]:
    """The text of ``path`` decoded as UTF-8, read ``chunk_bytes`` (``CHUNK_BYTES``) at a time (a
    multibyte character split between reads is joined; a leading BOM dropped; newlines kept).

    A byte that is not UTF-8 is a ``DataError`` naming the file, its line and byte offset."""
    size = chunk_bytes or CHUNK_BYTES
    decoder = codecs.getincrementaldecoder("utf-8")()
    fed = lines = 0  # bytes read before this chunk, and the newlines among them
    first = True
    try:
        with open(path, "rb") as fh:
            while True:
                raw = fh.read(size)
                pending = decoder.getstate()[0]  # an unfinished character from the last read
                try:
                    text = decoder.decode(raw, final=not raw)
                except UnicodeDecodeError as err:
                    _bad_byte(path, pending + raw, err, fed - len(pending), lines)
                if first and text:
                    text, first = text.removeprefix("\ufeff"), False
                if text:
                    yield text
                if not raw:
                    return
                fed, lines = fed + len(raw), lines + raw.count(b"\n")
    except OSError as err:
        raise DataError([Problem(path, f"cannot read the file: {err.strerror or err}")]) from None


def _bad_byte(path: str, raw: bytes, err: UnicodeDecodeError, start: int, lines: int) -> None:
    """Raise the located ``DataError`` of ``err``, raised decoding ``raw`` (which begins at byte
    ``start`` of the file, after ``lines`` newlines)."""
    offset = start + err.start
    line = lines + raw.count(b"\n", 0, err.start) + 1
    why = (
        f"line {line}, byte offset {offset}: byte 0x{raw[err.start]:02x} is not UTF-8 text "
        f"({err.reason}); save the file as UTF-8"
    )
    raise DataError([Problem(path, why)]) from None


def read_utf8(path: str) -> str:
    """The whole text of ``path`` (see ``iter_utf8``), for files read whole: tables, prompts."""
    return "".join(iter_utf8(path))


def text_files(folder: str) -> list[str]:
    """The text files (``TEXT_SUFFIXES``) under ``folder``, recursively, hidden ones skipped,
    sorted by relative path so every run reads them in the same order."""
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in files:
            if not name.startswith(".") and name.lower().endswith(TEXT_SUFFIXES):
                found.append(os.path.join(root, name))
    return sorted(found, key=lambda p: os.path.relpath(p, folder))
