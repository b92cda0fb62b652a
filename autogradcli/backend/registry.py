"""Maps arrays to their array module (numpy or cupy) and moves arrays between devices.

This is the seam: op code asks ``array_module(arr)`` for ``xp`` and calls ``xp.exp``,
``xp.matmul``...; nothing above this package calls numpy on an array that could live on a GPU.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

from .device import CPU, Device, as_device

# type(array) -> (array module, device type).  numpy is always there; the CUDA entry is filled
# lazily when a CUDA tensor is first asked for (or by tests, with a strict stand-in).
_MODULE_OF_TYPE: dict[type, ModuleType] = {np.ndarray: np}
_cuda: ModuleType | None = None


def array_module(arr: Any) -> ModuleType:
    """The array module (``numpy`` or ``cupy``) that owns ``arr``."""
    xp = _MODULE_OF_TYPE.get(type(arr))
    if xp is not None:
        return xp
    if isinstance(arr, (np.generic, np.ndarray)):  # a numpy scalar or subclass (np.memmap...)
        return np
    raise TypeError(f"expected an array of a known backend, got {type(arr).__name__}")


def is_cpu_array(arr: Any) -> bool:
    """A numpy array, its subclasses (np.memmap...) included unless one is registered as a
    device array type."""
    if type(arr) is np.ndarray:
        return True
    return isinstance(arr, np.ndarray) and _MODULE_OF_TYPE.get(type(arr), np) is np


def device_of(arr: Any) -> Device:
    if type(arr) is np.ndarray or is_cpu_array(arr):
        return CPU
    dev = getattr(arr, "device", None)
    return Device("cuda", int(getattr(dev, "id", 0) or 0))


def cuda_module() -> ModuleType:
    """The CUDA array module, imported on first use with a clear error when it cannot be."""
    global _cuda
    if _cuda is None:
        try:
            import cupy
        except ImportError as err:
            raise RuntimeError(
                "a CUDA tensor was requested but cupy is not installed; install the CUDA extra "
                "(pip install 'autogradcli[cuda]') or use device='cpu'"
            ) from err
        try:
            count = cupy.cuda.runtime.getDeviceCount()
        except Exception as err:  # cupy raises its own CUDARuntimeError
            raise RuntimeError(f"a CUDA tensor was requested but no GPU is usable: {err}") from err
        if count == 0:
            raise RuntimeError("a CUDA tensor was requested but no CUDA device was found")
        use_cuda_module(cupy, cupy.ndarray)
    return _cuda


def use_cuda_module(xp: ModuleType | None, array_type: type | None = None) -> None:
    """Install ``xp`` as the CUDA array module (cupy, or a strict stand-in in tests); None resets."""
    global _cuda
    for t, m in list(_MODULE_OF_TYPE.items()):
        if m is _cuda and t is not np.ndarray:
            del _MODULE_OF_TYPE[t]
    _cuda = xp
    if xp is not None and array_type is not None:
        _MODULE_OF_TYPE[array_type] = xp


def module_for(device: str | Device | None) -> ModuleType:
    """The array module that holds arrays on ``device``."""
    dev = as_device(device)
    return np if dev.type == "cpu" else cuda_module()


def to_device(arr: Any, device: str | Device | None) -> Any:
    """Copy ``arr`` to ``device`` (no copy when it is already there)."""
    dev = as_device(device)
    src = device_of(arr)
    if src == dev or (src.type == dev.type == "cuda" and dev.index is None):
        return arr
    if dev.type == "cpu":
        return to_numpy(arr)
    if arr.dtype.kind == "V":
        raise TypeError(
            "bfloat16 tensors stay on the CPU: cupy has no bfloat16 dtype; convert with "
            ".float() or .half() before moving to CUDA"
        )
    xp = cuda_module()
    if dev.index is not None and hasattr(xp, "cuda") and hasattr(xp.cuda, "Device"):
        with xp.cuda.Device(dev.index):
            return xp.asarray(arr)
    return xp.asarray(to_numpy(arr))


def to_numpy(arr: Any) -> np.ndarray:
    """A host copy (or the array itself, on the CPU) as a numpy array."""
    if type(arr) is np.ndarray:
        return arr
    if is_cpu_array(arr):  # a subclass (np.memmap...): a plain view, no copy
        return arr.view(np.ndarray)
    if isinstance(arr, np.generic):
        return np.asarray(arr)
    return array_module(arr).asnumpy(arr)
