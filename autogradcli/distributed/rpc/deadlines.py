"""RPC timeouts: one thread per agent that fails each call still unanswered at its deadline."""

from __future__ import annotations

import heapq
import threading
import time
from collections.abc import Callable


class Deadlines:
    """Calls ``expire(msg_id, seconds)`` for every ``add``-ed call whose deadline passes."""

    def __init__(self, expire: Callable[[int, float], None]) -> None:
        self._expire = expire
        self._heap: list[tuple[float, int, float]] = []
        self._cond = threading.Condition()
        self._stopped = False
        self._thread: threading.Thread | None = None

    def add(self, msg_id: int, seconds: float) -> None:
        """Fail call ``msg_id`` if it is still pending ``seconds`` from now."""
        with self._cond:
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, daemon=True)
                self._thread.start()
            heapq.heappush(self._heap, (time.monotonic() + seconds, msg_id, seconds))
            self._cond.notify()

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify()

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._stopped and (not self._heap or self._heap[0][0] > time.monotonic()):
                    wait = self._heap[0][0] - time.monotonic() if self._heap else None
                    self._cond.wait(wait)
                if self._stopped:
                    return
                _, msg_id, seconds = heapq.heappop(self._heap)
            self._expire(msg_id, seconds)
