"""``torch.backends.mps``: Apple's Metal backend, which autogradcli does not have."""

from __future__ import annotations

__all__ = ["is_available", "is_built", "is_macos13_or_newer"]


def is_available() -> bool:
    """False: there is no MPS device here (PyTorch's answer on a machine without one)."""
    return False


def is_built() -> bool:
    """False: autogradcli is not built with MPS."""
    return False


def is_macos13_or_newer(minor: int = 0) -> bool:
    """False, as PyTorch answers where MPS is not built."""
    return False
