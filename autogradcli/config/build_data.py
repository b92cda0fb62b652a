"""Building the data of a run: the ``data`` section's kind, read, split into train/validation/
test rows, fitted on the training rows, its samples, the loaders, and the small batch the model
is built on."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import data as D
from ..data.kinds import KINDS, DataError, DataKind
from ..data.kinds.function import FunctionKind
from ..tensor.tensor import Tensor, wrap
from .builder import Builder
from .errors import Path
from .imports import is_import_path
from .schema import path_settings_of

__all__ = [
    "RunData",
    "build_data",
    "build_loaders",
    "dataset_labels",
    "make_kind",
    "move_dataset",
    "sample_batch",
    "stored_sample",
]

_SPLIT_KEYS = ("dataset", "val_split", "val", "test_split", "test")
DRY_RUN_BATCH = 8  # samples run through the model while it is built


@dataclass
class RunData:
    """A run's data: its ``kind`` and fitted ``state`` (plain JSON), the train/val/test
    datasets (None where absent, or all None when the data was not read), and ``sample``, the
    (x, y) batch the model is built on. ``doc()`` is what ``data_state.json`` holds."""

    kind: DataKind
    state: dict[str, Any]
    train: Any = None
    val: Any = None
    test: Any = None
    sample: tuple[Any, Any] | None = None
    rows: dict[str, int] | None = None

    def doc(self) -> dict[str, Any]:
        """The contents of ``data_state.json``: the dataset's name, the fitted state, the
        number of rows of each split, and the shape and dtype of the build batch (so a model
        is rebuilt without the data)."""
        out: dict[str, Any] = {"dataset": self.kind.name, "state": self.state}
        if self.rows is None:
            sets = {"train": self.train, "val": self.val, "test": self.test}
            self.rows = {k: len(d) for k, d in sets.items() if d is not None}
        out["rows"] = self.rows
        if self.sample is not None and all(isinstance(t, Tensor) for t in self.sample):
            out["sample"] = {
                k: {"shape": list(t.shape), "dtype": t.cpu().numpy().dtype.name}
                for k, t in zip(("x", "y"), self.sample)
            }
        return out


def build_data(
    b: Builder, stored: dict[str, Any] | None = None, read: bool = True
) -> RunData | None:
    """The data of the ``data`` section through its kind: ``read`` the source, split its rows
    (``test_split`` first, from the whole set, then ``val_split`` of the rest, each seeded by
    the run's seed; or ``data.test``/``data.val`` read separately), ``fit`` on the training rows
    only, then ``samples`` per split. ``stored`` (a run's ``data_state.json``) replaces the fit;
    with it and ``read=False`` nothing is read: the model is built on a batch of zeros of the
    stored shape (eval --data, predict, inspect never need the training file). None after a
    problem (reported)."""
    spec = b.config.data["data"]
    kind = make_kind(b, spec, ("data",))
    if kind is None:
        return None
    if stored is not None and not read and "sample" in stored:
        state = dict(stored.get("state") or {})
        return RunData(kind, state, sample=stored_sample(stored), rows=stored.get("rows") or {})
    source = _read(b, kind, spec, ("data",))
    if source is None:
        return None
    rows = list(range(len(source)))
    test_rows = val_rows = None
    if not spec.get("test"):
        rows, test_rows = _split(b, rows, spec.get("test_split") or 0.0, "test_split", "test")
    if rows is not None and not spec.get("val"):
        rows, val_rows = _split(b, rows, spec["val_split"], "val_split", "validate")
    if rows is None:
        return None
    try:
        state = dict(stored["state"]) if stored is not None else kind.fit(source, rows)
        data = RunData(kind, state, train=kind.samples(source, state, rows, train=True))
        data.val = _part(b, kind, source, state, val_rows, spec.get("val"), "val")
        data.test = _part(b, kind, source, state, test_rows, spec.get("test"), "test")
    except DataError as err:  # found while fitting (a target with one class...)
        b.error(_data_key(kind, spec, ("data",)), f"cannot use the data: {_problems(err)}")
        return None
    if not _pairs(b, data.train, spec):
        return None
    data.sample = sample_batch(data.train, DRY_RUN_BATCH)
    return data


def stored_sample(stored: dict[str, Any]) -> tuple[Any, Any]:
    """A build batch of zeros with the stored shapes and dtypes."""
    return tuple(  # type: ignore[return-value]
        wrap(np.zeros(stored["sample"][k]["shape"], dtype=stored["sample"][k]["dtype"]))
        for k in ("x", "y")
    )


def make_kind(b: Builder, spec: dict[str, Any], path: Path) -> DataKind | None:
    """The ``DataKind`` of the validated data section ``spec`` at ``path``, its path settings
    made absolute by the config's path rule; None after reporting why it cannot be made."""
    name = spec["dataset"]
    key = path + ("dataset",)
    if is_import_path(name):
        fn = b.resolve(name, key)
        if fn is None:
            return None
        kwargs = {k: v for k, v in spec.items() if k not in _SPLIT_KEYS}
        _absolute(b, kwargs, path, path_settings_of(name, fn))
        return FunctionKind(fn, kwargs, name)
    cls = KINDS[name]
    settings = {k: v for k, v in spec.items() if k not in _SPLIT_KEYS}
    _absolute(b, settings, path, cls.path_settings)
    try:
        return cls(**settings)
    except (DataError, TypeError, ValueError) as err:
        b.error(key, f"dataset {name!r}: {err}")
        return None


def _absolute(b: Builder, settings: dict[str, Any], path: Path, keys: Any) -> None:
    """Make the file settings ``keys`` of ``settings`` absolute (``config.file_path``)."""
    for k in keys:
        if isinstance(settings.get(k), str):
            settings[k] = b.config.file_path(path + (k,), settings[k])


def _data_key(kind: DataKind, spec: dict[str, Any], path: Path) -> Path:
    """Where a problem with the data itself is reported: the data's first file setting (its
    ``dataset`` key when it has none)."""
    given = [k for k in kind.path_settings if spec.get(k) is not None]
    return path + ((given[0],) if given else ("dataset",))


def _problems(err: Exception) -> str:
    """``err``'s message; a DataError's several problems one per indented line."""
    if isinstance(err, DataError) and len(err.problems) + bool(err.more) > 1:
        return "\n    " + str(err).replace("\n", "\n    ")
    return str(err)


def _read(b: Builder, kind: DataKind, spec: dict[str, Any], path: Path) -> Any:
    """``kind.read()``, or None after reporting its problems at ``_data_key``."""
    key = _data_key(kind, spec, path)
    try:
        source = kind.read()
    except Exception as err:
        b.error(key, f"cannot load the data: {_problems(err)}")
        return None
    if len(source) == 0:
        b.error(key, "the dataset is empty")
        return None
    return source


def _part(
    b: Builder, kind: DataKind, source: Any, state: dict, rows: Any, spec: Any, name: str
) -> Any:
    """The validation or test samples: ``rows`` of the source, or the separate data set
    ``spec`` (``data.val``/``data.test``) read through its own kind, with the fitted state."""
    if rows is not None:
        return kind.samples(source, state, rows)
    if not spec:
        return None
    path = ("data", name)
    other = make_kind(b, spec, path)
    other_source = _read(b, other, spec, path) if other is not None else None
    if other is None or other_source is None:
        return None
    dataset = other.samples(other_source, state)
    return dataset if _pairs(b, dataset, spec, path) else None


def _pairs(b: Builder, dataset: Any, spec: dict[str, Any], path: Path = ("data",)) -> bool:
    """Whether ``dataset``'s samples are (input, target) pairs (reported when not)."""
    first = dataset[0]
    if not isinstance(first, (tuple, list)) or len(first) < 2:
        b.error(
            path + ("dataset",),
            "the dataset's samples must be (input, target) pairs; it has no targets",
        )
        return False
    return True


def _split(b: Builder, rows: list[int], frac: float, key: str, verb: str) -> tuple[Any, Any]:
    """(the rest, the ``frac`` share) of ``rows`` by a permutation seeded with the run's seed
    (``random_split``'s); (rows, None) when ``frac`` is 0; (None, None) after reporting a share
    that leaves a side empty."""
    if not frac:
        return rows, None
    n = len(rows)
    k = round(n * frac)
    if k < 1 or k >= n:
        b.error(
            ("data", key),
            f"{key} {frac} of {n} samples leaves {n - k} to train and {k} to {verb}",
        )
        return None, None
    rest, part = D.random_split(rows, [n - k, k], generator=D.Generator(b.config.data["seed"]))
    return [rows[i] for i in rest.indices], [rows[i] for i in part.indices]


def build_loaders(b: Builder, train_ds: Any, val_ds: Any) -> tuple[Any, Any]:
    """(train, val) DataLoaders from the ``train`` settings; the train loader shuffles with a
    generator seeded from the run's seed. None where the dataset is None."""
    t = b.config.data["train"]
    train_loader = val_loader = None
    if train_ds is not None:
        train_loader = D.DataLoader(
            train_ds,
            batch_size=t["batch_size"],
            shuffle=t["shuffle"],
            drop_last=t["drop_last"],
            generator=D.Generator(b.config.data["seed"]),
        )
        if t["drop_last"] and len(train_loader) == 0:
            b.error(
                ("train", "batch_size"),
                f"batch_size {t['batch_size']} with drop_last leaves no batch of the "
                f"{len(train_ds)} training samples",
            )
    if val_ds is not None:
        val_loader = D.DataLoader(val_ds, batch_size=t["batch_size"], shuffle=False)
    return train_loader, val_loader


def sample_batch(dataset: Any, k: int) -> tuple[Any, Any]:
    """(x, y): the first ``k`` samples of ``dataset`` (fewer if it is smaller), batched."""
    loader = D.DataLoader(dataset, batch_size=min(k, len(dataset)))
    batch = next(iter(loader))
    return batch[0], batch[1]


def move_dataset(dataset: Any, device: str) -> None:
    """Move the tensors of the TensorDataset under ``dataset`` (through Subsets) to ``device``."""
    while isinstance(dataset, D.Subset):
        dataset = dataset.dataset
    if isinstance(dataset, D.TensorDataset):
        dataset.tensors = tuple(t.to(device) for t in dataset.tensors)


def dataset_labels(dataset: Any) -> Any:
    """The targets of every sample of the TensorDataset under ``dataset`` (through Subsets),
    without iterating it; None for other datasets (the user's own: not read here)."""
    index = None
    while type(dataset) is D.Subset:  # a subclass may change its samples: not read here
        index = list(dataset.indices) if index is None else [dataset.indices[i] for i in index]
        dataset = dataset.dataset
    if type(dataset) is not D.TensorDataset or len(dataset.tensors) < 2:
        return None
    labels = dataset.tensors[1]
    return labels if index is None else labels[index]
