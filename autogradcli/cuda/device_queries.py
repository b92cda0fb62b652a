"""``torch.cuda``'s device selection and properties: over cupy on a GPU; without one, the
queries that need a device raise a RuntimeError that says so (PyTorch's CPU build fails too)."""

from __future__ import annotations

from typing import Any, NamedTuple

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


class DeviceProperties(NamedTuple):
    """A GPU's properties under PyTorch's attribute names."""

    name: str
    major: int
    minor: int
    total_memory: int
    multi_processor_count: int

    def __repr__(self) -> str:
        return (
            f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
            f"total_memory={self.total_memory // (1024 * 1024)}MB, "
            f"multi_processor_count={self.multi_processor_count})"
        )


def get_device_properties(device: Any = None) -> DeviceProperties:
    """The GPU's name, compute capability, memory and multiprocessor count (read by cupy)."""
    xp = _cupy("get_device_properties")
    props = xp.cuda.runtime.getDeviceProperties(_index(device))
    name = props["name"]
    return DeviceProperties(
        name=name.decode() if isinstance(name, bytes) else str(name),
        major=int(props["major"]),
        minor=int(props["minor"]),
        total_memory=int(props["totalGlobalMem"]),
        multi_processor_count=int(props["multiProcessorCount"]),
    )


def get_device_name(device: Any = None) -> str:
    """The GPU's name."""
    return get_device_properties(device).name


def get_device_capability(device: Any = None) -> tuple[int, int]:
    """The GPU's compute capability (major, minor)."""
    props = get_device_properties(device)
    return props.major, props.minor


def mem_get_info(device: Any = None) -> tuple[int, int]:
    """(free, total) bytes of the GPU."""
    free, total = _cupy("mem_get_info").cuda.runtime.memGetInfo()
    return int(free), int(total)


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """False without a GPU (PyTorch's CPU answer); on a GPU, compute capability 8.0 or newer."""
    if not _cuda.is_available():
        return False
    return get_device_capability()[0] >= 8
