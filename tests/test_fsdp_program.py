"""The FSDP-tutorial-style program runs under mpiexec -n 2, and (being PyTorch code with the
imports renamed) the same text with ``torch`` imports runs under torchrun. That second check
starts three torch processes (~7 s of CPU), past this file's share of the suite's time, so it
runs only with ``AGRAD_TORCHRUN=1``."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from programs.distributed.mpirun import HERE, ROOT, check, run_mpi

KEYS = "['fc1.bias', 'fc1.weight', 'fc2.bias', 'fc2.weight']"


def _check_output(out: str) -> None:
    assert "epoch 0: mean loss" in out and "epoch 1: mean loss" in out, out
    assert f"rank 0: state_dict keys {KEYS}" in out, out
    assert "rank 1: state_dict keys []" in out, out  # rank0_only


@pytest.mark.mpi
def test_fsdp_tutorial_program_under_mpiexec():
    _check_output(check(run_mpi(2, "fsdp_tutorial.py", timeout=180)))


@pytest.mark.slow
@pytest.mark.skipif(
    os.environ.get("AGRAD_TORCHRUN") != "1", reason="set AGRAD_TORCHRUN=1 (starts torchrun)"
)
def test_the_same_program_is_pytorch_code(tmp_path):
    pytest.importorskip("torch")
    text = (HERE / "fsdp_tutorial.py").read_text().replace("autogradcli", "torch")
    prog = tmp_path / "fsdp_tutorial_torch.py"
    prog.write_text(text)
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone"]
    cmd += ["--nproc_per_node", "2", str(prog)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=180, cwd=str(ROOT))
    _check_output(out.stdout)
    # torch's gloo can abort in its own teardown after the program has finished
    teardown_abort = "terminate called without an active exception" in out.stderr
    assert out.returncode == 0 or teardown_abort, out.stdout + out.stderr
