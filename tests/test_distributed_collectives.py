"""autogradcli.distributed's collectives on 2 and 3 MPI ranks against numpy references, and
a failing rank ending every rank (no hang)."""

from __future__ import annotations

import sys

import pytest
from programs.distributed.mpirun import check, run_mpi

import autogradcli as ag
import autogradcli.distributed as dist

pytestmark = pytest.mark.mpi


def test_import_does_not_load_mpi4py():
    code = "import autogradcli, autogradcli.distributed, sys; print('mpi4py' in sys.modules)"
    import subprocess

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_not_initialized_errors_as_torch():
    assert not dist.is_initialized()
    for call in (dist.get_rank, dist.get_world_size, lambda: dist.all_reduce(ag.ones(2))):
        with pytest.raises(ValueError, match="Default process group has not been initialized"):
            call()


def test_reduce_op_matches_torch():
    torch = pytest.importorskip("torch")
    import torch.distributed as tdist

    for name in ("SUM", "AVG", "PRODUCT", "MIN", "MAX"):
        ours, theirs = getattr(dist.ReduceOp, name), getattr(tdist.ReduceOp, name)
        assert int(ours) == int(theirs)
        assert repr(ours) == repr(theirs) and str(ours) == str(theirs)
    del torch


def test_bad_backend_and_init_method_are_named():
    with pytest.raises(ValueError, match="unknown backend 'ucc'"):
        dist.init_process_group("ucc")
    with pytest.raises(ValueError, match="tcp://"):
        dist.init_process_group("mpi", init_method="tcp://10.0.0.1:23456")
    assert not dist.is_initialized()


@pytest.mark.parametrize("n", [2, 3])
def test_every_collective_op_and_dtype(n):
    out = check(run_mpi(n, "collectives_worker.py"))
    for r in range(n):
        assert f"rank {r}/{n}: " in out and "checked OK" in out


def test_single_process_group_and_env_mismatch(monkeypatch):
    """Without a launcher MPI starts one rank; RANK/WORLD_SIZE that disagree are named."""
    from programs.distributed.mpirun import require_mpi

    require_mpi()
    import subprocess

    from programs.distributed.mpirun import mpi_env

    code = (
        "import autogradcli as ag, autogradcli.distributed as d\n"
        "d.init_process_group('mpi')\n"
        "t = ag.tensor([1.0, 2.0]); d.all_reduce(t, d.ReduceOp.AVG)\n"
        "print(d.get_rank(), d.get_world_size(), t.tolist())\n"
        "try:\n    d.init_process_group('mpi')\nexcept ValueError as e:\n    print(e)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=mpi_env(), timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "0 1 [1.0, 2.0]",
        "trying to initialize the default process group twice!",
    ]
    bad = subprocess.run(
        [sys.executable, "-c", "import autogradcli.distributed as d; d.init_process_group('mpi')"],
        capture_output=True,
        text=True,
        env=mpi_env({"WORLD_SIZE": "4"}),
        timeout=120,
    )
    assert bad.returncode != 0
    assert (
        "world_size 4 (environment WORLD_SIZE) does not match the MPI launcher's world_size 1"
        in bad.stderr
    )


def test_a_rank_that_raises_ends_every_rank():
    proc = run_mpi(2, "failing_worker.py", "raise", timeout=120)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert "ValueError: rank 1 failed on purpose" in out
    assert "rank 1 raised ValueError; aborting every rank" in out
    assert "finished the all_reduce" not in out


def test_a_stuck_rank_times_out_the_collective_by_name():
    proc = run_mpi(2, "failing_worker.py", "stuck", timeout=120)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert "rank 0: all_reduce did not complete within the 2 s timeout" in out
    assert "finished the all_reduce" not in out


def test_a_slow_rank_inside_the_timeout_is_waited_for():
    out = check(run_mpi(2, "failing_worker.py", "slow", timeout=120))
    assert "rank 0 finished the all_reduce" in out and "rank 1 finished the all_reduce" in out


def test_a_killed_rank_ends_the_job():
    proc = run_mpi(2, "failing_worker.py", "kill", timeout=120)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert "finished the all_reduce" not in out
