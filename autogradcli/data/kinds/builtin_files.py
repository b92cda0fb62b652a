"""The numeric data files a config names: ``npz`` (arrays by key), ``csv`` (numbers, a target
column) and ``idx`` (MNIST's format). A file given to ``eval --data`` or ``predict --input`` is
read with the run's own settings (its keys, target column, header, delimiter)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..dataset import TensorDataset
from .arrays import ArrayKind, ArraySource, no_empty
from .base import Source

__all__ = ["CsvKind", "IdxKind", "NpzKind"]


class NpzKind(ArrayKind):
    """Arrays ``x_key`` (inputs) and ``y_key`` (targets) of an ``.npz`` file."""

    name = "npz"
    path_settings = ("path",)

    def __init__(self, path: str, x_key: str = "x", y_key: str | None = "y") -> None:
        self.path, self.x_key, self.y_key = path, x_key, y_key

    def load(self) -> Any:
        from ..files import load_npz

        return load_npz(self.path, self.x_key, self.y_key)

    def read_file(self, path: str) -> ArraySource:
        """An ``.npz`` file with the run's keys; another file by its extension."""
        from ..files import load_npz

        if not path.lower().endswith(".npz"):
            return super().read_file(path)
        return ArraySource(
            lambda: no_empty(load_npz(path, self.x_key, self.y_key), path),
            lambda: no_empty(load_npz(path, self.x_key, None), path),
        )


class CsvKind(ArrayKind):
    """A numeric CSV file: the ``target_column`` (an index or a header name) is the target,
    the other columns the features."""

    name = "csv"
    path_settings = ("path",)

    def __init__(
        self,
        path: str,
        target_column: int | str | None = -1,
        header: bool | str = "auto",
        delimiter: str = ",",
    ) -> None:
        self.path, self.target_column = path, target_column
        self.header, self.delimiter = header, delimiter

    def _load(self, path: str, target: Any) -> TensorDataset:
        from ..files import load_csv

        return no_empty(load_csv(path, target, self.header, self.delimiter), path)

    def load(self) -> Any:
        return self._load(self.path, self.target_column)

    def read_file(self, path: str) -> ArraySource:
        """A CSV file with the run's target column, header and delimiter (an ``.npz`` file
        by its extension)."""
        if path.lower().endswith(".npz"):
            return super().read_file(path)
        return ArraySource(
            lambda: self._load(path, self.target_column), lambda: self._load(path, None)
        )

    def fit(self, source: Source, train: Sequence[int]) -> dict[str, Any]:
        """The class count (as every array kind) and the number of feature columns, so
        ``predict`` tells a file with the target column from one without it."""
        assert isinstance(source, ArraySource)
        x = source.labelled().tensors[0]
        return {**super().fit(source, train), "features": int(x.shape[1])}

    def inputs(self, source: Source, state: dict[str, Any]) -> Any:
        """The feature columns: all of a file without the target column, all but the target
        when the file has one column more than the features the run was trained on."""
        assert isinstance(source, ArraySource)
        full = source.unlabelled()
        features = state.get("features")
        has_target = features is not None and int(full.tensors[0].shape[1]) == features + 1
        if self.target_column is not None and has_target:
            return TensorDataset(source.labelled().tensors[0])
        return full


class IdxKind(ArrayKind):
    """An IDX images file (MNIST's format) and its IDX labels file."""

    name = "idx"
    path_settings = ("images", "labels")

    def __init__(self, images: str, labels: str | None = None, flatten: bool = False) -> None:
        self.images, self.labels, self.flatten = images, labels, flatten

    def load(self) -> Any:
        from ..files import load_idx

        return load_idx(self.images, self.labels, self.flatten)
