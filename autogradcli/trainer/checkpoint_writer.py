"""Checkpoint writes off the training thread (as Lightning's ``AsyncCheckpointIO``): the caller
takes the snapshot, one background thread serializes and writes it, one write at a time."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

__all__ = ["CheckpointWriter"]


class CheckpointWriter:
    """Runs ``write()`` jobs on a single background thread, at most one in flight: ``submit``
    waits for the previous job first. A job's error is raised in the caller's thread, once, by
    the next ``submit``, ``check`` (when it has finished) or ``wait``."""

    def __init__(self) -> None:
        self._executor: ThreadPoolExecutor | None = None
        self._pending: Future | None = None

    def submit(self, write: Callable[[], None]) -> None:
        """Start ``write`` in the background once the previous write is done (its error, if
        any, is raised here and ``write`` is not started)."""
        self.wait()
        if self._executor is None:
            self._executor = ThreadPoolExecutor(1, thread_name_prefix="agrad-checkpoint")
        self._pending = self._executor.submit(write)

    def check(self) -> None:
        """Raise the error of a write that has finished; never waits."""
        if self._pending is not None and self._pending.done():
            self.wait()

    def wait(self) -> None:
        """Block until the write in flight has finished; raise its error."""
        pending = self._pending
        if pending is None:
            return
        try:
            pending.result()
        finally:
            if pending.done():  # not when a second Ctrl-C interrupted the wait
                self._pending = None

    def close(self) -> None:
        """``wait``, then stop the thread (a later ``submit`` starts a new one)."""
        try:
            self.wait()
        finally:
            if self._executor is not None and self._pending is None:
                self._executor.shutdown(wait=True)
                self._executor = None

    @property
    def busy(self) -> bool:
        """Whether a write is in flight or finished with its error not yet raised."""
        return self._pending is not None
