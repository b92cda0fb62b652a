"""The array backend: the bottom layer, and the only code that tells numpy from cupy."""

from .arrays import as_strided, random_normal, random_permutation, scatter_add
from .device import CPU, Device, as_device
from .registry import (
    array_module,
    cuda_module,
    device_of,
    is_cpu_array,
    module_for,
    to_device,
    to_numpy,
    use_cuda_module,
)

__all__ = [
    "CPU",
    "Device",
    "array_module",
    "as_device",
    "as_strided",
    "cuda_module",
    "device_of",
    "is_cpu_array",
    "module_for",
    "random_normal",
    "random_permutation",
    "scatter_add",
    "to_device",
    "to_numpy",
    "use_cuda_module",
]
