"""Waiting on a collective with a deadline, so that a dead or stuck peer cannot hang a rank forever.

Every backend polls its non-blocking operation (an MPI request, a CUDA stream) through
``wait_until``; past the deadline the process group's ``on_timeout`` runs, which says which
collective timed out after how long and ends every rank (MPI abort).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable


class DistTimeoutError(RuntimeError):
    """A collective did not complete within the process group's timeout."""


def timeout_message(rank: int, name: str, timeout: float) -> str:
    return (
        f"autogradcli.distributed: rank {rank}: {name} did not complete within the "
        f"{timeout:g} s timeout (init_process_group(timeout=...); for agrad train: "
        "AGRAD_DIST_TIMEOUT); another rank has probably "
        "died, raised or is stuck. Aborting every rank."
    )


def wait_until(done: Callable[[], bool], timeout: float, on_timeout: Callable[[], None]) -> None:
    """Poll ``done()`` until it is true; call ``on_timeout()`` once ``timeout`` seconds have passed.

    Each poll also drives the operation (MPI progresses non-blocking collectives only inside
    calls such as ``Test``), so for the first second the loop polls back to back, yielding the CPU
    between polls (cheap when nothing else wants it); after that it sleeps between polls, backing
    off to 1 ms, so a rank waiting on a slow peer leaves the CPU to the others.
    """
    for _ in range(64):
        if done():
            return
    start = time.monotonic()
    deadline = start + timeout
    spin_until = start + 1.0
    delay = 2e-5
    yield_cpu = getattr(os, "sched_yield", None)
    while not done():
        now = time.monotonic()
        if now > deadline:
            on_timeout()
            raise DistTimeoutError("collective timed out")  # on_timeout normally never returns
        if now < spin_until and yield_cpu is not None:
            yield_cpu()
            continue
        time.sleep(delay)
        delay = min(delay * 2.0, 1e-3)
