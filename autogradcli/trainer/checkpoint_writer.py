"""The run folder's per-epoch writes off the training thread (as Lightning's
``AsyncCheckpointIO``): the caller takes the snapshot (the checkpoint's arrays copied, the run
files' text made), one background thread writes it, in the order given."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported when a first write goes to the thread (~3 ms cold)
    from concurrent.futures import Future, ThreadPoolExecutor

__all__ = ["CheckpointWriter"]


class CheckpointWriter:
    """Runs ``write()`` jobs on a single background thread, in order. ``submit`` (a
    checkpoint) first waits for every job before it, so at most one checkpoint is in flight;
    ``queue`` (a run file) does not wait, and runs at once when nothing is in flight. A job's error is raised in the caller's thread, once,
    by the next ``submit``, ``queue``, ``check`` (once it has finished) or ``wait``; the jobs
    queued after a failed one are not run (the summary never runs ahead of the checkpoint)."""

    def __init__(self) -> None:
        self._executor: ThreadPoolExecutor | None = None
        self._pending: list[Future] = []
        self._failed = False  # read by the writer thread: skip the jobs after a failure

    def submit(self, write: Callable[[], None]) -> None:
        """Start ``write`` once every earlier job is done (an earlier error is raised here and
        ``write`` is not started)."""
        self.wait()
        self._enqueue(write)

    def queue(self, write: Callable[[], None]) -> None:
        """Run ``write`` after the jobs already given, without waiting for them: on the
        thread when one is in flight, else here and now (no thread, no waiting)."""
        self.check()
        if not self._pending:
            write()
            return
        self._enqueue(write)

    def _enqueue(self, write: Callable[[], None]) -> None:
        if self._executor is None:
            from concurrent.futures import ThreadPoolExecutor

            self._executor = ThreadPoolExecutor(1, thread_name_prefix="agrad-checkpoint")
        self._pending.append(self._executor.submit(self._run, write))

    def _run(self, write: Callable[[], None]) -> None:
        if self._failed:
            return
        try:
            write()
        except BaseException:
            self._failed = True
            raise

    def check(self) -> None:
        """Raise the error of a job that has finished; never waits."""
        while self._pending and self._pending[0].done():
            self._take_first()

    def wait(self) -> None:
        """Block until every job has finished; raise the first error."""
        while self._pending:
            self._take_first()

    def _take_first(self) -> None:
        first = self._pending[0]
        try:
            first.result()
        finally:
            if first.done():  # not when a second Ctrl-C interrupted the wait
                self._pending.pop(0)
                if not self._pending:
                    self._failed = False

    def close(self) -> None:
        """``wait``, then stop the thread (a later job starts a new one)."""
        try:
            self.wait()
        finally:
            if self._executor is not None and not self._pending:
                self._executor.shutdown(wait=True)
                self._executor = None

    def settle(self, close: bool = True) -> str:
        """``close`` (or ``wait``) for a run already ending otherwise (an interrupt, an error):
        the writes' error as ``"; <error>"`` for its message instead of raised, or ``""``."""
        try:
            self.close() if close else self.wait()
        except Exception as err:
            return f"; {err}"
        return ""

    @property
    def busy(self) -> bool:
        """Whether a job is in flight or finished with its error not yet raised."""
        return bool(self._pending)
