"""``torch.cuda.Stream``, ``Event``, ``stream`` and ``current_stream``: all work runs in order on
one stream here, so a stream is a name for it and an event a point in time (measured after the
GPU has finished the work queued before it)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

from ..backend.cuda import synchronize

__all__ = ["Event", "Stream", "current_stream", "default_stream", "stream"]


class Stream:
    """The one stream work runs on; ``synchronize`` waits for it, ``wait_stream`` is ordered
    already."""

    def __init__(self, device: Any = None, priority: int = 0, **kwargs: Any) -> None:
        self.device = device
        self.priority = priority

    def synchronize(self) -> None:
        """Wait for the queued GPU work (nothing to wait for on the CPU)."""
        synchronize()

    def wait_stream(self, stream: Stream) -> None:
        """Nothing to do: there is one stream."""

    def wait_event(self, event: Event) -> None:
        """Nothing to do: there is one stream."""

    def query(self) -> bool:
        """True once the queued work is done (after a synchronize)."""
        synchronize()
        return True

    def record_event(self, event: Event | None = None) -> Event:
        """Record ``event`` (a new one if None) now."""
        event = event or Event()
        event.record(self)
        return event


_DEFAULT = Stream()


def current_stream(device: Any = None) -> Stream:
    """The stream work runs on."""
    return _DEFAULT


def default_stream(device: Any = None) -> Stream:
    """The stream work runs on."""
    return _DEFAULT


@contextlib.contextmanager
def stream(s: Stream | None) -> Iterator[None]:
    """``with stream(s):`` runs the block as usual (on the one stream)."""
    yield


class Event:
    """A point in the work: ``record()``, then ``elapsed_time(end)`` in milliseconds."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False, **kwargs: Any) -> None:
        self.enable_timing = enable_timing
        self._time: float | None = None

    def record(self, stream: Stream | None = None) -> None:
        """Mark now, after the queued work has finished."""
        synchronize()
        self._time = time.perf_counter()

    def synchronize(self) -> None:
        """Nothing left to wait for: ``record`` waited."""

    def wait(self, stream: Stream | None = None) -> None:
        """Nothing to do: there is one stream."""

    def query(self) -> bool:
        """True once recorded."""
        return self._time is not None

    def elapsed_time(self, end_event: Event) -> float:
        """Milliseconds from this event to ``end_event``; both must be recorded with timing."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if self._time is None or end_event._time is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return (end_event._time - self._time) * 1000.0
