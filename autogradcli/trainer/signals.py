"""Ctrl-C, SIGTERM and SIGHUP during training: deferred to the next batch boundary, so a
checkpoint is never torn and the run ends as ``interrupted`` with ``checkpoints/last`` saved."""

from __future__ import annotations

import contextlib
import signal
import threading
from typing import Any

__all__ = ["EXIT_CODES", "INTERRUPT_SIGNALS", "DeferredInterrupt", "run_exit_code"]

# what a person (SIGINT), a process manager (SIGTERM) or a closed terminal (SIGHUP) sends
INTERRUPT_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)
# a run's status -> the process's exit code; an interrupted run exits 130 whatever the signal
EXIT_CODES = {"completed": 0, "failed": 1, "interrupted": 130}


def run_exit_code(status: str) -> int:
    """The exit code of a run that ended with ``status`` (anything unknown: failed, 1)."""
    return EXIT_CODES.get(status, 1)


def _takes_over(handler: Any) -> bool:
    """Python's Ctrl-C handler (``KeyboardInterrupt``) is ours to defer; a program's own
    handler, ``SIG_IGN`` (``nohup``) and ``SIG_DFL`` are left alone."""
    return handler is signal.default_int_handler


class DeferredInterrupt:
    """While entered (in the main thread), the first SIGINT/SIGTERM/SIGHUP whose handler is
    Python's ``default_int_handler`` (SIGINT always; the others where ``agrad`` installed it)
    only sets ``requested``; ``check()`` then raises ``KeyboardInterrupt`` at the next safe
    point. A second signal interrupts at once. Elsewhere it does nothing."""

    def __init__(self) -> None:
        self.requested = False
        self.signal_name: str | None = None  # the last signal that interrupted the run
        self._previous: dict[int, Any] = {}

    def check(self) -> None:
        """Raise ``KeyboardInterrupt`` if a signal came since the last check."""
        if self.requested:
            self.requested = False
            raise KeyboardInterrupt

    def _handler(self, signum: int, frame: Any) -> None:
        self.signal_name = signal.Signals(signum).name
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True

    def __enter__(self) -> DeferredInterrupt:
        self.requested = False
        self.signal_name = None
        self._previous = {}
        if threading.current_thread() is not threading.main_thread():
            return self
        for signum in INTERRUPT_SIGNALS:
            try:
                previous = signal.getsignal(signum)
                if _takes_over(previous):
                    signal.signal(signum, self._handler)
                    self._previous[signum] = previous
            except (ValueError, OSError):
                pass
        return self

    def __exit__(self, *exc: Any) -> None:
        for signum, previous in self._previous.items():
            with contextlib.suppress(ValueError, OSError):
                signal.signal(signum, previous)
        self._previous = {}
