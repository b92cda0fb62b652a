"""CUDA availability queries that never fail: usable on machines with no GPU and no cupy."""

from __future__ import annotations

from . import registry


def is_available() -> bool:
    """True when cupy imports and sees at least one GPU."""
    try:
        registry.cuda_module()
    except RuntimeError:
        return False
    return True


def device_count() -> int:
    if not is_available():
        return 0
    xp = registry.cuda_module()
    return int(xp.cuda.runtime.getDeviceCount())


def synchronize() -> None:
    """Wait for queued GPU work; a no-op without a GPU."""
    if registry._cuda is not None and hasattr(registry._cuda, "cuda"):
        registry._cuda.cuda.Stream.null.synchronize()
