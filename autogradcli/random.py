"""``torch.random``: seeding and the global generator's state (``manual_seed``, ``seed``,
``initial_seed``, ``get_rng_state``, ``set_rng_state``, ``fork_rng``)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

from .tensor.random import get_rng_state, initial_seed, manual_seed, set_rng_state

__all__ = ["fork_rng", "get_rng_state", "initial_seed", "manual_seed", "seed", "set_rng_state"]


def seed() -> int:
    """Seed every generator from the operating system's entropy and return the seed (a
    non-negative 64-bit integer, as PyTorch's)."""
    value = int.from_bytes(os.urandom(8), "little") >> 1
    manual_seed(value)
    return value


@contextlib.contextmanager
def fork_rng(
    devices: Any = None,
    enabled: bool = True,
    _caller: str = "fork_rng",
    _devices_kw: str = "devices",
    device_type: str | None = None,
) -> Iterator[None]:
    """Run the block with the generator's state saved and restored afterwards, so draws in it
    leave the draws after it unchanged."""
    if not enabled:
        yield
        return
    saved = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(saved)
