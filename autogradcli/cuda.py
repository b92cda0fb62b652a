"""``autogradcli.cuda``: GPU queries that work (and say no) on machines without one."""

from .backend.cuda import device_count, is_available, synchronize
from .tensor.legacy_types import CUDA_TYPES
from .tensor.random import manual_seed as _manual_seed


def manual_seed(seed: int) -> None:
    """Seed the GPU generator: one seed drives every generator here, as ``autogradcli.manual_seed``."""
    _manual_seed(seed)


def manual_seed_all(seed: int) -> None:
    """Seed every GPU's generator (one seed drives them all here)."""
    _manual_seed(seed)


# the legacy GPU tensor types: autogradcli.cuda.FloatTensor & co
globals().update(CUDA_TYPES)

__all__ = [
    "device_count",
    "is_available",
    "manual_seed",
    "manual_seed_all",
    "synchronize",
    *CUDA_TYPES,
]
