"""``torch.serialization``'s allow-list of globals for ``weights_only`` loading, kept for programs
that set it. autogradcli's checkpoint format holds only tensors and plain data and never unpickles
objects, so the list admits nothing it would otherwise refuse; it is recorded and read back."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_SAFE: list[Any] = []


def add_safe_globals(safe_globals: list[Any]) -> None:
    """Add to the allow-list (kept for ``get_safe_globals``; loading never needs it here)."""
    _SAFE.extend(safe_globals)


def get_safe_globals() -> list[Any]:
    return list(_SAFE)


def clear_safe_globals() -> None:
    _SAFE.clear()


@contextmanager
def safe_globals(safe_globals: list[Any]) -> Iterator[None]:
    """Allow ``safe_globals`` inside the block, as PyTorch's context manager does."""
    before = list(_SAFE)
    _SAFE.extend(safe_globals)
    try:
        yield
    finally:
        _SAFE[:] = before
