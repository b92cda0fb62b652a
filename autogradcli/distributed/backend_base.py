"""The seam between the collectives and a communication library (MPI, NCCL).

A backend starts an operation on contiguous arrays of its own device and returns a ``Pending``;
``Pending.wait()`` blocks (with the process group's deadline) and finishes the operation
(dividing for AVG, copying staged data back). The collectives in ``collectives.py`` check
the tensors and call these; DistributedDataParallel uses ``all_reduce`` to overlap buckets
with backward.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .reduce_op import ReduceOp


class Pending:
    """An operation in flight: ``wait()`` once, then its result is in place."""

    def __init__(self, wait: Callable[[], None], test: Callable[[], bool] | None = None) -> None:
        self._wait = wait
        self._test = test
        self._done = False

    def is_completed(self) -> bool:
        if self._done:
            return True
        return bool(self._test()) if self._test is not None else False

    def wait(self) -> bool:
        if not self._done:
            self._wait()
            self._done = True
        return True


class Backend:
    """What a communication library provides: rank, size and the collectives on arrays."""

    name = "?"
    rank: int
    size: int
    timeout: float

    def all_reduce(self, arr: Any, op: ReduceOp) -> Pending:
        raise NotImplementedError

    def broadcast(self, arr: Any, src: int) -> Pending:
        raise NotImplementedError

    def all_gather(self, out: Any, arr: Any) -> Pending:
        """``out`` (size * arr.size elements) receives every rank's ``arr``, in rank order."""
        raise NotImplementedError

    def reduce_scatter(self, out: Any, arr: Any, op: ReduceOp) -> Pending:
        """Rank r's ``out`` receives the reduction of chunk r of every rank's ``arr``."""
        raise NotImplementedError

    def barrier(self) -> Pending:
        raise NotImplementedError

    def close(self) -> None:
        return None


def check_avg_dtype(arr: Any, name: str) -> None:
    if arr.dtype.kind not in "fcV":
        raise TypeError(
            f"{name}: ReduceOp.AVG needs a floating-point tensor, got {arr.dtype} (use "
            "ReduceOp.SUM and divide, choosing the rounding yourself)"
        )


__all__ = ["Backend", "Pending", "check_avg_dtype"]
