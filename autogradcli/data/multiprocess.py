"""The DataLoader's multi-process iterator: the main process draws the batch indices and hands
them to ``num_workers`` worker processes round-robin, keeping ``prefetch_factor`` tasks per
worker in flight, and yields the batches in the sampler's order (``in_order``)."""

from __future__ import annotations

import contextlib
import itertools
import multiprocessing
import queue
import weakref
from collections.abc import Iterator
from typing import Any

from .worker import ExceptionWrapper, WorkerStop, dumps, loads, worker_loop

__all__ = ["MultiProcessIter", "resolve_context"]

_STATUS_CHECK_S = 5.0  # how often a waiting main process checks that its workers are alive


def resolve_context(context: Any) -> Any:
    """The multiprocessing context to start workers with: ``fork`` where the platform has it
    (PyTorch's default on Linux), else the platform's default; a name or a context as given."""
    if context is None:
        methods = multiprocessing.get_all_start_methods()
        return multiprocessing.get_context("fork" if "fork" in methods else None)
    if isinstance(context, str):
        return multiprocessing.get_context(context)
    return context


class MultiProcessIter:
    """Iterates a DataLoader with worker processes; ``reset`` starts another epoch on the same
    workers (``persistent_workers``)."""

    def __init__(self, loader: Any, order: Iterator[Any], base_seed: int) -> None:
        ctx = resolve_context(loader.multiprocessing_context)
        self._num_workers = loader.num_workers
        self._prefetch = loader.prefetch_factor * loader.num_workers
        self._timeout = loader.timeout
        self._persistent = loader.persistent_workers
        self._in_order = loader.in_order
        self._iterable = loader._is_iterable
        payload: Any = (
            loader.dataset,
            loader._auto_collation,
            loader.collate_fn,
            loader.drop_last,
            loader.batch_size,
            loader.worker_init_fn,
        )
        if ctx.get_start_method() != "fork":
            payload = dumps(payload)  # spawned workers get the loader's parts pickled
        self._result_queue = ctx.Queue()
        self._index_queues, self._workers = [], []
        for worker_id in range(self._num_workers):
            index_queue = ctx.Queue()
            index_queue.cancel_join_thread()
            w = ctx.Process(
                target=worker_loop,
                args=(
                    payload,
                    index_queue,
                    self._result_queue,
                    base_seed,
                    worker_id,
                    self._num_workers,
                ),
                daemon=True,
            )
            w.start()
            self._index_queues.append(index_queue)
            self._workers.append(w)
        self._shutdown = weakref.finalize(
            self, _shutdown_workers, self._workers, self._index_queues, self._result_queue
        )
        self._epoch = -1
        self.reset(order, first=True)

    def reset(self, order: Iterator[Any], first: bool = False) -> None:
        """Start an epoch over ``order`` (what each task fetches): all workers active, tasks
        prefetched."""
        self._epoch += 1
        self._index_iter = order
        self._send_idx = self._rcvd_idx = 0
        self._tasks: dict[int, tuple[Any, ...]] = {}  # task id -> (worker,) or (worker, data)
        self._active = [True] * self._num_workers
        self._cycle = itertools.cycle(range(self._num_workers))
        if not first and self._iterable:
            for q in self._index_queues:
                q.put(("resume", self._epoch))
        for _ in range(self._prefetch):
            self._put_task()

    def _put_task(self) -> None:
        for _ in range(self._num_workers):
            worker_id = next(self._cycle)
            if self._active[worker_id]:
                break
        else:
            return
        try:
            index = next(self._index_iter)
        except StopIteration:
            return
        self._index_queues[worker_id].put((self._epoch, self._send_idx, index))
        self._tasks[self._send_idx] = (worker_id,)
        self._send_idx += 1

    def __iter__(self) -> MultiProcessIter:
        return self

    def __next__(self) -> Any:
        while True:
            # skip tasks of workers whose stream ended (and tasks already handed out)
            while self._rcvd_idx < self._send_idx:
                info = self._tasks.get(self._rcvd_idx)
                if info is not None and (len(info) == 2 or self._active[info[0]]):
                    break
                self._tasks.pop(self._rcvd_idx, None)
                self._rcvd_idx += 1
            else:
                if not self._persistent:
                    self.close()
                raise StopIteration
            info = self._tasks[self._rcvd_idx]
            if len(info) == 2:  # arrived earlier, out of order
                del self._tasks[self._rcvd_idx]
                self._rcvd_idx += 1
                return self._process(info[1])
            task_id, data = self._get()
            if isinstance(data, WorkerStop):
                self._active[data.worker_id] = False
                self._tasks.pop(task_id, None)
                continue
            if task_id == self._rcvd_idx:
                del self._tasks[task_id]
                self._rcvd_idx += 1
                return self._process(data)
            if not self._in_order:
                del self._tasks[task_id]
                return self._process(data)
            self._tasks[task_id] += (data,)

    def _process(self, data: Any) -> Any:
        self._put_task()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def _get(self) -> tuple[int, Any]:
        """The next result of this epoch from any worker, watching timeout and worker deaths."""
        while True:
            try:
                wait = self._timeout if self._timeout > 0 else _STATUS_CHECK_S
                epoch, task_id, blob = self._result_queue.get(timeout=wait)
            except queue.Empty:
                if self._timeout > 0:
                    raise RuntimeError(
                        f"DataLoader timed out after {self._timeout} seconds"
                    ) from None
                dead = [w.pid for w in self._workers if not w.is_alive()]
                if dead:
                    self.close()
                    pids = ", ".join(str(p) for p in dead)
                    raise RuntimeError(
                        f"DataLoader worker (pid(s) {pids}) exited unexpectedly"
                    ) from None
                continue
            if epoch == self._epoch:  # results of an abandoned epoch are dropped
                return task_id, loads(blob)

    def worker_pids(self) -> list[int]:
        return [w.pid for w in self._workers]

    def close(self) -> None:
        """Stop the workers (also done when the iterator is garbage-collected)."""
        self._shutdown()

    def __del__(self) -> None:
        self._shutdown()


def _shutdown_workers(workers: list[Any], index_queues: list[Any], result_queue: Any) -> None:
    for q in index_queues:
        with contextlib.suppress(OSError, ValueError):
            q.put(None)
    for w in workers:
        w.join(timeout=_STATUS_CHECK_S)
        if w.is_alive():
            w.terminate()
            w.join()
    for q in [*index_queues, result_queue]:
        q.cancel_join_thread()
        q.close()
