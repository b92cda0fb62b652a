"""``torch.multiprocessing``: Python's multiprocessing with tensors that cross processes through
shared memory (``Tensor.share_memory_``, ``Module.share_memory``), and ``spawn``."""

from multiprocessing import *
from multiprocessing import __all__ as _mp_all

from .reductions import init_reductions
from .spawn import (
    ProcessContext,
    ProcessException,
    ProcessExitedException,
    ProcessRaisedException,
    spawn,
    start_processes,
)

__all__ = [
    *_mp_all,
    "ProcessContext",
    "ProcessException",
    "ProcessExitedException",
    "ProcessRaisedException",
    "get_all_sharing_strategies",
    "get_sharing_strategy",
    "set_sharing_strategy",
    "spawn",
    "start_processes",
]

_STRATEGIES = {"file_descriptor", "file_system"}
_strategy = "file_descriptor"


def get_all_sharing_strategies() -> set[str]:
    return set(_STRATEGIES)


def get_sharing_strategy() -> str:
    return _strategy


def set_sharing_strategy(new_strategy: str) -> None:
    """Accepted for compatibility; memory always travels as unlinked descriptors here."""
    global _strategy
    if new_strategy not in _STRATEGIES:
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}")
    _strategy = new_strategy


init_reductions()
