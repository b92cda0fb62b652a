"""``autogradcli.accelerator``: PyTorch's device-agnostic accelerator queries (CUDA through cupy
is our only accelerator; on a machine without one every answer says so)."""

from __future__ import annotations

from typing import Any

from .backend import Device
from .backend import cuda as _cuda

__all__ = [
    "current_accelerator",
    "current_device_index",
    "device_count",
    "is_available",
    "synchronize",
]


def is_available() -> bool:
    """True when a GPU (through cupy) can be used."""
    return _cuda.is_available()


def current_accelerator(check_available: bool = False) -> Device | None:
    """``device(type='cuda')`` when a GPU is present, else None."""
    return Device("cuda") if _cuda.is_available() else None


def device_count() -> int:
    return _cuda.device_count() if _cuda.is_available() else 0


def current_device_index() -> int:
    return 0 if _cuda.is_available() else -1


def synchronize(device: Any = None) -> None:
    if _cuda.is_available():
        _cuda.synchronize()
