"""The ``dataset:`` kinds a config names: ``KINDS`` maps each name to its ``DataKind`` class.

Adding a kind is a module beside this one with a ``DataKind`` subclass, and one line here."""

from __future__ import annotations

from .base import DataError, DataKind, Problem, Source

__all__ = ["KINDS", "DataError", "DataKind", "Problem", "Source", "register_kind"]

KINDS: dict[str, type[DataKind]] = {}


def register_kind(kind: type[DataKind]) -> type[DataKind]:
    """Add ``kind`` to ``KINDS`` under its ``name`` (a name already taken is refused)."""
    if kind.name in KINDS:
        raise ValueError(f"a dataset kind named {kind.name!r} is already registered")
    KINDS[kind.name] = kind
    return kind


from .text import TextKind  # noqa: E402  (a kind module imports this package's base)

register_kind(TextKind)
