"""``DataLoader``: batches from a dataset, with seeded shuffling and ``default_collate``."""

from __future__ import annotations

import collections.abc
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .. import backend
from ..tensor.factory import as_array
from ..tensor.tensor import Tensor, _make
from .dataset import Dataset, fast_batch
from .generator import Generator
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "default_collate"]


def default_collate(batch: list[Any]) -> Any:
    """Merge a list of samples into a batch, like PyTorch: tensors, numpy arrays and numbers are
    stacked along a new first dim; dicts, tuples and lists are collated field by field
    (tuples/lists come back as lists, namedtuples as the namedtuple); strings stay a list."""
    if not batch:
        raise ValueError("default_collate: the batch is empty")
    elem = batch[0]
    if isinstance(elem, Tensor):
        return _stack([t._data for t in batch])
    if isinstance(elem, (np.ndarray, np.generic)):
        if np.asarray(elem).dtype.kind not in "biuf":
            raise TypeError(
                f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts or "
                f"lists; found a numpy array of {np.asarray(elem).dtype}"
            )
        return _stack([as_array(np.asarray(a)) for a in batch])
    if isinstance(elem, bool):
        return _make(np.asarray(batch, dtype=np.bool_))
    if isinstance(elem, int):
        return _make(np.asarray(batch, dtype=np.int64))
    if isinstance(elem, float):
        return _make(np.asarray(batch, dtype=np.float64))
    if isinstance(elem, (str, bytes)):
        return list(batch)
    if isinstance(elem, collections.abc.Mapping):
        return {key: default_collate([d[key] for d in batch]) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(list(samples)) for samples in zip(*batch)]
    raise TypeError(
        f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
        f"found {type(elem).__name__}"
    )


def _stack(arrays: list[Any]) -> Tensor:
    first = arrays[0]
    for i, a in enumerate(arrays):
        if a.shape != first.shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(first.shape)} at "
                f"entry 0 and {list(a.shape)} at entry {i}"
            )
        if backend.device_of(a) != backend.device_of(first):
            raise RuntimeError(
                f"Expected all tensors to be on the same device, but found at least two "
                f"devices, {backend.device_of(first)} and {backend.device_of(a)}!"
            )
    return _make(backend.array_module(first).stack(arrays))


class DataLoader:
    """Iterate over ``dataset`` in batches of ``batch_size``.

    ``shuffle=True`` draws a new order every epoch from ``generator`` (an
    ``autogradcli.data.Generator``) or, when it is None, from the global RNG, so
    ``autogradcli.manual_seed`` makes the order repeat. A ``TensorDataset`` (or a ``Subset`` of
    one) with the default collate is batched by indexing each tensor once per batch.
    """

    def __init__(
        self,
        dataset: Dataset | Any,
        batch_size: int = 1,
        shuffle: bool = False,
        sampler: Sampler | Any = None,
        drop_last: bool = False,
        collate_fn: Callable[[list[Any]], Any] | None = None,
        generator: Generator | None = None,
    ) -> None:
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if sampler is None:
            sampler = (
                RandomSampler(dataset, generator=generator)
                if shuffle
                else SequentialSampler(dataset)
            )
        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.generator = generator
        self.sampler = sampler
        self.batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.collate_fn = collate_fn if collate_fn is not None else default_collate

    def __iter__(self) -> Iterator[Any]:
        fast = self.collate_fn is default_collate
        for indices in self.batch_sampler.index_batches():
            if fast:
                batch = fast_batch(self.dataset, indices)
                if batch is not None:
                    yield batch
                    continue
                fast = False  # not a TensorDataset: don't ask again this epoch
            yield self.collate_fn([self.dataset[i] for i in indices.tolist()])

    def __len__(self) -> int:
        return len(self.batch_sampler)

    def __repr__(self) -> str:
        return (
            f"DataLoader(dataset={type(self.dataset).__name__} of {len(self.dataset)}, "
            f"batch_size={self.batch_size}, sampler={type(self.sampler).__name__}, "
            f"drop_last={self.drop_last})"
        )
