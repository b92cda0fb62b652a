"""``autogradcli.cuda``: GPU queries that work (and say no) on machines without one, memory
statistics from cupy's pool (0 without a GPU), streams and events, and ``cuda.amp``."""

from ..backend.cuda import device_count, is_available
from ..backend.cuda import synchronize as _synchronize
from ..tensor.legacy_types import CUDA_TYPES
from ..tensor.random import manual_seed as _manual_seed
from . import amp
from .device_queries import *
from .device_queries import __all__ as _queries
from .memory import *
from .memory import __all__ as _memory
from .memory import _sample
from .streams import *
from .streams import __all__ as _streams


def synchronize(device: object = None) -> None:
    """Wait for queued GPU work (and note the memory peaks); a no-op without a GPU."""
    _synchronize()
    _sample()


def manual_seed(seed: int) -> None:
    """Seed the GPU generator: one seed drives every generator here, as ``autogradcli.manual_seed``."""
    _manual_seed(seed)


def manual_seed_all(seed: int) -> None:
    """Seed every GPU's generator (one seed drives them all here)."""
    _manual_seed(seed)


def seed() -> int:
    """Seed from the operating system's entropy (one seed drives every generator here)."""
    from ..random import seed as _seed

    return _seed()


def seed_all() -> None:
    """Seed every GPU's generator from the operating system's entropy."""
    seed()


def initial_seed() -> int:
    """The seed last set."""
    from ..tensor.random import initial_seed as _initial

    return _initial()


# the legacy GPU tensor types: autogradcli.cuda.FloatTensor & co
globals().update(CUDA_TYPES)

__all__ = [
    *_queries,
    *_memory,
    *_streams,
    "amp",
    "device_count",
    "is_available",
    "manual_seed",
    "manual_seed_all",
    "seed",
    "seed_all",
    "initial_seed",
    "synchronize",
    *CUDA_TYPES,
]
