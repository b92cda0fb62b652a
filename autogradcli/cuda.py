"""``autogradcli.cuda``: GPU queries that work (and say no) on machines without one."""

from .backend.cuda import device_count, is_available, synchronize
from .tensor.legacy_types import CUDA_TYPES

# the legacy GPU tensor types: autogradcli.cuda.FloatTensor & co
globals().update(CUDA_TYPES)

__all__ = ["device_count", "is_available", "synchronize", *CUDA_TYPES]
