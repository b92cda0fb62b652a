"""The pieces `agrad train --nproc N` uses: the global batch split, the shares of each global
batch, the launcher command, and the trainer-side context (one process here; on ranks under
mpiexec)."""

from __future__ import annotations

import sys

import pytest
from programs.distributed.mpirun import check, run_mpi

from autogradcli.cli.launch import mpiexec_command, strip_nproc
from autogradcli.trainer.distributed import (
    DistributedContext,
    collective_timeout,
    last_batch_problem,
    launched_world_size,
    shard_loader,
    share_bounds,
    split_global_batch,
)


def test_split_global_batch_divides_or_names_the_numbers():
    assert split_global_batch(64, 1) == 64
    assert split_global_batch(64, 2) == 32
    assert split_global_batch(66, 3) == 22
    with pytest.raises(ValueError) as e:
        split_global_batch(64, 3)
    assert str(e.value) == (
        "train.batch_size 64 is the global batch and must divide evenly across 3 processes "
        "(64 / 3 = 21.33); use 63 or 66"
    )
    with pytest.raises(ValueError, match=r"use 4$"):
        split_global_batch(2, 4)


def test_shares_of_a_batch_cover_it_once_in_order():
    for n in (0, 1, 5, 17, 64):
        for world in (1, 2, 3):
            bounds = [share_bounds(n, r, world) for r in range(world)]
            assert bounds[0][0] == 0 and bounds[-1][1] == n
            assert all(bounds[i][1] == bounds[i + 1][0] for i in range(world - 1))
            sizes = [b - a for a, b in bounds]
            assert max(sizes) - min(sizes) <= 1 and sizes == sorted(sizes, reverse=True)
    assert [share_bounds(17, r, 2) for r in range(2)] == [(0, 9), (9, 17)]


def test_sharded_loaders_split_the_one_process_batches():
    """Two ranks' shares of every batch, put together, are the one-process batch, drawn from
    the same generator (so the order does not depend on the number of ranks)."""

    from autogradcli import arange
    from autogradcli.data import DataLoader, Generator, TensorDataset

    ds = TensorDataset(arange(37))

    def loader():
        return DataLoader(ds, batch_size=8, shuffle=True, generator=Generator(5))

    one = [b[0].numpy().tolist() for b in loader()]
    parts = [[b[0].numpy().tolist() for b in shard_loader(loader(), r, 2)] for r in range(2)]
    assert [a + b for a, b in zip(*parts)] == one
    assert [len(b) for b in parts[1]] == [4, 4, 4, 4, 2]  # the last batch: 5 = 3 + 2
    sharded = shard_loader(loader(), 0, 2)
    assert len(sharded) == 5 and sharded.generator is not None
    assert [sharded.batch_sampler.global_size(i) for i in range(5)] == [8, 8, 8, 8, 5]
    assert sorted([i for p in parts for b in p for i in b]) == list(range(37))


def test_last_batch_and_timeout_limits():
    assert last_batch_problem(1617, 64, False, 2) is None  # 17 left: 9 + 8
    assert last_batch_problem(1617, 808, False, 2).startswith(
        "the last batch of each epoch has 1 of the 1617 training samples, fewer than the 2"
    )
    assert last_batch_problem(1617, 808, True, 2) is None  # dropped
    assert last_batch_problem(10, 4, False, 2) is None  # 2 left: just enough
    assert last_batch_problem(9, 4, False, 2) is not None  # 1 left
    assert collective_timeout({}) == 600.0
    assert collective_timeout({"AGRAD_DIST_TIMEOUT": "2.5"}) == 2.5
    for bad in ("0", "-1", "soon"):
        with pytest.raises(ValueError, match="AGRAD_DIST_TIMEOUT"):
            collective_timeout({"AGRAD_DIST_TIMEOUT": bad})


