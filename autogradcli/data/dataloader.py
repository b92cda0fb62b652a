"""``DataLoader``: batches from a dataset, in the main process or in worker processes, with
PyTorch's arguments, checks, seeding and batch order."""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from ..backend.cuda import is_available as _cuda_is_available
from .collate import default_collate, default_convert
from .dataset import Dataset, IterableDataset
from .generator import Generator, numpy_generator
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler, epoch_order
from .worker import IterableFetcher, fetch_map

if TYPE_CHECKING:  # multiprocessing (and socket) load only when workers start
    from .multiprocess import MultiProcessIter

__all__ = ["DataLoader", "default_collate", "default_convert"]


class DataLoader:
    """Iterate over ``dataset`` in batches, as PyTorch's ``torch.utils.data.DataLoader``.

    ``shuffle=True`` draws a new order every epoch from ``generator`` (an
    ``autogradcli.data.Generator``) or, when it is None, from the global RNG, so
    ``autogradcli.manual_seed`` makes the order repeat. ``num_workers > 0`` loads batches in
    worker processes (``fork`` on Linux, as PyTorch): each iteration takes a new base seed and
    seeds worker ``i`` with ``base_seed + i`` (``random``, the engine, and numpy's legacy RNG);
    batches come back in the same order as with ``num_workers=0``, and an
    exception in a worker is re-raised here with the worker's traceback in its message.
    ``pin_memory`` (and ``pin_memory_device``) are accepted and do nothing: batches live in
    ordinary CPU memory, and moving them to a device is ``.to(device)``; without a GPU, iterating
    with ``pin_memory=True`` warns as PyTorch does.
    """

    def __init__(
        self,
        dataset: Dataset | Any,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Sampler | Any = None,
        batch_sampler: Any = None,
        num_workers: int = 0,
        collate_fn: Callable[[Any], Any] | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable[[int], None] | None = None,
        multiprocessing_context: Any = None,
        generator: Generator | None = None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
    ) -> None:
        _check_workers(num_workers, timeout, prefetch_factor, persistent_workers)
        if num_workers == 0 and multiprocessing_context is not None:
            raise ValueError(
                "multiprocessing_context can only be used with multi-process loading "
                f"(num_workers > 0), but got num_workers={num_workers}"
            )
        if isinstance(multiprocessing_context, str):
            import multiprocessing

            valid = multiprocessing.get_all_start_methods()
            if multiprocessing_context not in valid:
                raise ValueError(
                    "multiprocessing_context option should specify a valid start method in "
                    f"{valid!r}, but got multiprocessing_context={multiprocessing_context!r}"
                )
        self._is_iterable = isinstance(dataset, IterableDataset)
        if self._is_iterable:
            for name, value in (
                ("shuffle", shuffle),
                ("sampler", sampler),
                ("batch_sampler", batch_sampler),
            ):
                if value not in (None, False):
                    raise ValueError(
                        f"DataLoader with IterableDataset: expected unspecified {name} option, "
                        f"but got {name}={value}"
                    )
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, "
                    "sampler, and drop_last"
                )
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually exclusive with "
                "drop_last"
            )
        if sampler is None and not self._is_iterable:
            sampler = (
                RandomSampler(dataset, generator=generator)
                if shuffle
                else SequentialSampler(dataset)
            )
        if batch_size is not None and batch_sampler is None and not self._is_iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.prefetch_factor = 2 if num_workers > 0 and prefetch_factor is None else prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.generator = generator
        self.persistent_workers = persistent_workers
        self.in_order = in_order
        self._auto_collation = batch_size is not None or batch_sampler is not None
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self._iterator: MultiProcessIter | None = None
        self._iterations = 0

    # ----------------------------------------------------------------- iteration
    def _index_iter(self) -> Iterator[Any]:
        """One epoch of what each fetch gets: index arrays (batches), single indices, or
        placeholders for an IterableDataset."""
        if self._is_iterable:
            return itertools.repeat(None)
        if isinstance(self.batch_sampler, BatchSampler):
            return self.batch_sampler.index_batches()
        if self.batch_sampler is not None:
            return iter(self.batch_sampler)
        return iter(epoch_order(self.sampler).tolist())

    def _epoch_start(self) -> tuple[Iterator[Any], int]:
        """This epoch's indices (drawn now) and a base seed for its workers.

        The seed is derived from the generator's state after the order is drawn and from the
        loader's iteration count, without drawing from the generator: the data order (and the
        global RNG, which a trainer checkpoints) is then the same whatever ``num_workers`` is,
        and each epoch's workers still get new seeds. (PyTorch draws the seed from the
        generator, so its order depends on ``num_workers``.)"""
        import hashlib  # OpenSSL: loaded by the first multi-process epoch, not by the import

        order = self._index_iter()
        if not self._is_iterable:
            order = iter(list(order))
        self._iterations += 1
        state = repr(numpy_generator(self.generator).bit_generator.state)
        digest = hashlib.sha256(f"{state}/{self._iterations}".encode()).digest()
        return order, int.from_bytes(digest[:8], "little") & (2**63 - 1)

    def __iter__(self) -> Iterator[Any]:
        if self.pin_memory and not _cuda_is_available():
            warnings.warn(
                "'pin_memory' argument is set as true but no accelerator is found, "
                "then device pinned memory won't be used.",
                stacklevel=2,
            )
        if self.num_workers == 0:
            return self._single_process()
        from .multiprocess import MultiProcessIter

        order, base_seed = self._epoch_start()
        if self.persistent_workers:
            if self._iterator is None:
                self._iterator = MultiProcessIter(self, order, base_seed)
            else:
                self._iterator.reset(order)
            return self._iterator
        return MultiProcessIter(self, order, base_seed)

    def _single_process(self) -> Iterator[Any]:
        if self._is_iterable:
            fetcher = IterableFetcher(
                self.dataset, self._auto_collation, self.collate_fn, self.drop_last, self.batch_size
            )
            while True:
                try:
                    batch = fetcher.fetch()
                except StopIteration:
                    return
                yield batch
        for index in self._index_iter():
            yield fetch_map(self.dataset, index, self._auto_collation, self.collate_fn)

    def __len__(self) -> int:
        if self._is_iterable:
            n = len(self.dataset)
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else -(-n // self.batch_size)
            return n
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        return len(self.sampler)

    def __repr__(self) -> str:
        size = "" if self._is_iterable else f" of {len(self.dataset)}"
        return (
            f"DataLoader(dataset={type(self.dataset).__name__}{size}, "
            f"batch_size={self.batch_size}, sampler={type(self.sampler).__name__}, "
            f"drop_last={self.drop_last}, num_workers={self.num_workers})"
        )


def _check_workers(
    num_workers: int, timeout: float, prefetch_factor: int | None, persistent_workers: bool
) -> None:
    """PyTorch's checks on the multi-process arguments, in its words."""
    if num_workers < 0:
        raise ValueError(
            "num_workers option should be non-negative; use num_workers=0 to disable "
            "multiprocessing."
        )
    if timeout < 0:
        raise ValueError("timeout option should be non-negative")
    if num_workers == 0 and prefetch_factor is not None:
        raise ValueError(
            "prefetch_factor option could only be specified in multiprocessing.let num_workers "
            "> 0 to enable multiprocessing, otherwise set prefetch_factor to None."
        )
    if prefetch_factor is not None and prefetch_factor < 0:
        raise ValueError("prefetch_factor option should be non-negative")
    if persistent_workers and num_workers == 0:
        raise ValueError("persistent_workers option needs num_workers > 0")
