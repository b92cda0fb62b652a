"""What a ``dataset:`` kind of a config is: how it reads raw files, what it learns from the
training rows, and how it turns raw rows into samples, for training and for new inputs alike.

A run's data goes through one path: ``read`` the raw source, split it into row indices
(test, validation, training), ``fit`` on the training indices only, then ``samples`` for each
split. The fitted state is plain JSON stored in the run folder (``data_state.json``), so
``agrad eval --data``, ``agrad predict``, ``--resume`` and ``inspect`` rebuild the same
preprocessing from the state and the new file alone, never from the training file.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, ClassVar

__all__ = ["DataError", "DataKind", "Problem", "Source"]


class Problem:
    """One located problem in a user's data: the file, and where known the row (1-based, as
    an editor shows it) and the column, with what is wrong there."""

    def __init__(
        self, file: str | os.PathLike, why: str, row: int | None = None, column: str | None = None
    ) -> None:
        self.file, self.why, self.row, self.column = os.fspath(file), why, row, column

    def __str__(self) -> str:
        where = self.file
        if self.row is not None:
            where += f", row {self.row}"
        if self.column is not None:
            where += f", column {self.column!r}"
        return f"{where}: {self.why}"


class DataError(ValueError):
    """A user's data cannot be used: every ``Problem`` found (a bounded list), reported at once.
    The config turns it into a located exit 2."""

    def __init__(self, problems: Sequence[Problem], more: int = 0) -> None:
        self.problems, self.more = list(problems), more
        lines = [str(p) for p in self.problems]
        if more:
            lines.append(f"... and {more} more")
        super().__init__("\n".join(lines))

    def __reduce__(self) -> tuple[Any, ...]:
        # rebuilt from its problems (not its message) when it travels from a DataLoader worker
        return type(self), (self.problems, self.more)


class Source:
    """The raw rows of one file, folder or data set, as read, before anything is learned from
    them. ``len(source)`` is the number of samples (rows, images, text blocks) to split."""

    def __len__(self) -> int:
        raise NotImplementedError


class DataKind:
    """One ``dataset:`` value. Subclasses set ``name``, list in ``path_settings`` the settings
    that name files or folders (resolved by the config's path rule), and take their settings as
    keyword arguments of ``__init__`` whose defaults are the config's defaults (the config reads
    the signature, so each default is defined once, here)."""

    name: ClassVar[str]
    path_settings: ClassVar[tuple[str, ...]] = ()

    def read(self, path: str | None = None) -> Source:
        """The raw source: the configured data when ``path`` is None, else the file (or folder)
        a user gives to ``eval --data`` / ``predict --input`` in the same format. Raises
        ``DataError`` with every problem located."""
        raise NotImplementedError

    def fit(self, source: Source, train: Sequence[int]) -> dict[str, Any]:
        """What is learned from the training rows ``train`` only (class names, vocabularies,
        means and stds...), as JSON-able plain data. Kinds that learn nothing return {}."""
        return {}

    def samples(
        self,
        source: Source,
        state: dict[str, Any],
        rows: Sequence[int] | None = None,
        train: bool = False,
    ) -> Any:
        """A map-style Dataset of (input, target) pairs for ``rows`` (all when None), with the
        fitted ``state`` applied; ``train`` turns on training-only augmentation."""
        raise NotImplementedError

    def inputs(self, source: Source, state: dict[str, Any]) -> Any:
        """A map-style Dataset of inputs only (no target needed), for ``agrad predict``."""
        raise NotImplementedError

    def names(self, source: Source) -> list[str]:
        """One name per sample for the predictions file (a row number, a file path...)."""
        return [str(i + 1) for i in range(len(source))]

    def sizes(self, state: dict[str, Any]) -> dict[str, int]:
        """Sizes a config may write as ``auto``: ``classes`` (the target's class count) and
        ``vocab`` (a text vocabulary), where the kind knows them."""
        return {}

    def class_names(self, state: dict[str, Any]) -> list[str] | None:
        """The names of the target's classes, in index order, for predictions; None if the
        targets are numbers."""
        return None
