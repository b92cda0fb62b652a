"""Intra-op threads: one array operation split over a small persistent pool, as torch's.

``parallel_for(total, body)`` runs ``body(start, stop)`` over fixed, disjoint slices of
``range(total)``: the caller's thread takes the first slice, pool threads the others, and the
call returns when all are done. numpy releases the GIL inside large ufuncs and copies, so the
slices really run at once. Bodies only write disjoint outputs and never reduce across units, so
results are bit-for-bit the same whatever the thread count. Work below ``GRAIN`` elements a slice
runs inline, without the pool. Only host (numpy) work is split: device arrays are already
parallel. Thread counts follow ``torch.set_num_threads``/``OMP_NUM_THREADS``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

# Elements a slice must hold for splitting to pay: below ~64K float32 (256 KiB) one numpy pass
# takes ~20 us, and waking a pool thread costs ~5-15 us (measured in bench/README.md).
GRAIN = 1 << 16

_lock = threading.Lock()  # guards the settings and the pool's creation
_num_threads: int | None = None
_num_interop: int | None = None
_interop_set = False


def _usable_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _default_threads() -> int:
    """The usable cores, or ``OMP_NUM_THREADS`` (``MKL_NUM_THREADS`` first) capped at them,
    as torch's CPU build reports; a value that is not a positive integer is ignored."""
    cores = _usable_cores()
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
    """The number of threads one CPU operation may use (torch.get_num_threads)."""
    global _num_threads
    if _num_threads is None:
        _num_threads = _default_threads()
    return _num_threads


def set_num_threads(n: int) -> None:
    """Use ``n`` threads for intra-op work on the CPU, numpy's BLAS included (through
    threadpoolctl), as torch.set_num_threads."""
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
    global _num_interop, _interop_set
    n = _check_count(n, "set_num_interop_threads")
    with _lock:
        if _interop_set:
            raise RuntimeError(
                "Error: cannot set number of interop threads after parallel work has started "
                "or set_num_interop_threads called"
            )
        _num_interop, _interop_set = n, True


class _Pool:
    """``size`` worker threads, each woken by its own lock for one slice per job."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.job: tuple[Callable[[int, int], None], list[int]] | None = None
        self.errors: list[BaseException | None] = [None] * size
        self.wake = [threading.Lock() for _ in range(size)]
        self.done = [threading.Lock() for _ in range(size)]
        for i in range(size):
            self.wake[i].acquire()
            self.done[i].acquire()
            threading.Thread(
                target=self._work, args=(i,), name=f"autogradcli-intraop-{i + 1}", daemon=True
            ).start()

    def _work(self, i: int) -> None:
        while True:
            self.wake[i].acquire()
            job = self.job
            if job is None:  # retired
                self.done[i].release()
                return
            body, bounds = job
            try:
                body(bounds[i + 1], bounds[i + 2])
            except BaseException as err:
                self.errors[i] = err
            self.done[i].release()

    def run(self, body: Callable[[int, int], None], bounds: list[int]) -> None:
        """Slices 1.. on the workers, slice 0 here; the first error (in slice order) raised."""
        helpers = len(bounds) - 2
        self.job = (body, bounds)
        for i in range(helpers):
            self.wake[i].release()
        try:
            body(bounds[0], bounds[1])
        finally:  # the workers still write into the caller's arrays: always wait for them
            for i in range(helpers):
                self.done[i].acquire()
            self.job = None
        errors = [e for e in self.errors[:helpers] if e is not None]
        self.errors[:helpers] = [None] * helpers
        if errors:
            raise errors[0]

    def retire(self) -> None:
        self.job = None
        for i in range(self.size):
            self.wake[i].release()


_pool: _Pool | None = None
_busy = threading.Lock()  # held while the pool runs a job: nested or concurrent calls go inline


def _reset_after_fork() -> None:
    global _pool, _busy, _lock
    _pool, _busy, _lock = None, threading.Lock(), threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


def _get_pool(size: int) -> _Pool:
    global _pool
    with _lock:
        if _pool is None or _pool.size < size:
            if _pool is not None:
                _pool.retire()
            _pool = _Pool(size)
        return _pool


def split(total: int, grain: int = GRAIN) -> list[int]:
    """The slice bounds ``parallel_for`` uses: as many equal slices as threads, each at least
    ``grain`` units; ``[0, total]`` (one slice) when the work is too small to split."""
    parts = min(get_num_threads(), total // max(1, grain))
    if parts <= 1:
        return [0, total]
    return [total * k // parts for k in range(parts + 1)]


def parallel_for(
    total: int, body: Callable[[int, int], None], grain: int = GRAIN, array: Any = None
) -> None:
    """Call ``body(start, stop)`` over disjoint slices covering ``range(total)`` once, at most one
    slice per thread and each at least ``grain`` units. Runs inline (one call, no pool) when
    there is one thread, the work is small, ``array`` is not a host array, or the pool is busy
    (a nested or concurrent call). An exception in any slice is raised here."""
    if total <= 0:
        return
    if array is not None and type(array) is not np.ndarray:
        body(0, total)
        return
    bounds = split(total, grain)
    if len(bounds) <= 2 or not _busy.acquire(blocking=False):
        body(0, total)
        return
    try:
        _get_pool(len(bounds) - 2).run(body, bounds)
    finally:
        _busy.release()


def splits_flat(*arrays: Any) -> bool:
    """True when ``arrays`` are C-contiguous host arrays of one size, big enough that a flat
    elementwise pass over them is worth splitting (see ``map_flat``)."""
    first = arrays[0]
    if type(first) is not np.ndarray or first.size < 2 * GRAIN or get_num_threads() < 2:
        return False
    return all(
        type(a) is np.ndarray and a.size == first.size and a.flags.c_contiguous for a in arrays
    )


def map_flat(fn: Callable[..., Any], out: Any, *arrays: Any) -> None:
    """``fn(*array_slices, out=out_slice)`` over flat slices of the C-contiguous ``arrays`` and
    ``out`` (all one size; check with ``splits_flat``), the slices spread over the threads."""
    flats = [a.reshape(-1) for a in arrays]
    flat_out = out.reshape(-1)

    def body(start: int, stop: int) -> None:
        fn(*(a[start:stop] for a in flats), out=flat_out[start:stop])

    parallel_for(flat_out.size, body, array=out)
