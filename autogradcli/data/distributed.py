"""``DistributedSampler``: each rank's share of a dataset, as PyTorch splits it.

The epoch's order (a seeded permutation, or ``0..n-1``) is padded by repeating its start (or
cut, with ``drop_last``) to a multiple of the number of replicas; rank r takes every
``num_replicas``-th index from position r. Every rank draws the same permutation from
``seed + epoch``, so ``set_epoch`` must be called with the same epoch on every rank. The
permutation comes from our generator, not PyTorch's: same structure, different order.
"""

from __future__ import annotations

import math
from collections.abc import Sized

import numpy as np

from .generator import Generator, permutation
from .sampler import Sampler


class DistributedSampler(Sampler):
    """The indices of ``dataset`` for replica ``rank`` of ``num_replicas`` (default: the
    process group's rank and world size)."""

    def __init__(
        self,
        dataset: Sized,
        num_replicas: int | None = None,
        rank: int | None = None,
        shuffle: bool = True,
        seed: int = 0,
        drop_last: bool = False,
    ) -> None:
        if num_replicas is None or rank is None:
            from .. import distributed as dist

            if not dist.is_initialized():
                raise RuntimeError(
                    "DistributedSampler: give num_replicas and rank, or call "
                    "autogradcli.distributed.init_process_group() first"
                )
            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if rank >= num_replicas or rank < 0:
            raise ValueError(
                f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]"
            )
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def indices(self) -> np.ndarray:
        n = len(self.dataset)
        if self.shuffle:
            order = permutation(n, Generator(self.seed + self.epoch))
        else:
            order = np.arange(n, dtype=np.int64)
        if not self.drop_last:
            pad = self.total_size - n
            if pad > 0:
                order = np.concatenate([order, np.resize(order, pad)])  # repeats from the start
        else:
            order = order[: self.total_size]
        return order[self.rank : self.total_size : self.num_replicas]

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Use ``epoch`` for the next permutation (call it on every rank, each epoch)."""
        self.epoch = epoch


__all__ = ["DistributedSampler"]
