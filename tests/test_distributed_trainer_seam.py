"""The pieces `agrad train --nproc N` will use: the global batch split, the launcher command,
and the trainer-side context (one process here; on ranks under mpiexec)."""

from __future__ import annotations

import sys

import pytest
from programs.distributed.mpirun import check, run_mpi

from autogradcli.cli.launch import mpiexec_command, strip_nproc
from autogradcli.trainer.distributed import (
    DistributedContext,
    launched_world_size,
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
        "loader = ctx.train_loader(TensorDataset(arange(8)), batch_size=4, seed=0)\n"
        "assert [len(b[0]) for b in loader] == [2, 2]  # 4 of the 8 samples per rank\n"
        "s = ctx.reduce_sums({'correct': ctx.rank + 1.0, 'n': 4})\n"
        "assert s == {'correct': 3.0, 'n': 8.0}, s\n"
        "print('rank', ctx.rank, 'main' if ctx.is_main else 'worker', 'ok', flush=True)\n"
    )
    out = check(run_mpi(2, prog, timeout=120))
    assert "rank 0 main ok" in out and "rank 1 worker ok" in out
