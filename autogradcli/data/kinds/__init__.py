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


from .builtin_files import CsvKind, IdxKind, NpzKind  # noqa: E402
from .builtin_sets import DigitsKind, SineKind, SpiralsKind  # noqa: E402
from .image_folder import ImageFolder  # noqa: E402
from .table import TableKind  # noqa: E402
from .text import TextKind  # noqa: E402

register_kind(DigitsKind)
register_kind(NpzKind)
register_kind(CsvKind)
register_kind(IdxKind)
register_kind(SineKind)
register_kind(SpiralsKind)
register_kind(TableKind)
register_kind(ImageFolder)
register_kind(TextKind)
