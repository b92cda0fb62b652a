"""What the trainer needs to run data-parallel, kept beside the loop (not yet wired into it).

``DistributedContext.from_environment()`` starts the process group when an MPI launcher started
several ranks (``mpiexec``, ``srun``; ``agrad train --nproc N`` re-runs itself under mpiexec);
``split_global_batch`` turns ``train.batch_size`` (always the global batch) into each rank's
share, refusing sizes that do not divide; ``wrap_model``, ``train_loader`` and
``reduce_sums`` are the three places the loop changes; ``is_main`` says who writes the run
folder, the console output and the checkpoints.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

# variables by which MPI launchers tell a process how many ranks there are
_SIZE_VARS = ("OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS")


def launched_world_size(environ: Any = None) -> int:
    """The number of ranks an MPI launcher started (1 when none did)."""
    env = os.environ if environ is None else environ
    for name in _SIZE_VARS:
        value = env.get(name)
        if value and value.isdigit():
            return int(value)
    return 1


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


@dataclass
class DistributedContext:
    """This process's place in a data-parallel run (rank 0 of 1 when not distributed)."""

    rank: int = 0
    world_size: int = 1

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
        """Start the process group when a launcher started several ranks (NCCL on CUDA)."""
        if launched_world_size() <= 1:
            return cls()
        from .. import distributed as dist

        if not dist.is_initialized():
            backend = "nccl" if str(device).startswith("cuda") else "mpi"
            dist.init_process_group(backend, timeout=timeout)
        return cls(dist.get_rank(), dist.get_world_size())

    def wrap_model(self, model: Any) -> Any:
        """The model as the training step should call it: DistributedDataParallel when distributed."""
        if not self.distributed:
            return model
        from ..nn.parallel import DistributedDataParallel

        return DistributedDataParallel(model)

    def train_loader(
        self, dataset: Any, batch_size: int, seed: int, drop_last: bool = False
    ) -> Any:
        """This rank's loader: its share of each global batch, in an order seeded by ``seed``
        (call ``loader.sampler.set_epoch(epoch)`` at each epoch start)."""
        from ..data import DataLoader, DistributedSampler

        local = split_global_batch(batch_size, self.world_size)
        sampler = DistributedSampler(
            dataset, self.world_size, self.rank, shuffle=True, seed=seed, drop_last=drop_last
        )
        return DataLoader(dataset, batch_size=local, sampler=sampler, drop_last=drop_last)

    def reduce_sums(self, sums: dict[str, float]) -> dict[str, float]:
        """Sums (loss totals, correct counts, sample counts) added over ranks, in float64."""
        if not self.distributed or not sums:
            return dict(sums)
        import numpy as np

        from .. import distributed as dist
        from ..tensor.tensor import wrap

        keys = sorted(sums)
        t = wrap(np.array([float(sums[k]) for k in keys], dtype=np.float64))
        dist.all_reduce(t)
        return dict(zip(keys, t.tolist()))


__all__ = ["DistributedContext", "launched_world_size", "split_global_batch"]
