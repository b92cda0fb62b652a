"""``torch.cuda``'s device selection and properties: over cupy on a GPU; without one, the
queries that need a device raise a RuntimeError that says so (PyTorch's CPU build fails too)."""

from __future__ import annotations

from typing import Any

from ..backend import cuda as _cuda
from ..backend import registry

__all__ = [
    "current_device",
    "get_device_capability",
    "get_device_name",
    "get_device_properties",
    "is_bf16_supported",
    "is_initialized",
    "mem_get_info",
    "set_device",
]


def _cupy(what: str) -> Any:
    if not _cuda.is_available():
        raise RuntimeError(
            f"autogradcli.cuda.{what}: no CUDA device is available (cupy is not installed or "
            "sees no GPU); use device='cpu'"
        )
    return registry.cuda_module()


def _index(device: Any) -> int:
    if device is None:
        return current_device()
    if isinstance(device, int):
        return device
    from ..backend.device import as_device

    return int(as_device(device).index or 0)


def set_device(device: Any) -> None:
    """Make ``device`` (an index, ``"cuda:N"`` or a device) the current GPU; a negative index
    does nothing, as in PyTorch."""
    index = _index(device) if device is not None else -1
    if index < 0:
        return
    _cupy("set_device").cuda.Device(index).use()


def current_device() -> int:
    """The current GPU's index."""
    return int(_cupy("current_device").cuda.runtime.getDevice())


def is_initialized() -> bool:
    """Whether the CUDA array module has been loaded."""
    return registry._cuda is not None


def get_device_properties(device: Any = None) -> Any:
    """cupy's property dict of the GPU (``name``, ``totalGlobalMem``, ``major``, ``minor``...)."""
    xp = _cupy("get_device_properties")
    return xp.cuda.runtime.getDeviceProperties(_index(device))


def get_device_name(device: Any = None) -> str:
    """The GPU's name."""
    name = get_device_properties(device)["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def get_device_capability(device: Any = None) -> tuple[int, int]:
    """The GPU's compute capability (major, minor)."""
    props = get_device_properties(device)
    return int(props["major"]), int(props["minor"])


def mem_get_info(device: Any = None) -> tuple[int, int]:
    """(free, total) bytes of the GPU."""
    free, total = _cupy("mem_get_info").cuda.runtime.memGetInfo()
    return int(free), int(total)


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """False without a GPU (PyTorch's CPU answer); on a GPU, compute capability 8.0 or newer."""
    if not _cuda.is_available():
        return False
    return get_device_capability()[0] >= 8
