"""``torch.cuda``'s memory statistics, read from cupy's default memory pool on a GPU and 0
without one. cupy keeps no peak counter, so the peaks are the highest values seen by these
calls (and by ``synchronize``) since the last reset."""

from __future__ import annotations

from typing import Any

from ..backend import registry

__all__ = [
    "empty_cache",
    "max_memory_allocated",
    "max_memory_reserved",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "memory_summary",
    "reset_max_memory_allocated",
    "reset_peak_memory_stats",
]

_peak = {"allocated": 0, "reserved": 0}


def _pool() -> Any:
    """cupy's default memory pool once a CUDA array module is in use, else None."""
    xp = registry._cuda
    get = getattr(xp, "get_default_memory_pool", None) if xp is not None else None
    return get() if get is not None else None


def _sample() -> tuple[int, int]:
    pool = _pool()
    if pool is None:
        return 0, 0
    used, total = int(pool.used_bytes()), int(pool.total_bytes())
    _peak["allocated"] = max(_peak["allocated"], used)
    _peak["reserved"] = max(_peak["reserved"], total)
    return used, total


def memory_allocated(device: Any = None) -> int:
    """Bytes held by tensors (cupy's pool, used bytes); 0 without a GPU."""
    return _sample()[0]


def memory_reserved(device: Any = None) -> int:
    """Bytes the pool holds from the driver; 0 without a GPU."""
    return _sample()[1]


def max_memory_allocated(device: Any = None) -> int:
    """The highest ``memory_allocated`` seen since the last reset; 0 without a GPU."""
    _sample()
    return _peak["allocated"]


def max_memory_reserved(device: Any = None) -> int:
    """The highest ``memory_reserved`` seen since the last reset; 0 without a GPU."""
    _sample()
    return _peak["reserved"]


def reset_peak_memory_stats(device: Any = None) -> None:
    """Start the peaks again from the current values."""
    _peak["allocated"] = _peak["reserved"] = 0
    _sample()


def reset_max_memory_allocated(device: Any = None) -> None:
    """Start the allocated peak again from the current value."""
    _peak["allocated"] = 0
    _sample()


def empty_cache() -> None:
    """Return the pool's unused blocks to the driver; nothing to do without a GPU."""
    pool = _pool()
    if pool is not None:
        pool.free_all_blocks()


def memory_stats(device: Any = None) -> dict[str, int]:
    """The four figures above under PyTorch's keys; empty without a GPU, as in PyTorch."""
    if _pool() is None:
        return {}
    used, total = _sample()
    return {
        "allocated_bytes.all.current": used,
        "allocated_bytes.all.peak": _peak["allocated"],
        "reserved_bytes.all.current": total,
        "reserved_bytes.all.peak": _peak["reserved"],
    }


def memory_summary(device: Any = None, abbreviated: bool = False) -> str:
    """A short text of the same figures."""
    used, total = _sample()
    mib = 1024.0**2
    return (
        f"allocated: {used / mib:.1f} MiB (peak {_peak['allocated'] / mib:.1f} MiB), "
        f"reserved: {total / mib:.1f} MiB (peak {_peak['reserved'] / mib:.1f} MiB)"
    )
