"""What the trainer needs to run data-parallel, kept beside the loop.

``DistributedContext.from_environment()`` starts the process group when an MPI launcher started
several ranks (``mpiexec``, ``srun``; ``agrad train --nproc N`` re-runs itself under mpiexec).
``train.batch_size`` is always the global batch: ``shard_loader`` gives each rank a contiguous
share of every global batch the one-process loader would make (same sampler, same seeded
``Generator``), so the data order, and a checkpoint's data-order state, do not depend on the
number of ranks. ``check_global_batch`` refuses a batch that does not divide (with the numbers).
``is_main`` says who writes the run folder, the console output and the checkpoints.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

# variables by which MPI launchers tell a process how many ranks there are
_SIZE_VARS = ("OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS")

TIMEOUT_ENV = "AGRAD_DIST_TIMEOUT"
DEFAULT_TIMEOUT_S = 600.0  # a collective waiting longer than this ends every rank


def launched_world_size(environ: Any = None) -> int:
    """The number of ranks an MPI launcher started (1 when none did)."""
    env = os.environ if environ is None else environ
    for name in _SIZE_VARS:
        value = env.get(name)
        if value and value.isdigit():
            return int(value)
    return 1


def collective_timeout(environ: Any = None) -> float:
    """Seconds a rank waits in a collective before every rank is ended (``AGRAD_DIST_TIMEOUT``)."""
    env = os.environ if environ is None else environ
    value = env.get(TIMEOUT_ENV, "")
    if not value:
        return DEFAULT_TIMEOUT_S
    try:
        seconds = float(value)
    except ValueError:
        raise ValueError(f"{TIMEOUT_ENV}={value!r} is not a number of seconds") from None
    if seconds <= 0:
        raise ValueError(f"{TIMEOUT_ENV}={value!r} must be positive")
    return seconds


def split_global_batch(batch_size: int, world_size: int) -> int:
    """Each rank's share of the global batch ``batch_size``; a size that does not divide is
    refused with the numbers and the nearest sizes that do."""
    if world_size < 1:
        raise ValueError(f"world size must be at least 1, got {world_size}")
    if batch_size % world_size:
        lower = batch_size - batch_size % world_size
        upper = lower + world_size
        options = f"{lower} or {upper}" if lower > 0 else f"{upper}"
        raise ValueError(
            f"train.batch_size {batch_size} is the global batch and must divide evenly across "
            f"{world_size} processes ({batch_size} / {world_size} = {batch_size / world_size:.2f}); "
            f"use {options}"
        )
    return batch_size // world_size


def last_batch_problem(n_samples: int, batch_size: int, drop_last: bool, world: int) -> str | None:
    """Why an epoch's last, shorter global batch cannot be shared by ``world`` ranks (each
    needs one sample at least), or None."""
    last = 0 if drop_last else n_samples % batch_size
    if 0 < last < world:
        return (
            f"the last batch of each epoch has {last} of the {n_samples} training samples, "
            f"fewer than the {world} processes; set train.drop_last: true or a batch size that "
            f"leaves at least {world} samples in the last batch"
        )
    return None


def share_bounds(n: int, rank: int, world: int) -> tuple[int, int]:
    """[start, stop) of rank ``rank``'s contiguous share of ``n`` items (the first ``n % world``
    ranks take one more)."""
    base, extra = divmod(n, world)
    start = rank * base + min(rank, extra)
    return start, start + base + (1 if rank < extra else 0)


class ShardBatchSampler:
    """Rank ``rank``'s part of each batch of ``batches`` (a ``BatchSampler``): the global batches
    are drawn exactly as one process draws them, then cut in ``world`` contiguous shares.
    ``skip_empty`` leaves out batches where this rank's share is empty (validation)."""

    def __init__(self, batches: Any, rank: int, world: int, skip_empty: bool = False) -> None:
        self.batches, self.rank, self.world = batches, rank, world
        self.skip_empty = skip_empty

    def __iter__(self) -> Iterator[list[int]]:
        for batch in self.batches:
            start, stop = share_bounds(len(batch), self.rank, self.world)
            if stop > start or not self.skip_empty:
                yield list(batch[start:stop])

    def __len__(self) -> int:
        return len(self.batches)

    def global_size(self, index: int) -> int:
        """The size of global batch ``index`` of an epoch."""
        b = self.batches
        n = len(b.sampler)
        return min(b.batch_size, n - index * b.batch_size)


