"""Intra-op threads: one array operation split over a small persistent pool, as torch's.

``parallel_for(total, body)`` runs ``body(start, stop)`` over fixed, disjoint slices of
``range(total)``: the caller's thread takes the first slice, pool threads the others (the
caller also runs any slice whose thread has not started yet), and the call returns when all
are done. numpy releases the GIL inside large ufuncs and copies, so the
slices really run at once. Bodies only write disjoint outputs and never reduce across units, so
results are bit-for-bit the same whatever the thread count. Work below ``GRAIN`` elements a slice
runs inline, without the pool. Only host (numpy) work is split: device arrays are already
parallel. Thread counts follow ``torch.set_num_threads``/``OMP_NUM_THREADS``.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

# Elements a slice must hold for splitting to pay: one float32 pass over 64K elements takes ~25 us
# and handing a slice to a pool thread ~16 us at best (bench/README.md, "Threads").
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


class _Job:
    """One ``parallel_for`` call: fixed slices, each run once, by its worker or by the caller.

    The caller runs slice 0, then claims and runs every slice whose worker has not started it
    yet (on a loaded machine a woken thread may wait for a core), and waits only for the slices
    a worker did start. Which thread runs a slice never changes its bounds, so neither the bits.
    """

    __slots__ = ("body", "bounds", "claims", "done", "errors")

    def __init__(self, body: Callable[[int, int], None], bounds: list[int]) -> None:
        parts = len(bounds) - 1
        self.body, self.bounds = body, bounds
        self.claims = [threading.Lock() for _ in range(parts)]
        self.done = [threading.Lock() for _ in range(parts)]  # released when a worker finishes
        for lock in self.done:
            lock.acquire()
        self.errors: list[BaseException | None] = [None] * parts

    def run_slice(self, s: int) -> None:
        try:
            self.body(self.bounds[s], self.bounds[s + 1])
        except BaseException as err:  # raised in the caller, after every slice has stopped
            self.errors[s] = err


class _Pool:
    """``size`` worker threads; worker ``i`` is offered slice ``i + 1`` of each job."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.queues: list[queue.SimpleQueue[_Job | None]] = []
        for i in range(size):
            self.queues.append(queue.SimpleQueue())
            threading.Thread(
                target=self._work, args=(i,), name=f"autogradcli-intraop-{i + 1}", daemon=True
            ).start()

    def _work(self, i: int) -> None:
        jobs, s = self.queues[i], i + 1
        while True:
            job = jobs.get()
            if job is None:  # retired
                return
            if job.claims[s].acquire(blocking=False):
                job.run_slice(s)
                job.done[s].release()

    def run(self, body: Callable[[int, int], None], bounds: list[int]) -> None:
        """Run ``body`` over the slices of ``bounds``; the first error (in slice order) raised."""
        job = _Job(body, bounds)
        parts = len(bounds) - 1
        for i in range(parts - 1):
            self.queues[i].put(job)
        job.run_slice(0)
        failed = job.errors[0] is not None
        started = []  # slices a worker claimed: the caller waits for those only
        for s in range(1, parts):
            if job.claims[s].acquire(blocking=False):
                if not failed:  # after an error the unstarted slices are skipped
                    job.run_slice(s)
            else:
                started.append(s)
        interrupted: BaseException | None = None
        for s in started:  # the workers write into the caller's arrays: always wait for them
            while True:
                try:
                    job.done[s].acquire()
                    break
                except KeyboardInterrupt as err:
                    interrupted = err
        errors = [e for e in job.errors if e is not None]
        if errors:
            raise errors[0]
        if interrupted is not None:
            raise interrupted

    def retire(self) -> None:
        for jobs in self.queues:
            jobs.put(None)


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
