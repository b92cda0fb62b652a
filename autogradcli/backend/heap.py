"""glibc's malloc thresholds for a training process.

A step frees and reallocates the same big arrays (activations, columns, gradients) every
iteration. With glibc's defaults, blocks over its dynamic mmap threshold go back to the operating
system when freed and come back as fresh pages, page-faulted in again on first write: thousands
of minor faults a step (the ResNet step: about 10,000). Raising the mmap threshold to 32 MiB and
the trim threshold to 1 GiB keeps them in the heap for the next step. ``agrad train`` sets this
for its own process; ``import autogradcli`` never does (a library does not change its host's
allocator). bench/ sets it for both engines alike (``bench_nn.tune_malloc``).
"""

from __future__ import annotations

import ctypes

__all__ = ["keep_freed_blocks"]

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
MMAP_THRESHOLD = 32 * 1024 * 1024
TRIM_THRESHOLD = 1024 * 1024 * 1024


def keep_freed_blocks() -> bool:
    """Raise glibc's mmap (32 MiB) and trim (1 GiB) thresholds for this process; False where the
    C library is not glibc (macOS, musl) and nothing changed."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    ok = mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
    ok &= mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    return bool(ok)
