"""Building the data of a run: the datasets of the ``data`` section, the train/validation
split, the loaders, and the small batch the model is built on."""

from __future__ import annotations

from typing import Any

from .. import data as D
from .builder import Builder
from .errors import Path
from .imports import is_import_path

__all__ = [
    "build_loaders",
    "build_test_data",
    "dataset_labels",
    "move_dataset",
    "sample_batch",
    "split_train_val",
]

_SPLIT_KEYS = ("dataset", "val_split", "val", "test_split", "test")


def build_test_data(b: Builder) -> tuple[Any, Any]:
    """(the data left for training and validation, the test set or None); both are None after
    a problem.

    ``test_split`` is carved first, from the whole data set, by a permutation seeded with the
    run's seed; ``val_split`` then splits what remains (``split_train_val``). ``data.test`` is a
    separate set."""
    spec = b.config.data["data"]
    ds = _dataset(b, spec, ("data",))
    if ds is None:
        return None, None
    if spec.get("test"):
        return ds, _dataset(b, spec["test"], ("data", "test"))
    return _split(b, ds, spec.get("test_split") or 0.0, "test_split", "test")


def split_train_val(b: Builder, ds: Any) -> tuple[Any, Any]:
    """(train, val) of ``ds`` (what ``build_test_data`` left): ``ds`` split by ``val_split``
    (seeded), or ``ds`` and ``data.val``; val is None without validation data, both are None
    after a problem."""
    spec = b.config.data["data"]
    if ds is None:
        return None, None
    if spec.get("val"):
        return ds, _dataset(b, spec["val"], ("data", "val"))
    return _split(b, ds, spec["val_split"], "val_split", "validate")


def _split(b: Builder, ds: Any, frac: float, key: str, verb: str) -> tuple[Any, Any]:
    """(the rest, the ``frac`` share) of ``ds`` by a permutation seeded with the run's seed;
    (ds, None) when ``frac`` is 0; (None, None) after reporting a share that leaves a side empty."""
    if not frac:
        return ds, None
    n = len(ds)
    k = round(n * frac)
    if k < 1 or k >= n:
        b.error(
            ("data", key),
            f"{key} {frac} of {n} samples leaves {n - k} to train and {k} to {verb}",
        )
        return None, None
    rest, part = D.random_split(ds, [n - k, k], generator=D.Generator(b.config.data["seed"]))
    return rest, part


def _dataset(b: Builder, spec: dict[str, Any], path: Path) -> Any:
    """The dataset ``spec`` describes, checked to be a non-empty set of (input, target) pairs;
    None after reporting why it cannot be loaded."""
    name = spec["dataset"]
    key = path + ("dataset",)
    file_path = b.config.file_path
    try:
        if is_import_path(name):
            fn = b.resolve(name, key)
            if fn is None:
                return None
            kwargs = {k: v for k, v in spec.items() if k not in _SPLIT_KEYS}
            ds = fn(**kwargs)
        elif name == "digits":
            ds = D.load_digits(flatten=spec["flatten"])
        elif name == "npz":
            key = path + ("path",)
            ds = D.load_npz(file_path(key, spec["path"]), spec["x_key"], spec["y_key"])
        elif name == "csv":
            key = path + ("path",)
            ds = D.load_csv(
                file_path(key, spec["path"]),
                spec["target_column"],
                spec["header"],
                spec["delimiter"],
            )
        elif name == "idx":
            key = path + ("images",)
            labels = spec["labels"]
            ds = D.load_idx(
                file_path(key, spec["images"]),
                file_path(path + ("labels",), labels) if labels else None,
                spec["flatten"],
            )
        elif name == "sine":
            ds = D.sine_regression(spec["n"], spec["noise"], spec["seed"])
        else:
            ds = D.spirals(spec["n_per_class"], spec["classes"], spec["noise"], spec["seed"])
    except Exception as err:
        b.error(key, f"cannot load the data: {err}")
        return None
    if not hasattr(ds, "__len__") or not hasattr(ds, "__getitem__"):
        b.error(key, f"{name!r} returned a {type(ds).__name__}, not a Dataset")
        return None
    if len(ds) == 0:
        b.error(key, "the dataset is empty")
        return None
    first = ds[0]
    if not isinstance(first, (tuple, list)) or len(first) < 2:
        b.error(key, "the dataset's samples must be (input, target) pairs; it has no targets")
        return None
    return ds


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
            num_workers=t["num_workers"],
            generator=D.Generator(b.config.data["seed"]),
        )
        if t["drop_last"] and len(train_loader) == 0:
            b.error(
                ("train", "batch_size"),
                f"batch_size {t['batch_size']} with drop_last leaves no batch of the "
                f"{len(train_ds)} training samples",
            )
    if val_ds is not None:
        val_loader = D.DataLoader(
            val_ds, batch_size=t["batch_size"], shuffle=False, num_workers=t["num_workers"]
        )
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
