"""CPU threads, with torch's API: ``set_num_threads``/``get_num_threads`` (the threads numpy's
BLAS uses for the matrix products, set through threadpoolctl) and the interop settings.

The count follows ``torch.set_num_threads``/``OMP_NUM_THREADS``. An intra-op pool that split
ReLU, im2col/col2im, pooling and layout copies over these threads was built, tested bit-for-bit
and measured (bench/README.md, "Threads"): on the 2-core machine class it made the CNN step
1.1-1.3x slower than leaving that work on one thread, so it was taken out; products are the only
work spread over the cores.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np

_lock = threading.Lock()  # guards the settings
_num_threads: int | None = None
_num_interop: int | None = None  # set once, by set_num_interop_threads


def usable_cores() -> int:
    """The CPU cores this process may run on (its affinity; the machine's count elsewhere)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _default_threads() -> int:
    """The usable cores, or ``OMP_NUM_THREADS`` (``MKL_NUM_THREADS`` first) capped at them,
    as torch's CPU build reports; a value that is not a positive integer is ignored."""
    cores = usable_cores()
    for name in ("MKL_NUM_THREADS", "OMP_NUM_THREADS"):
        value = os.environ.get(name, "").strip()
        if value.isdigit() and int(value) > 0:
            return min(int(value), cores)
    return cores


def _check_count(n: Any, name: str) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise RuntimeError(f"{name} expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError(f"{name} expects a positive integer")
    return int(n)


def get_num_threads() -> int:
    """The CPU thread count set for the matrix products (torch.get_num_threads)."""
    global _num_threads
    if _num_threads is None:
        _num_threads = _default_threads()
    return _num_threads


def set_num_threads(n: int) -> None:
    """Use ``n`` CPU threads, as torch.set_num_threads: numpy's BLAS threads (through
    threadpoolctl), which carry the matrix products; other ops run on one thread."""
    global _num_threads
    n = _check_count(n, "set_num_threads")
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=n, user_api="blas")  # stays in effect: not used as a context
    with _lock:
        _num_threads = n


def get_num_interop_threads() -> int:
    """torch.get_num_interop_threads: kept for programs that ask; ops here run one at a time."""
    return _num_interop if _num_interop is not None else max(1, os.cpu_count() or 1)


def set_num_interop_threads(n: int) -> None:
    """torch.set_num_interop_threads: may be called once, as torch allows."""
    global _num_interop
    n = _check_count(n, "set_num_interop_threads")
    with _lock:
        if _num_interop is not None:
            raise RuntimeError(
                "Error: cannot set number of interop threads after parallel work has started "
                "or set_num_interop_threads called"
            )
        _num_interop = n


class _BlasHold:
    """Numpy's BLAS held to one thread while any caller holds it (a count under a lock, so
    calls overlapping from several Python threads restore the original count once, last out)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._count = 0
        self._limiter: Any = None
        self._blas: Any = None  # threadpoolctl's view of the BLAS libraries (0.7 ms to build)

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        with self._lock:
            if self._count == 0:
                if self._blas is None:
                    from threadpoolctl import ThreadpoolController

                    self._blas = ThreadpoolController().select(user_api="blas")
                self._limiter = self._blas.limit(limits=1)
            self._count += 1
        try:
            yield
        finally:
            with self._lock:
                self._count -= 1
                if self._count == 0:
                    self._limiter.restore_original_limits()


_HOLD = _BlasHold()


def blas_on_one_thread() -> Any:
    """A context holding numpy's BLAS to one thread (the convolution's image path: products
    too small to share); nested and overlapping holds restore the count once, last out."""
    return _HOLD.hold()