def shard_loader(loader: Any, rank: int, world: int, skip_empty: bool = False) -> Any:
    """A DataLoader over the same dataset giving this rank its share of each of ``loader``'s
    batches; it shares ``loader``'s ``generator``, so the order is the same on any number of
    ranks and a checkpoint's data-order state fits them all."""
    from ..data import BatchSampler, DataLoader

    if not isinstance(loader.batch_sampler, BatchSampler):
        raise TypeError("data-parallel training needs a DataLoader with a batch_size")
    return DataLoader(
        loader.dataset,
        batch_sampler=ShardBatchSampler(loader.batch_sampler, rank, world, skip_empty),
        collate_fn=loader.collate_fn,
        generator=loader.generator,
    )


@dataclass
class DistributedContext:
    """This process's place in a data-parallel run (rank 0 of 1 when not distributed)."""

    rank: int = 0
    world_size: int = 1
    backend: str = ""

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world_size > 1

    @classmethod
    def from_environment(
        cls, device: str = "cpu", timeout: float | None = None
    ) -> DistributedContext:
        """Start the process group when a launcher started several ranks: MPI for the CPU,
        NCCL for ``device: cuda`` (rank r then uses GPU ``local rank % GPUs``)."""
        if launched_world_size() <= 1:
            return cls()
        from .. import distributed as dist

        if not dist.is_initialized():
            backend = "nccl" if str(device).startswith("cuda") else "mpi"
            dist.init_process_group(
                backend, timeout=collective_timeout() if timeout is None else timeout
            )
        return cls(dist.get_rank(), dist.get_world_size(), dist.get_backend())

    def check_global_batch(self, config: Any, experiment: Any = None) -> None:
        """ConfigError (at ``train.batch_size``'s line) when the global batch does not divide
        across the ranks, or (given the built ``experiment``) when an epoch's last batch has
        fewer samples than there are ranks."""
        if not self.distributed:
            return
        from ..config.errors import ConfigError, ConfigIssue

        t = config.data["train"]
        problem = None
        try:
            split_global_batch(int(t["batch_size"]), self.world_size)
        except ValueError as err:
            problem = str(err).removeprefix("train.batch_size ")
        if problem is None and experiment is not None:
            n = len(experiment.train_loader.dataset)
            problem = last_batch_problem(n, int(t["batch_size"]), t["drop_last"], self.world_size)
        if problem is not None:
            path = ("train", "batch_size")
            raise ConfigError([ConfigIssue(config.where(path), path, problem)])

    def wrap_model(self, model: Any) -> Any:
        """The model as the training step calls it: DistributedDataParallel when distributed."""
        if not self.distributed:
            return model
        from ..nn.parallel import DistributedDataParallel

        return DistributedDataParallel(model)

    def reduce_sums(self, sums: dict[str, float]) -> dict[str, float]:
        """Sums (loss totals, correct counts, sample counts) added over ranks, in float64."""
        if not self.distributed or not sums:
            return dict(sums)
        keys = sorted(sums)
        total = reduce_vector(np.array([float(sums[k]) for k in keys], dtype=np.float64))
        return dict(zip(keys, total.tolist()))

    def barrier(self) -> None:
        if self.distributed:
            from .. import distributed as dist

            dist.barrier()


def reduce_vector(values: np.ndarray, op: str = "sum") -> np.ndarray:
    """``values`` summed (or maxed) over ranks; rank 0's result is sent to all, so every rank
    holds the same bits whatever order the library added in."""
    from .. import distributed as dist
    from ..tensor.tensor import wrap

    t = wrap(np.ascontiguousarray(values))
    dist.all_reduce(t, dist.ReduceOp.MAX if op == "max" else dist.ReduceOp.SUM)
    dist.broadcast(t, 0)
    return t.numpy()


__all__ = [
    "DistributedContext",
    "ShardBatchSampler",
    "collective_timeout",
    "last_batch_problem",
    "launched_world_size",
    "reduce_vector",
    "shard_loader",
    "share_bounds",
    "split_global_batch",
]
