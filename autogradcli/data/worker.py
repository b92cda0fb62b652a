"""The DataLoader's worker processes: ``get_worker_info()``, the loop a worker runs (seeded as
PyTorch seeds it), and how batches and exceptions travel back to the main process."""

from __future__ import annotations

import io
import os
import pickle
import queue
import random
import sys
import traceback
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ..tensor.random import manual_seed
from ..tensor.tensor import Tensor, wrap
from .collate import default_collate
from .dataset import IterableDataset, fast_batch

__all__ = ["WorkerInfo", "get_worker_info"]

_worker_info: WorkerInfo | None = None
_POLL_S = 5.0  # how often an idle worker checks that its parent is still alive


class WorkerInfo:
    """What a worker process knows about itself: ``id``, ``num_workers``, ``seed`` and its own
    copy of ``dataset``. Read-only, as in PyTorch."""

    __initialized = False

    def __init__(self, **kwargs: Any) -> None:
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs)
        self.__initialized = True

    def __setattr__(self, key: str, val: Any) -> None:
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        super().__setattr__(key, val)

    def __repr__(self) -> str:
        items = ", ".join(f"{k}={getattr(self, k)}" for k in self.__keys)
        return f"{self.__class__.__name__}({items})"


def get_worker_info() -> WorkerInfo | None:
    """In a DataLoader worker process, its ``WorkerInfo``; in the main process, None."""
    return _worker_info


# ----------------------------------------------------------------- transport
class _TransportPickler(pickle.Pickler):
    """Pickles tensors as their arrays: tensors refuse ordinary pickling (files must not run
    code on load), but a worker's batches go only to the process that started it."""

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, Tensor):
            return _rebuild_tensor, (obj._data, obj.requires_grad and obj.is_leaf)
        return NotImplemented


def _rebuild_tensor(arr: Any, requires_grad: bool) -> Tensor:
    t = wrap(arr)
    return t.requires_grad_(True) if requires_grad else t


