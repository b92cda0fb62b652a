"""Token ids on disk: appended once to an anonymous temporary file, then memory-mapped
read-only (``array``), so a text's ids are paged in by the OS as batches touch them instead of
held in memory; the passes over all of them (counting, re-coding) read the file in bounded
steps (``steps``) without mapping it, so they do not make every page resident either.

The file lives in the system's temporary folder (``TMPDIR`` chooses it) and is unlinked as soon
as it is made (``tempfile.TemporaryFile``): nothing is written next to the user's data or into a
run folder (which does not exist yet while the data is read), and the OS frees the space once
the file and its mapping are closed, even if the process is killed."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator

import numpy as np

__all__ = ["IdFile", "compact_dtype"]


def compact_dtype(size: int) -> np.dtype:
    """The smallest unsigned dtype holding ids ``0 .. size - 1`` (uint8, uint16 or uint32)."""
    for dtype in (np.uint8, np.uint16, np.uint32):
        if size <= int(np.iinfo(dtype).max) + 1:
            return np.dtype(dtype)
    raise ValueError(f"a vocabulary of {size} tokens does not fit in uint32 ids")


class IdFile:
    """Ids of one dtype: ``write`` appends, ``finish`` maps them as ``array``."""

    def __init__(self, dtype: np.dtype) -> None:
        self.dtype, self.count = np.dtype(dtype), 0
        self.array: np.ndarray = np.zeros(0, dtype=self.dtype)
        # open as long as the ids are used; closed (and freed) when this object goes
        self._fh = tempfile.TemporaryFile(prefix="agrad-ids-")  # noqa: SIM115

    def write(self, ids: np.ndarray) -> None:
        """Append ``ids`` (cast to the file's dtype)."""
        self._fh.write(np.ascontiguousarray(ids, dtype=self.dtype).tobytes())
        self.count += int(ids.shape[0])

    def finish(self) -> IdFile:
        """Map every id written as the read-only ``array``; no more writes."""
        self._fh.flush()
        if self.count:
            self.array = np.memmap(self._fh, dtype=self.dtype, mode="r", shape=(self.count,))
        return self

    def steps(self, size: int) -> Iterator[tuple[int, np.ndarray]]:
        """(first index, ids) for consecutive runs of at most ``size`` ids, read from the file."""
        item = self.dtype.itemsize
        for first in range(0, self.count, size):
            n = min(size, self.count - first)
            if hasattr(os, "pread"):
                raw = os.pread(self._fh.fileno(), n * item, first * item)
            else:  # Windows
                self._fh.seek(first * item)
                raw = self._fh.read(n * item)
            yield first, np.frombuffer(raw, dtype=self.dtype)
