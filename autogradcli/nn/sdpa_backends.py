"""``torch.nn.attention``'s ``SDPBackend`` and ``sdpa_kernel``: programs choose which attention
kernel PyTorch may use. autogradcli has one (the fused math kernel), so the choice is recorded
in ``torch.backends.cuda``'s flags (as PyTorch records it: ``math_sdp_enabled()``...) and read
back, but every choice computes the same values."""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Iterator
from typing import Any

from ..backends.cuda import _state as _flags

__all__ = ["SDPBackend", "enabled_backends", "sdpa_kernel"]


class SDPBackend(enum.IntEnum):
    """The attention kernels PyTorch knows, with PyTorch's values."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


# the flag of each backend in torch.backends.cuda, in the order PyTorch lists enabled backends
_FLAG = {
    SDPBackend.FLASH_ATTENTION: "flash",
    SDPBackend.EFFICIENT_ATTENTION: "mem_efficient",
    SDPBackend.MATH: "math",
    SDPBackend.CUDNN_ATTENTION: "cudnn",
    SDPBackend.OVERRIDEABLE: "overrideable",
}


def enabled_backends() -> list[SDPBackend]:
    """The backends whose flags are on (all of them outside any ``sdpa_kernel``)."""
    return [backend for backend, flag in _FLAG.items() if _flags[flag]]


@contextlib.contextmanager
def sdpa_kernel(backends: Any, set_priority: bool = False) -> Iterator[dict]:
    """Allow only ``backends`` (one or a list) inside the block, then restore the previous set."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError(
            "Backend must be an instance of SDPBackend or a list of SDPBackend instances, got "
            f"{type(backends).__name__}"
        )
    chosen = {backends} if isinstance(backends, SDPBackend) else set(backends)
    previous = {flag: _flags[flag] for flag in _FLAG.values()}
    _flags.update({flag: backend in chosen for backend, flag in _FLAG.items()})
    try:
        yield {}
    finally:
        _flags.update(previous)