def dumps(obj: Any) -> bytes:
    buf = io.BytesIO()
    _TransportPickler(buf, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    return buf.getvalue()


def loads(data: bytes) -> Any:
    return pickle.loads(data)


class ExceptionWrapper:
    """An exception caught in a worker, with its traceback as text, to re-raise in the main
    process: ``Caught ValueError in DataLoader worker process 0. Original Traceback ...``.
    A ``DataError`` (a user's file, already located) is re-raised as itself, without one."""

    def __init__(self, exc_info: Any, where: str) -> None:
        from .kinds.base import DataError

        self.exc_type = exc_info[0]
        self.type_name = exc_info[0].__name__
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where
        self.data_error = exc_info[1] if isinstance(exc_info[1], DataError) else None

    def reraise(self) -> None:
        if self.data_error is not None:
            raise self.data_error
        msg = f"Caught {self.type_name} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = _KeyErrorMessage(msg)
        try:
            exception = self.exc_type(msg)
        except Exception:  # an exception type that needs other arguments
            raise RuntimeError(msg) from None
        raise exception


class _KeyErrorMessage(str):
    """KeyError shows repr(message); this keeps the traceback readable."""

    def __repr__(self) -> str:
        return str(self)


class WorkerStop:
    """A worker's IterableDataset is exhausted."""

    def __init__(self, worker_id: int) -> None:
        self.worker_id = worker_id


# ----------------------------------------------------------------- fetching
def fetch_map(dataset: Any, index: Any, auto_collation: bool, collate_fn: Callable) -> Any:
    """One batch (or, without auto-collation, one sample) of a map-style dataset."""
    if not auto_collation:
        return collate_fn(dataset[index])
    if collate_fn is default_collate and isinstance(index, np.ndarray):
        batch = fast_batch(dataset, index)
        if batch is not None:
            return batch
    keys = index.tolist() if isinstance(index, np.ndarray) else index
    getitems = getattr(dataset, "__getitems__", None)  # PyTorch's batched fetch; None opts out
    samples = getitems(keys) if getitems else [dataset[k] for k in keys]
    return collate_fn(samples)


class IterableFetcher:
    """Batches from one pass over an IterableDataset."""

    def __init__(
        self,
        dataset: Any,
        auto_collation: bool,
        collate_fn: Callable,
        drop_last: bool,
        batch_size: int | None,
    ) -> None:
        self.it: Iterator[Any] = iter(dataset)
        self.auto_collation, self.collate_fn = auto_collation, collate_fn
        self.drop_last, self.batch_size = drop_last, batch_size

    def fetch(self) -> Any:
        """The next batch; StopIteration when the stream is done."""
        if not self.auto_collation:
            return self.collate_fn(next(self.it))
        items = []
        for item in self.it:
            items.append(item)
            if len(items) == self.batch_size:
                break
        if not items or (self.drop_last and len(items) < self.batch_size):
            raise StopIteration
        return self.collate_fn(items)


# ----------------------------------------------------------------- the worker loop
def seed_worker(base_seed: int, worker_id: int) -> int:
    """Seed a worker as PyTorch does: ``random`` and the engine with ``base_seed + worker_id``,
    numpy's legacy global RNG with a hash of both; returns the worker's seed."""
    seed = base_seed + worker_id
    random.seed(seed)
    manual_seed(seed)
    np.random.seed(np.random.SeedSequence([worker_id, base_seed]).generate_state(4))
    return seed


def worker_loop(
    payload: Any,
    index_queue: Any,
    result_queue: Any,
    base_seed: int,
    worker_id: int,
    num_workers: int,
) -> None:
    """Run in a worker process: take ``(epoch, task id, index)`` tasks until ``None``, send back
    ``(epoch, task id, pickled batch)``; ``("resume", epoch)`` restarts an IterableDataset."""
    global _worker_info
    if isinstance(payload, bytes):  # spawn/forkserver: the loader's parts came pickled
        payload = loads(payload)
    dataset, auto_collation, collate_fn, drop_last, batch_size, init_fn = payload
    parent = os.getppid()
    seed = seed_worker(base_seed, worker_id)
    _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
    where = f"in DataLoader worker process {worker_id}"
    iterable = isinstance(dataset, IterableDataset)

    def new_fetcher() -> IterableFetcher | None:
        if not iterable:
            return None
        return IterableFetcher(dataset, auto_collation, collate_fn, drop_last, batch_size)

    init_error = fetcher = None
    try:
        if init_fn is not None:
            init_fn(worker_id)
        fetcher = new_fetcher()
    except Exception:
        init_error = ExceptionWrapper(sys.exc_info(), where)

    exhausted = False
    try:
        while True:
            try:
                task = index_queue.get(timeout=_POLL_S)
            except queue.Empty:
                if os.getppid() != parent:  # the main process is gone
                    break
                continue
            if task is None:
                break
            if task[0] == "resume":
                exhausted = False
                if init_error is None:
                    try:
                        fetcher = new_fetcher()
                    except Exception:
                        init_error = ExceptionWrapper(sys.exc_info(), where)
                continue
            epoch, task_id, index = task
            if init_error is not None:
                data, init_error = init_error, None
            elif exhausted:
                data = WorkerStop(worker_id)
            else:
                try:
                    if iterable:
                        data = fetcher.fetch()
                    else:
                        data = fetch_map(dataset, index, auto_collation, collate_fn)
                except StopIteration:
                    data, exhausted = WorkerStop(worker_id), True
                except Exception:
                    data = ExceptionWrapper(sys.exc_info(), where)
            try:
                blob = dumps(data)
            except Exception:
                err = ExceptionWrapper(sys.exc_info(), where)
                if not isinstance(data, ExceptionWrapper):
                    blob = dumps(err)
                else:  # its type cannot be pickled: re-raised as a RuntimeError
                    data.exc_type = RuntimeError
                    blob = dumps(data)
            result_queue.put((epoch, task_id, blob))
            del data
    except KeyboardInterrupt:
        pass
    result_queue.cancel_join_thread()
    result_queue.close()
