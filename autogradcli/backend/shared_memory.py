"""Array memory other processes can map: each shared array lives in its own unlinked file in
/dev/shm (the temp folder elsewhere), passed to other processes as a file descriptor, so no name
is ever left behind, even when a process is killed (PyTorch's ``file_descriptor`` strategy)."""

from __future__ import annotations

import mmap
import os
import tempfile
from dataclasses import dataclass
from typing import Any

import numpy as np

_SHM_DIR = "/dev/shm"


@dataclass(frozen=True)
class Segment:
    """One mapping: its open descriptor (kept to pass on), the map and its address range."""

    fd: int
    size: int
    map: mmap.mmap
    address: int


_SEGMENTS: list[Segment] = []


def _new_fd(size: int) -> int:
    folder = _SHM_DIR if os.path.isdir(_SHM_DIR) else tempfile.gettempdir()
    fd, path = tempfile.mkstemp(prefix="autogradcli_", dir=folder)
    os.unlink(path)  # the memory lives while a descriptor or a map holds it
    os.ftruncate(fd, size)
    return fd


def attach(fd: int, size: int) -> Segment:
    """Map a descriptor made by another process (or by ``shared_copy``), keeping it open."""
    mapping = mmap.mmap(fd, size)
    address = np.frombuffer(mapping, np.uint8).__array_interface__["data"][0]
    segment = Segment(fd, size, mapping, address)
    _SEGMENTS.append(segment)
    return segment


def array_in(segment: Segment, offset: int, shape: tuple, strides: tuple, dtype: Any) -> np.ndarray:
    """The array at ``offset`` bytes into ``segment`` with the given layout (a view, no copy)."""
    return np.ndarray(shape, dtype, buffer=segment.map, offset=offset, strides=strides)


def shared_copy(arr: np.ndarray) -> np.ndarray:
    """A C-contiguous copy of ``arr`` in a new shared segment."""
    size = max(arr.nbytes, 1)
    segment = attach(_new_fd(size), size)
    out = np.ndarray(arr.shape, arr.dtype, buffer=segment.map)
    out[...] = arr
    return out


def find(arr: np.ndarray) -> tuple[Segment, int] | None:
    """The segment holding ``arr``'s memory and the byte offset of its first element, or None."""
    if not isinstance(arr, np.ndarray) or not _SEGMENTS:
        return None
    start = arr.__array_interface__["data"][0]
    for segment in _SEGMENTS:
        if segment.address <= start < segment.address + segment.size or (
            arr.size == 0 and start == segment.address
        ):
            return segment, start - segment.address
    return None
