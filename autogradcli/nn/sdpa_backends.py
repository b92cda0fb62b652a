"""``torch.nn.attention``'s ``SDPBackend`` and ``sdpa_kernel``: programs choose which attention
kernel PyTorch may use. autogradcli has one (the fused math kernel), so the choice is recorded
and read back (``enabled_backends``) but every choice computes the same values."""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Iterator
from typing import Any

__all__ = ["SDPBackend", "enabled_backends", "sdpa_kernel"]


class SDPBackend(enum.IntEnum):
    """The attention kernels PyTorch knows, with PyTorch's values."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_ALL = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]
_ALL += [SDPBackend.CUDNN_ATTENTION, SDPBackend.OVERRIDEABLE]
_enabled: list[SDPBackend] = list(_ALL)


def enabled_backends() -> list[SDPBackend]:
    """The backends the innermost ``sdpa_kernel`` allows (all of them outside one)."""
    return list(_enabled)


@contextlib.contextmanager
def sdpa_kernel(backends: Any, set_priority: bool = False) -> Iterator[dict]:
    """Allow only ``backends`` (one or a list) inside the block, then restore the previous set."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError(
            "Backend must be an instance of SDPBackend or a list of SDPBackend instances, got "
            f"{type(backends).__name__}"
        )
    chosen = [backends] if isinstance(backends, SDPBackend) else list(dict.fromkeys(backends))
    previous = list(_enabled)
    _enabled[:] = chosen
    try:
        yield {}
    finally:
        _enabled[:] = previous
