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
    "device_index",
    "is_available",
    "set_device_index",
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


def set_device_index(device: Any) -> None:
    """Make GPU ``device`` (an index or a device) current; without a GPU, PyTorch's RuntimeError."""
    if device is None:
        raise ValueError(
            f"Expected a torch.device with a specified index or an integer, but got:{device}"
        )
    if not _cuda.is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")
    from .backend import registry

    index = device if isinstance(device, int) else int(Device(str(device)).index or 0)
    registry.cuda_module().cuda.Device(index).use()


class device_index:
    """``with device_index(i):`` runs the block with GPU ``i`` current (None: unchanged)."""

    def __init__(self, device: Any) -> None:
        self.idx = device
        self.prev_idx = -1

    def __enter__(self) -> None:
        if self.idx is not None:
            self.prev_idx = current_device_index()
            set_device_index(self.idx)

    def __exit__(self, *exc: object) -> None:
        if self.idx is not None and self.prev_idx >= 0:
            set_device_index(self.prev_idx)
