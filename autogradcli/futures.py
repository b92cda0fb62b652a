"""``torch.futures``: a thread-safe ``Future`` (the result of ``rpc_async``), ``collect_all`` and
``wait_all``. Standard library only."""

from __future__ import annotations

import threading
import traceback
import warnings
from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

T = TypeVar("T")
S = TypeVar("S")

__all__ = ["Future", "collect_all", "wait_all"]

# set by distributed.rpc: a context manager that lets other RPC handlers run while this thread
# blocks in ``wait`` (None outside RPC)
_blocking: Callable[[], Any] | None = None


class Future(Generic[T]):
    """A value that becomes available later: completed once by ``set_result``/``set_exception``."""

    def __init__(self, *, devices: Any = None) -> None:
        self._cond = threading.Condition()
        self._done = False
        self._value: Any = None
        self._error: BaseException | None = None
        self._callbacks: list[Callable[[Future[T]], None]] = []

    def done(self) -> bool:
        """True once a result or an exception is set."""
        return self._done

    def wait(self, timeout: float | None = None) -> T:
        """Block until completed; the value, or raise the exception it was completed with."""
        if not self._done:
            blocking = _blocking
            if blocking is None:
                self._wait_done(timeout)
            else:
                with blocking():
                    self._wait_done(timeout)
        return self.value()

    def _wait_done(self, timeout: float | None) -> None:
        with self._cond:
            if not self._cond.wait_for(lambda: self._done, timeout):
                raise TimeoutError(f"Future did not complete within {timeout} s")

    def value(self) -> T:
        """The result of a completed future (raises its exception)."""
        if not self._done:
            raise RuntimeError("value() called on a Future that is not completed yet")
        if self._error is not None:
            raise self._error
        return self._value

    def set_result(self, result: T) -> None:
        """Complete with ``result`` and run the callbacks."""
        self._complete(result, None)

    def set_exception(self, result: BaseException) -> None:
        """Complete with an exception: ``wait`` and ``value`` raise it."""
        if not isinstance(result, BaseException):
            raise AssertionError(f"{result!r} is of type {type(result)}, not an Exception.")
        self._complete(None, result)

    def _complete(self, value: Any, error: BaseException | None) -> None:
        with self._cond:
            if self._done:
                raise RuntimeError(
                    "Attempting to mark a completed Future as complete again. Note that a Future "
                    "can only be marked completed once."
                )
            self._value, self._error, self._done = value, error, True
            callbacks, self._callbacks = self._callbacks, []
            self._cond.notify_all()
        for callback in callbacks:
            self._run(callback)

    def _run(self, callback: Callable[[Future[T]], None]) -> None:
        try:
            callback(self)
        except Exception:
            warnings.warn(
                "an exception in a Future's done callback was ignored:\n" + traceback.format_exc(),
                RuntimeWarning,
                stacklevel=2,
            )

    def add_done_callback(self, callback: Callable[[Future[T]], None]) -> None:
        """Run ``callback(self)`` when completed (now if already done); its errors are warned."""
        with self._cond:
            if not self._done:
                self._callbacks.append(callback)
                return
        self._run(callback)

    def then(self, callback: Callable[[Future[T]], S]) -> Future[S]:
        """A new future completed with ``callback(self)`` (or the exception it raises)."""
        out: Future[S] = Future()

        def chain(fut: Future[T]) -> None:
            try:
                out.set_result(callback(fut))
            except Exception as error:  # as torch: a RuntimeError naming the callback's error
                out.set_exception(
                    RuntimeError(
                        "Got the following error when running the callback: "
                        f"{type(error).__name__}: {error}"
                    )
                )

        self.add_done_callback(chain)
        return out

    def __repr__(self) -> str:
        state = "done" if self._done else "pending"
        return f"<Future {state}>"


def collect_all(futures: Iterable[Future]) -> Future[list[Future]]:
    """A future completed, with the list of ``futures``, once every one of them is completed."""
    futures = list(futures)
    out: Future[list[Future]] = Future()
    remaining = [len(futures)]
    lock = threading.Lock()
    if not futures:
        out.set_result([])
        return out

    def one_done(_: Future) -> None:
        with lock:
            remaining[0] -= 1
            last = remaining[0] == 0
        if last:
            out.set_result(futures)

    for fut in futures:
        fut.add_done_callback(one_done)
    return out


def wait_all(futures: Iterable[Future]) -> list[Any]:
    """Wait for every future and return their values; raises the first error met."""
    futures = list(futures)
    return [fut.wait() for fut in futures]