def test_launcher_command():
    assert strip_nproc(["train", "c.yaml", "--nproc", "2", "--set", "a=1"]) == [
        "train",
        "c.yaml",
        "--set",
        "a=1",
    ]
    assert strip_nproc(["train", "--nproc=3", "c.yaml"]) == ["train", "c.yaml"]
    cmd = mpiexec_command(64, ["train", "c.yaml", "--nproc", "64"], mpiexec="/x/mpiexec")
    assert cmd[:4] == ["/x/mpiexec", "-n", "64", "--oversubscribe"]
    assert cmd[4:] == [sys.executable, "-m", "autogradcli.cli", "train", "c.yaml"]


def test_world_size_from_the_launcher_environment():
    assert launched_world_size({}) == 1
    assert launched_world_size({"OMPI_COMM_WORLD_SIZE": "4"}) == 4
    assert launched_world_size({"PMI_SIZE": "3"}) == 3


def test_single_process_context_changes_nothing():
    ctx = DistributedContext.from_environment()
    assert ctx.is_main and not ctx.distributed
    model = object()
    assert ctx.wrap_model(model) is model
    assert ctx.reduce_sums({"loss": 1.5}) == {"loss": 1.5}


@pytest.mark.mpi
def test_context_on_two_ranks(tmp_path):
    prog = tmp_path / "ctx.py"
    prog.write_text(
        "import autogradcli.nn as nn\n"
        "from autogradcli.data import TensorDataset\n"
        "from autogradcli import arange\n"
        "from autogradcli.trainer.distributed import DistributedContext\n"
        "ctx = DistributedContext.from_environment()\n"
        "assert ctx.distributed and ctx.world_size == 2\n"
        "m = ctx.wrap_model(nn.Linear(2, 2))\n"
        "assert type(m).__name__ == 'DistributedDataParallel'\n"
        "from autogradcli.data import DataLoader\n"
        "from autogradcli.trainer.distributed import shard_loader\n"
        "full = DataLoader(TensorDataset(arange(8)), batch_size=4)\n"
        "loader = shard_loader(full, ctx.rank, ctx.world_size)\n"
        "assert [b[0].tolist() for b in loader] == ([[0, 1], [4, 5]], [[2, 3], [6, 7]])[ctx.rank]\n"
        "s = ctx.reduce_sums({'correct': ctx.rank + 1.0, 'n': 4})\n"
        "assert s == {'correct': 3.0, 'n': 8.0}, s\n"
        "from autogradcli import tensor\n"
        "from autogradcli.trainer.distributed_trainer import ReducedEpochSums\n"
        "sums = ReducedEpochSums(\n"
        "    'classification', nn.CrossEntropyLoss(), ['accuracy', 'f1_macro', 'perplexity']\n"
        ")\n"
        "out = tensor([[2.0, 0.0, 0.0], [0.0, 2.0, 0.0]]) if ctx.rank == 0 else tensor([[0.0, 0.0, 1.0]])\n"
        "y = tensor([0, 2]) if ctx.rank == 0 else tensor([2])\n"
        "sums.add(1.0 + ctx.rank, out, out, y)\n"
        "m = sums.metrics('val')\n"
        "assert m['val_loss'] == (1.0 * 2 + 2.0 * 1) / 3, m\n"
        "assert m['val_acc'] == 2 / 3, m\n"
        "assert abs(m['val_f1_macro'] - (1.0 + 0.0 + 2 / 3) / 3) < 1e-12, m  # tp 1,0,1 fp 0,1,0 fn 0,0,1\n"
        "import math\n"
        "a, b = math.log(1 + 2 * math.exp(-2)), math.log(1 + 2 * math.exp(-1))  # -log p(target)\n"
        "assert abs(m['val_perplexity'] - math.exp((a + (2 + a) + b) / 3)) < 1e-9, m\n"
        "assert sums.n == (2, 1)[ctx.rank]  # the rank's own sums are kept\n"
        "print('rank', ctx.rank, 'main' if ctx.is_main else 'worker', 'ok', flush=True)\n"
    )
    out = check(run_mpi(2, prog, timeout=120))
    assert "rank 0 main ok" in out and "rank 1 worker ok" in out
