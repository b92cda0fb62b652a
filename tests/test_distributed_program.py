"""The DDP-tutorial-style program runs under mpiexec -n 2, and (being PyTorch code with the
imports renamed) the same text with ``torch`` imports runs under torchrun."""

from __future__ import annotations

import subprocess
import sys

import pytest
from programs.distributed.mpirun import HERE, ROOT, check, run_mpi


@pytest.mark.mpi
def test_ddp_tutorial_program_under_mpiexec():
    out = check(run_mpi(2, "ddp_tutorial.py", timeout=180))
    for r in (0, 1):
        assert f"Start running basic DDP example on rank {r}." in out
        assert f"rank {r}: finished 5 steps" in out
        assert f"rank {r}: checkpoint loaded, replicas identical: True" in out


@pytest.mark.slow
def test_the_same_program_is_pytorch_code(tmp_path):
    pytest.importorskip("torch")
    text = (HERE / "ddp_tutorial.py").read_text().replace("autogradcli", "torch")
    prog = tmp_path / "ddp_tutorial_torch.py"
    prog.write_text(text)
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc_per_node",
        "2",
        str(prog),
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=180, cwd=str(ROOT))
    for r in (0, 1):
        assert f"rank {r}: checkpoint loaded, replicas identical: True" in out.stdout, out.stderr
    # torch's gloo can abort in its own teardown after the program has finished (seen under
    # load: "terminate called without an active exception"); any other failure counts.
    teardown_abort = "terminate called without an active exception" in out.stderr
    assert out.returncode == 0 or teardown_abort, out.stdout + out.stderr
