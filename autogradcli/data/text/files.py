"""Reading text files for ``dataset: text``: UTF-8 only, with a decoding error located by line
and byte offset, and the ``.txt`` files of a folder in a stable order."""

from __future__ import annotations

import os

from ..kinds.base import DataError, Problem

__all__ = ["TEXT_SUFFIXES", "read_utf8", "text_files"]

TEXT_SUFFIXES = (".txt",)  # what counts as a text file in a folder


def read_utf8(path: str) -> str:
    """The text of ``path`` decoded as UTF-8 (a leading BOM dropped, newlines kept as written).

    A byte that is not UTF-8 is a ``DataError`` naming the file, its line and byte offset."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as err:
        raise DataError([Problem(path, f"cannot read the file: {err.strerror or err}")]) from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        start = 3 if raw.startswith(b"\xef\xbb\xbf") else 0
        offset = err.start + start
        line = raw.count(b"\n", 0, offset) + 1
        why = (
            f"line {line}, byte offset {offset}: byte 0x{raw[offset]:02x} is not UTF-8 text "
            f"({err.reason}); save the file as UTF-8"
        )
        raise DataError([Problem(path, why)]) from None


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
