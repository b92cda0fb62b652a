"""Samplers: the order in which a ``DataLoader`` visits a dataset, and how it groups batches.

Built-in samplers also give a whole epoch's order as one int64 array (``indices()``), which the
loader batches by slicing; a user's sampler only needs ``__iter__`` (and ``__len__``)."""

from __future__ import annotations

from collections.abc import Iterator, Sized
from typing import Any

import numpy as np

from .generator import Generator, numpy_generator, permutation

__all__ = [
    "BatchSampler",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
]


class Sampler:
    """Base class of samplers: subclasses implement ``__iter__`` over dataset indices (built-in
    ones implement ``indices()``, one epoch's order as an array) and usually ``__len__``."""

    def __init__(self, data_source: Sized | None = None) -> None:
        pass

    def indices(self) -> np.ndarray:
        """One epoch's indices as an int64 array."""
        return np.fromiter(iter(self), dtype=np.int64)

    def index_chunks(self) -> Iterator[np.ndarray]:
        """One epoch's indices in consecutive int64 chunks (one chunk unless the epoch is too
        long to hold at once)."""
        yield self.indices()

    def __iter__(self) -> Iterator[int]:
        if type(self).index_chunks is not Sampler.index_chunks:
            return (int(i) for chunk in self.index_chunks() for i in chunk.tolist())
        if type(self).indices is Sampler.indices:
            raise NotImplementedError(f"{type(self).__name__} must implement __iter__")
        return iter(self.indices().tolist())


def epoch_chunks(sampler: Any) -> Iterator[np.ndarray]:
    """One epoch of ``sampler`` as consecutive int64 chunks, drawn as they are consumed."""
    if isinstance(sampler, Sampler) and type(sampler).index_chunks is not Sampler.index_chunks:
        yield from sampler.index_chunks()
    else:
        yield epoch_order(sampler)


def epoch_order(sampler: Any) -> np.ndarray:
    """One epoch of ``sampler`` (any iterable of indices) as an int64 array."""
    if isinstance(sampler, Sampler) and type(sampler).indices is not Sampler.indices:
        return sampler.indices()
    return np.fromiter(iter(sampler), dtype=np.int64)


class SequentialSampler(Sampler):
    """``0, 1, ..., len(data_source) - 1``."""

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def indices(self) -> np.ndarray:
        return np.arange(len(self.data_source), dtype=np.int64)

    def __len__(self) -> int:
        return len(self.data_source)


# replacement draws of one epoch longer than this are made chunk by chunk as they are consumed
_CHUNK = 1 << 16


def _check_positive(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} should be a positive integer value, but got {name}={value}")


class RandomSampler(Sampler):
    """A fresh random order each epoch from ``generator`` (or the global RNG, so
    ``autogradcli.manual_seed`` makes it repeat): a permutation, ``num_samples`` long (whole
    permutations, then part of one), or with ``replacement`` independent draws."""

    def __init__(
        self,
        data_source: Sized,
        replacement: bool = False,
        num_samples: int | None = None,
        generator: Generator | None = None,
    ) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(
                f"replacement should be a boolean value, but got replacement={self.replacement}"
            )
        _check_positive("num_samples", self.num_samples)

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def index_chunks(self) -> Iterator[np.ndarray]:
        n, k = len(self.data_source), self.num_samples
        if not self.replacement or k <= _CHUNK:
            yield self.indices()
            return
        gen = numpy_generator(self.generator)  # PyTorch too draws these lazily (num_samples=1e10)
        for start in range(0, k, _CHUNK):
            yield gen.integers(0, n, size=min(_CHUNK, k - start), dtype=np.int64)

    def indices(self) -> np.ndarray:
        n, k = len(self.data_source), self.num_samples
        if self.replacement:
            return numpy_generator(self.generator).integers(0, n, size=k, dtype=np.int64)
        parts = [permutation(n, self.generator) for _ in range(k // n)]
        parts.append(permutation(n, self.generator)[: k % n])
        return np.concatenate(parts)

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order each epoch."""

    def __init__(self, indices: Any, generator: Generator | None = None) -> None:
        self._indices = np.asarray(indices, dtype=np.int64)
        self.generator = generator

    def indices(self) -> np.ndarray:
        return self._indices[permutation(len(self._indices), self.generator)]

    def __len__(self) -> int:
        return len(self._indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn with probabilities proportional to ``weights`` (with
    replacement by default; without it, each index at most once, zero weights last)."""

    def __init__(
        self,
        weights: Any,
        num_samples: int,
        replacement: bool = True,
        generator: Generator | None = None,
    ) -> None:
        _check_positive("num_samples", num_samples)
        if not isinstance(replacement, bool):
            raise ValueError(
                f"replacement should be a boolean value, but got replacement={replacement}"
            )
        w = np.asarray(
            weights.tolist() if hasattr(weights, "tolist") else weights, dtype=np.float64
        )
        if w.ndim != 1:
            raise ValueError(
                f"weights should be a 1d sequence but given weights have shape {tuple(w.shape)}"
            )
        # PyTorch finds these when sampling; here the sampler refuses them when it is made
        if np.any(w < 0) or not np.all(np.isfinite(w)):
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if w.sum() <= 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        if not replacement and num_samples > w.size:
            raise RuntimeError(
                "cannot sample n_sample > prob_dist.size(-1) samples without replacement"
            )
        self.weights = w
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def indices(self) -> np.ndarray:
        gen = numpy_generator(self.generator)
        w = self.weights
        if self.replacement:
            out = gen.choice(len(w), size=self.num_samples, replace=True, p=w / w.sum())
            return out.astype(np.int64, copy=False)
        # without replacement: sort exponential keys scaled by 1 / weight (zero weights last, in
        # index order, once the others are used up, as PyTorch's multinomial gives them)
        keys = np.full(len(w), np.inf)
        np.divide(gen.exponential(size=len(w)), w, out=keys, where=w > 0)
        return np.argsort(keys, kind="stable")[: self.num_samples].astype(np.int64)

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Groups a sampler's indices into lists of ``batch_size`` (the last one shorter unless
    ``drop_last``)."""

    def __init__(self, sampler: Sampler | Any, batch_size: int, drop_last: bool) -> None:
        _check_positive("batch_size", batch_size)
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def index_batches(self) -> Iterator[np.ndarray]:
        """One epoch's batches as int64 arrays."""
        bs = self.batch_size
        rest = np.empty(0, dtype=np.int64)
        for chunk in epoch_chunks(self.sampler):
            order = np.concatenate((rest, chunk)) if len(rest) else chunk
            whole = len(order) - len(order) % bs
            for start in range(0, whole, bs):
                yield order[start : start + bs]
            rest = order[whole:]
        if len(rest) and not self.drop_last:
            yield rest

    def __iter__(self) -> Iterator[list[int]]:
        for batch in self.index_batches():
            yield batch.tolist()

    def __len__(self) -> int:
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
