"""The shared machinery of the kinds whose data is a set of in-memory arrays (the built-in
``digits``, ``npz``, ``csv``, ``idx``, ``sine``, ``spirals`` and a ``module:fn`` function): a
``Source`` holding the loaded Dataset, samples as a ``Subset`` of its rows, and the by-extension
reader of a data file given to ``eval --data`` / ``predict --input``."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from ..dataset import Subset, TensorDataset
from .base import DataKind, Source

__all__ = ["ArrayKind", "ArraySource", "read_data_file"]


class ArraySource(Source):
    """A loaded Dataset of (input, target) pairs, or a file read on demand: ``labelled()`` for
    samples with targets, ``unlabelled()`` for inputs only (a file without a target column)."""

    def __init__(
        self,
        labelled: Callable[[], Any],
        unlabelled: Callable[[], Any] | None = None,
    ) -> None:
        self._labelled, self._unlabelled = labelled, unlabelled or labelled
        self._cache: dict[str, Any] = {}

    def labelled(self) -> Any:
        """The Dataset of (input, target) pairs (loaded once)."""
        if "labelled" not in self._cache:
            self._cache["labelled"] = self._labelled()
        return self._cache["labelled"]

    def unlabelled(self) -> Any:
        """The Dataset read without targets (loaded once)."""
        if "unlabelled" not in self._cache:
            self._cache["unlabelled"] = self._unlabelled()
        return self._cache["unlabelled"]

    def __len__(self) -> int:
        return len(self.labelled() if "labelled" in self._cache else self.unlabelled())


class ArrayKind(DataKind):
    """A kind whose configured data loads whole into a Dataset (``load``); a file given to
    eval/predict is read by its extension (``read_data_file``) unless the kind says how."""

    def load(self) -> Any:
        """The configured Dataset of (input, target) pairs."""
        raise NotImplementedError

    def read_file(self, path: str) -> ArraySource:
        """A data file given to ``eval --data`` / ``predict --input``: by its extension."""
        return ArraySource(
            lambda: read_data_file(path, targets=True), lambda: read_data_file(path, False)
        )

    def read(self, path: str | None = None) -> Source:
        """The configured data, loaded now (so its problems surface at once), or ``path``."""
        if path is not None:
            if not os.path.isfile(path):
                raise ValueError(f"no such data file: {path}")
            return self.read_file(path)
        dataset = self.load()
        return ArraySource(lambda: dataset)

    def fit(self, source: Source, train: Sequence[int]) -> dict[str, Any]:
        """Nothing to learn; the class count when the training targets are class indices."""
        assert isinstance(source, ArraySource)
        labels = _labels(source.labelled())
        if labels is None or labels.dtype.kind not in "iu" or labels.ndim != 1 or not len(train):
            return {}
        return {"classes": int(labels[list(train)].max()) + 1}

    def samples(
        self,
        source: Source,
        state: dict[str, Any],
        rows: Sequence[int] | None = None,
        train: bool = False,
    ) -> Any:
        assert isinstance(source, ArraySource)
        dataset = source.labelled()
        return dataset if rows is None else Subset(dataset, rows)

    def inputs(self, source: Source, state: dict[str, Any]) -> Any:
        assert isinstance(source, ArraySource)
        return source.unlabelled()

    def sizes(self, state: dict[str, Any]) -> dict[str, int]:
        return {"classes": state["classes"]} if "classes" in state else {}


def _labels(dataset: Any) -> Any:
    """The target array of a TensorDataset (numpy), None for another Dataset."""
    if type(dataset) is not TensorDataset or len(dataset.tensors) < 2:
        return None
    return dataset.tensors[1].cpu().numpy()


def read_data_file(path: str, targets: bool) -> TensorDataset:
    """A TensorDataset from a data file, by its extension: ``.npz`` (arrays ``x`` and ``y``),
    ``.csv`` (the last column is the target when ``targets``) or anything else as an IDX images
    file (no targets). ValueError naming the file for a missing, empty or unreadable one."""
    from ..files import NoRowsError, load_csv, load_idx, load_npz

    if not os.path.isfile(path):
        raise ValueError(f"no such data file: {path}")
    lower = path.lower()
    try:
        if lower.endswith(".npz"):
            dataset = load_npz(path, "x", "y" if targets else None)
        elif lower.endswith((".csv", ".txt")):
            dataset = load_csv(path, -1 if targets else None)
        elif targets:
            raise _Refused(
                f"{path}: evaluation needs targets: give an .npz file (x, y) or a .csv file "
                "(the last column is the target)"
            )
        else:
            dataset = load_idx(path)
    except _Refused as err:
        raise ValueError(str(err)) from None
    except NoRowsError as err:
        raise ValueError(f"{path} has no rows: {err.why}") from None
    except Exception as err:
        raise ValueError(f"cannot load {path}: {err}") from None
    return no_empty(dataset, path)


def no_empty(dataset: TensorDataset, path: str) -> TensorDataset:
    """``dataset``, refused ("FILE has no rows") when it has no sample."""
    if len(dataset) == 0:
        shapes = ", ".join(str(tuple(t.shape)) for t in dataset.tensors)
        raise ValueError(f"{path} has no rows (its arrays have shapes {shapes})")
    return dataset


class _Refused(Exception):
    """A message to pass on as is."""
