"""Datasets: the indexable collections a ``DataLoader`` draws samples from."""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from .. import backend
from ..tensor.tensor import Tensor, wrap
from .generator import Generator, permutation

__all__ = [
    "ChainDataset",
    "ConcatDataset",
    "Dataset",
    "IterableDataset",
    "Subset",
    "TensorDataset",
    "random_split",
]


class Dataset:
    """A map-style dataset: subclasses implement ``__getitem__(index)`` and ``__len__()``."""

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must implement __getitem__")

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__} must implement __len__")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A stream of samples: subclasses implement ``__iter__``. Under a multi-worker DataLoader
    every worker iterates its own copy, so ``__iter__`` shards with ``get_worker_info()``."""

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError(f"{type(self).__name__} must implement __iter__")

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__} is iterable: it has no __getitem__")

    def __add__(self, other: Any) -> ChainDataset:  # type: ignore[override]
        return ChainDataset([self, other])


class ChainDataset(IterableDataset):
    """Iterable datasets one after the other."""

    def __init__(self, datasets: Iterable[Any]) -> None:
        self.datasets = datasets

    def __iter__(self) -> Iterator[Any]:
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        return sum(len(d) for d in self.datasets)


class TensorDataset(Dataset):
    """Samples are the ``index``-th rows of each tensor: ``(x[i], y[i], ...)``."""

    def __init__(self, *tensors: Tensor) -> None:
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        for i, t in enumerate(tensors):
            if not isinstance(t, Tensor):
                raise TypeError(f"TensorDataset argument {i} is a {type(t).__name__}, not a Tensor")
            if t.ndim == 0:
                raise ValueError(
                    f"TensorDataset argument {i} is 0-d; every tensor needs a first dim"
                )
        sizes = [t.shape[0] for t in tensors]
        if any(s != sizes[0] for s in sizes):
            raise ValueError(f"Size mismatch between tensors: first dimensions are {sizes}")
        self.tensors = tuple(tensors)

    def __getitem__(self, index: Any) -> tuple[Tensor, ...]:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]

    def get_batch(self, indices: np.ndarray) -> list[Tensor]:
        """Rows ``indices`` of every tensor in one indexing operation each (the loader's fast path)."""
        out = []
        for t in self.tensors:
            if t.requires_grad:  # keep the graph: go through the differentiable op
                out.append(t[wrap(_on_device(indices, t))])
            else:
                out.append(wrap(t._data[_on_device(indices, t)]))
        return out


def _on_device(indices: np.ndarray, t: Tensor) -> Any:
    return backend.to_device(indices, t.device)


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order."""

    def __init__(self, dataset: Dataset, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    @property
    def indices(self) -> list[int]:
        return self._indices

    @indices.setter
    def indices(self, indices: Sequence[int]) -> None:
        """Keep the array the loader's fast path indexes with in step with a new ``indices``."""
        self._indices = [int(i) for i in indices]
        self._index_array = np.asarray(self._indices, dtype=np.int64)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __getitems__(self, indices: list[int]) -> list[Any]:
        """The samples at ``indices`` in one call (PyTorch's batched fetch): through the parent's
        own ``__getitems__`` when it has one. A subclass that overrides only ``__getitem__`` gets
        it called per sample, so its override wins (PyTorch refuses such a subclass instead)."""
        cls = type(self)
        if cls.__getitem__ is not Subset.__getitem__ and cls.__getitems__ is Subset.__getitems__:
            return [self[i] for i in indices]
        parent = getattr(self.dataset, "__getitems__", None)
        if callable(parent):
            return parent([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self) -> int:
        return len(self.indices)


class ConcatDataset(Dataset):
    """Datasets one after the other."""

    def __init__(self, datasets: Sequence[Dataset]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = []
        total = 0
        for d in self.datasets:
            total += len(d)
            self.cumulative_sizes.append(total)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, index: int) -> Any:
        if index < 0:
            if -index > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            index += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, index)
        if which >= len(self.datasets):
            raise IndexError(f"index {index} is out of range for a dataset of {len(self)}")
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][index - start]


def fast_batch(dataset: Dataset, indices: np.ndarray) -> list[Tensor] | None:
    """A whole collated batch by direct indexing when ``dataset`` is a TensorDataset or (Subsets
    of) one, all of the exact built-in classes: a subclass may override ``__getitem__`` or
    ``__getitems__``, so it goes through them instead."""
    while type(dataset) is Subset:
        indices = dataset._index_array[indices]
        dataset = dataset.dataset
    if type(dataset) is TensorDataset:
        return dataset.get_batch(indices)
    return None


def random_split(
    dataset: Dataset,
    lengths: Sequence[int | float],
    generator: Generator | np.random.Generator | None = None,
) -> list[Subset]:
    """Split into non-overlapping random Subsets of the given lengths (ints, or fractions that sum
    to 1, PyTorch's rounding: floors, then one extra to the first splits until all are used)."""
    n = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        for i, frac in enumerate(lengths):
            if not 0 <= frac <= 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
        sizes = [math.floor(n * frac) for frac in lengths]
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
    else:
        sizes = [int(s) for s in lengths]
        if any(s != length or s < 0 for s, length in zip(sizes, lengths)):
            raise ValueError(
                f"lengths must be non-negative ints or fractions summing to 1, got {list(lengths)}"
            )
    if sum(sizes) != n:
        raise ValueError(
            f"Sum of input lengths ({sum(sizes)}) does not equal the length of the input dataset ({n})!"
        )
    order = permutation(n, generator)
    out, start = [], 0
    for size in sizes:
        out.append(Subset(dataset, order[start : start + size].tolist()))
        start += size
    return out
