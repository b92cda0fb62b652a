"""Ctrl-C during training: deferred to the next batch boundary, so a checkpoint is never torn."""

from __future__ import annotations

import contextlib
import signal
import threading
from typing import Any

__all__ = ["DeferredInterrupt"]


class DeferredInterrupt:
    """While entered (in the main thread, with Python's default SIGINT handler in place), the
    first Ctrl-C only sets ``requested``; ``check()`` then raises ``KeyboardInterrupt`` at the
    next safe point. A second Ctrl-C interrupts at once. Elsewhere it does nothing."""

    def __init__(self) -> None:
        self.requested = False
        self._previous: Any = None

    def check(self) -> None:
        """Raise ``KeyboardInterrupt`` if Ctrl-C was pressed since the last check."""
        if self.requested:
            self.requested = False
            raise KeyboardInterrupt

    def _handler(self, signum: int, frame: Any) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True

    def __enter__(self) -> DeferredInterrupt:
        self.requested = False
        self._previous = None
        if threading.current_thread() is not threading.main_thread():
            return self
        try:
            previous = signal.getsignal(signal.SIGINT)
            if previous is signal.default_int_handler:
                signal.signal(signal.SIGINT, self._handler)
                self._previous = previous
        except (ValueError, OSError):
            pass
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._previous is not None:
            with contextlib.suppress(ValueError, OSError):
                signal.signal(signal.SIGINT, self._previous)
            self._previous = None
