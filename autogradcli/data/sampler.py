"""Samplers: the order in which a ``DataLoader`` visits a dataset, and how it groups batches."""

from __future__ import annotations

from collections.abc import Iterator, Sized
from typing import Any

import numpy as np

from .generator import Generator, permutation

__all__ = ["BatchSampler", "RandomSampler", "Sampler", "SequentialSampler", "SubsetRandomSampler"]


class Sampler:
    """Yields dataset indices; subclasses implement ``indices()`` (one epoch's order)."""

    def indices(self) -> np.ndarray:
        raise NotImplementedError(f"{type(self).__name__} must implement indices()")

    def __iter__(self) -> Iterator[int]:
        return iter(self.indices().tolist())

    def __len__(self) -> int:
        raise NotImplementedError


class SequentialSampler(Sampler):
    """``0, 1, ..., len(data_source) - 1``."""

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def indices(self) -> np.ndarray:
        return np.arange(len(self.data_source), dtype=np.int64)

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """A fresh random permutation each epoch, drawn from ``generator`` (or the global RNG, so
    ``autogradcli.manual_seed`` makes the order repeat)."""

    def __init__(self, data_source: Sized, generator: Generator | None = None) -> None:
        self.data_source = data_source
        self.generator = generator

    def indices(self) -> np.ndarray:
        return permutation(len(self.data_source), self.generator)

    def __len__(self) -> int:
        return len(self.data_source)


class SubsetRandomSampler(Sampler):
    """The given indices in a random order each epoch."""

    def __init__(self, indices: Any, generator: Generator | None = None) -> None:
        self._indices = np.asarray(indices, dtype=np.int64)
        self.generator = generator

    def indices(self) -> np.ndarray:
        return self._indices[permutation(len(self._indices), self.generator)]

    def __len__(self) -> int:
        return len(self._indices)


class BatchSampler:
    """Groups a sampler's indices into lists of ``batch_size`` (the last one shorter unless
    ``drop_last``)."""

    def __init__(self, sampler: Sampler | Any, batch_size: int, drop_last: bool) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(
                f"batch_size should be a positive integer value, but got batch_size={batch_size}"
            )
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def index_batches(self) -> Iterator[np.ndarray]:
        """One epoch's batches as int64 arrays."""
        if isinstance(self.sampler, Sampler):
            order = self.sampler.indices()
        else:
            order = np.fromiter(iter(self.sampler), dtype=np.int64)
        n, bs = len(order), self.batch_size
        stop = n - n % bs if self.drop_last else n
        for start in range(0, stop, bs):
            yield order[start : start + bs]

    def __iter__(self) -> Iterator[list[int]]:
        for batch in self.index_batches():
            yield batch.tolist()

    def __len__(self) -> int:
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
