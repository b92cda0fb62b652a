"""Waiting on a collective with a deadline, so that a dead or stuck peer cannot hang a rank forever.

Every backend polls its non-blocking operation (an MPI request, a CUDA stream) through
``wait_until``; past the deadline the process group's ``on_timeout`` runs, which says which
collective timed out after how long and ends every rank (MPI abort).
"""

from __future__ import annotations

import time
from collections.abc import Callable


class DistTimeoutError(RuntimeError):
    """A collective did not complete within the process group's timeout."""


def timeout_message(rank: int, name: str, timeout: float) -> str:
    return (
        f"autogradcli.distributed: rank {rank}: {name} did not complete within the "
        f"{timeout:g} s timeout (init_process_group(timeout=...)); another rank has probably "
        "died, raised or is stuck. Aborting every rank."
    )


def wait_until(done: Callable[[], bool], timeout: float, on_timeout: Callable[[], None]) -> None:
    """Poll ``done()`` until it is true; call ``on_timeout()`` once ``timeout`` seconds have passed.

    The first polls spin (most collectives on one machine complete in microseconds); then the
    poll sleeps, backing off to 1 ms, so a waiting rank leaves the CPU to the others.
    """
    for _ in range(64):
        if done():
            return
    deadline = time.monotonic() + timeout
    delay = 2e-5
    while not done():
        if time.monotonic() > deadline:
            on_timeout()
            raise DistTimeoutError("collective timed out")  # on_timeout normally never returns
        time.sleep(delay)
        delay = min(delay * 2.0, 1e-3)


__all__ = ["DistTimeoutError", "timeout_message", "wait_until"]
