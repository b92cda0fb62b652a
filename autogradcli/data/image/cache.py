"""Decoded images kept for later epochs: each image is decoded the first time it is asked for
(in whichever process asks: the main one or a DataLoader worker) and its uint8 pixels written to
an anonymous temporary file, from which every later request reads them back (one ``pread``)
instead of decoding the file again.

The file is unlinked as soon as it is made (``tempfile.TemporaryFile``, in ``TMPDIR``), as the
text kind's ids are, and never mapped: pixels are read one image at a time, so the process's
memory does not grow with the number of images (the OS's page cache holds the file). Each
record is a one-byte "written" flag and the pixels; the flag is written after the pixels, so a
record is read back only once complete. Worker processes forked from the owner share the open
file and fill it for each other; a pickled copy (a spawned worker) decodes every image itself.
Images whose pixels would take more than ``MAX_BYTES`` are not kept at all, and a write that
fails (the temporary folder full) stops the keeping: the images are decoded each time, as
without the store, rather than failing the run."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from typing import Any

import numpy as np

from .decode import BadImage, Header, decode_uint8, probe, probe_and_decode

__all__ = ["DecodedImages"]

_WRITTEN = b"\x01"
MAX_BYTES = 4 << 30  # pixels kept at most (4 GiB of the temporary folder)


class DecodedImages:
    """The images of ``files`` decoded once at ``size`` = (h, w) and ``channels``."""

    def __init__(self, files: Sequence[str], size: tuple[int, int], channels: int) -> None:
        self.files, self.size, self.channels = list(files), size, channels
        self.shape = (channels, size[0], size[1])
        self._record = 1 + channels * size[0] * size[1]
        self._fh: Any = None  # None: every image decoded when asked for
        self._writable = True
        if len(self.files) * self._record <= MAX_BYTES:
            try:  # open while the images are used; closed (space freed) when this object goes
                self._fh = tempfile.TemporaryFile(prefix="agrad-images-")  # noqa: SIM115
                self._fh.truncate(len(self.files) * self._record)  # unwritten records: zeros
            except OSError:  # no usable temporary folder: decode each time, as without it
                self._fh = None

    def pixels(self, index: int) -> np.ndarray:
        """Image ``index``'s uint8 (channels, h, w): read back if decoded before, else decoded
        now (``BadImage`` if it cannot be) and kept."""
        if self._fh is None:
            return decode_uint8(self.files[index], self.size, self.channels)
        offset = index * self._record
        raw = _read(self._fh, self._record, offset)
        if raw[:1] == _WRITTEN and len(raw) == self._record:
            return np.frombuffer(raw, np.uint8, offset=1).reshape(self.shape)
        pixels = np.ascontiguousarray(decode_uint8(self.files[index], self.size, self.channels))
        self._keep(offset, pixels)
        return pixels

    def probe_and_keep(self, index: int) -> Header:
        """The header of image ``index`` (``probe``), its pixels decoded from the same opening
        and kept when this store keeps images (a file whose pixels fail to decode is kept
        nothing: ``pixels`` raises its ``BadImage`` when asked)."""
        if self._fh is None:
            return probe(self.files[index])
        header, pixels = probe_and_decode(self.files[index], self.size, self.channels)
        if not isinstance(pixels, BadImage):
            self._keep(index * self._record, np.ascontiguousarray(pixels))
        return header

    def _keep(self, offset: int, pixels: np.ndarray) -> None:
        if self._writable:
            try:
                _write(self._fh, pixels.tobytes(), offset + 1)
                _write(self._fh, _WRITTEN, offset)
            except OSError:  # the temporary folder is full: keep no more (this process)
                self._writable = False

    def __getstate__(self) -> dict[str, Any]:
        """A pickled copy (a spawned worker) cannot share the file: it decodes each image."""
        return {**self.__dict__, "_fh": None}


def _read(fh: Any, size: int, offset: int) -> bytes:
    if hasattr(os, "pread"):
        return os.pread(fh.fileno(), size, offset)
    fh.seek(offset)  # Windows: one process uses the file (workers are spawned there)
    return fh.read(size)


def _write(fh: Any, data: bytes, offset: int) -> None:
    if hasattr(os, "pwrite"):
        os.pwrite(fh.fileno(), data, offset)
        return
    fh.seek(offset)
    fh.write(data)
    fh.flush()
