"""`agrad train --nproc N` and `mpiexec -n N agrad train`: data-parallel runs of a config.

The truth is the one-process run of the same config: 2 ranks must end with its weights (float32
reduction order aside), its metrics, one run folder written by rank 0, and checkpoints that any
number of processes resumes. Tolerance: the digits MLP below differs from the one-process run by
about 2e-7 after 2 epochs (SGD with momentum, lr 0.1); the bound is 2e-5, while a replica trained
on one rank's share of each batch alone ends > 1e-3 away.
"""

from __future__ import annotations

import glob
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from programs.distributed.mpirun import mpi_env, mpiexec, require_mpi

import autogradcli as ag

TOL = 2e-5  # float32 reduction order over ~25 steps; measured ~2e-7

DIGITS = """\
name: digits
seed: 0
data:
  dataset: digits
  flatten: true
  val_split: 0.1
model:
  - {type: Linear, in_features: auto, out_features: 32}
  - ReLU
  - {type: Linear, in_features: auto, out_features: 10}
loss: CrossEntropyLoss
optimizer: {type: SGD, lr: 0.1, momentum: 0.9}
train: {epochs: 2, batch_size: 64}
"""
# 1617 training samples: the last global batch has 17 (9 + 8 on 2 ranks: weighted shares)

HOOK = """\
import os, signal, time
from autogradcli.trainer.callbacks import Callback

class Die(Callback):
    '''Rank 1 dies (kill -9) or hangs in epoch 2.'''
    def __init__(self, how='kill'):
        self.how = how
    def on_batch_end(self, trainer):
        if os.environ.get('OMPI_COMM_WORLD_RANK') != '1' or trainer.epoch < 2:
            return
        if trainer.batch_in_epoch == 3:
            if self.how == 'kill':
                os.kill(os.getpid(), signal.SIGKILL)
            time.sleep(600)
"""


def agrad(*args: str, cwd: Path, env: dict | None = None, timeout: float = 300):
    return subprocess.run(
        [sys.executable, "-m", "autogradcli.cli", *args],
        capture_output=True,
        text=True,
        cwd=str(cwd),
        env=mpi_env(env),
        timeout=timeout,
    )


def mpi_agrad(n: int, *args: str, cwd: Path, env: dict | None = None, timeout: float = 300):
    require_mpi()
    cmd = [mpiexec(), "--oversubscribe", "-n", str(n), sys.executable, "-m", "autogradcli.cli"]
    return subprocess.run(
        [*cmd, *args],
        capture_output=True,
        text=True,
        cwd=str(cwd),
        env=mpi_env(env),
        timeout=timeout,
    )


def ok(proc: subprocess.CompletedProcess) -> str:
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"exit {proc.returncode}\n{out[-6000:]}"
    return out


def one_run(runs: Path) -> Path:
    found = glob.glob(str(runs / "*"))
    assert len(found) == 1, found
    return Path(found[0])


def weights(run: Path) -> dict[str, np.ndarray]:
    state = ag.load(str(run / "checkpoints" / "last"))
    return {k: v.numpy() for k, v in state["model"].items()}


def max_diff(a: dict, b: dict) -> float:
    assert a.keys() == b.keys()
    return max(float(np.abs(a[k] - b[k]).max()) for k in a)


def history(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    d = tmp_path_factory.mktemp("ddpcli")
    (d / "digits.yaml").write_text(DIGITS)
    (d / "die.py").write_text(HOOK)
    return d


@pytest.fixture(scope="module")
def single(work):
    """The one-process run of the config (2 epochs)."""
    ok(agrad("train", "digits.yaml", "--runs-dir", "one", "--progress", "none", cwd=work))
    return one_run(work / "one")


@pytest.fixture(scope="module")
def two(work):
    """`agrad train --nproc 2` of the same config, and its output."""
    require_mpi()
    out = ok(
        agrad(
            "train",
            "digits.yaml",
            "--nproc",
            "2",
            "--runs-dir",
            "two",
            "--progress",
            "plain",
            cwd=work,
        )
    )
    return one_run(work / "two"), out


@pytest.mark.mpi
def test_two_ranks_train_the_one_process_model(work, single, two):
    run2, out = two
    w1, w2 = weights(single), weights(run2)
    assert max_diff(w1, w2) < TOL
    h1, h2 = history(single), history(run2)
    assert [r["epoch"] for r in h2] == [1, 2]
    for a, b in zip(h1, h2):  # every epoch's metrics, reduced over the ranks
        for key in ("train_loss", "train_acc", "val_loss", "val_acc"):
            assert abs(a[key] - b[key]) < 1e-6, (key, a, b)
        assert a["step"] == b["step"] == 26 * b["epoch"]  # global batches: ceil(1617 / 64)
    # rank 0 alone prints and writes: one banner, one run folder
    assert out.count("training 2 epochs on cpu ->") == 1
    assert out.count("run completed") == 1
    summary = json.loads((run2 / "summary.json").read_text())
    assert summary["world_size"] == 2 and summary["status"] == "completed"
    assert json.loads((single / "summary.json").read_text())["world_size"] == 1


@pytest.mark.mpi
def test_one_ranks_share_alone_trains_a_different_model(work, single, two):
    """The tolerance above can fail: rank 0's share of each batch, without the other rank's
    gradients, ends far from the one-process model."""
    from autogradcli.config import build_experiment, load_config
    from autogradcli.trainer import Trainer
    from autogradcli.trainer.distributed import shard_loader

    exp = build_experiment(load_config(str(work / "digits.yaml")))
    trainer = Trainer(
        exp.model,
        exp.loss_fn,
        exp.optimizer,
        shard_loader(exp.train_loader, 0, 2),
        epochs=2,
        seed=exp.seed,
    )
    trainer.fit()
    alone = {k: v.numpy() for k, v in exp.model.state_dict().items()}
    assert max_diff(alone, weights(single)) > 1e-3
    assert max_diff(alone, weights(two[0])) > 1e-3


@pytest.mark.mpi
def test_plain_mpiexec_runs_the_ranks_from_the_mpi_environment(work, single):
    proc = mpi_agrad(
        2, "train", "digits.yaml", "--runs-dir", "direct", "--progress", "none", cwd=work
    )
    out = ok(proc)
    run = one_run(work / "direct")
    assert out.count("run completed") == 1  # rank 0's one line
    assert max_diff(weights(run), weights(single)) < TOL
    assert json.loads((run / "summary.json").read_text())["world_size"] == 2


@pytest.mark.mpi
def test_inspect_shows_the_world_size(work, two, capsys):
    from autogradcli.cli import main

    assert main(["inspect", str(two[0])]) == 0
    assert "world size: 2 process(es), data-parallel" in capsys.readouterr().out


def test_a_global_batch_that_does_not_divide_is_refused_before_starting(work):
    """Checked by the launching process (no MPI needed): exit 2, the numbers, no run folder."""
    proc = agrad(
        "train", "digits.yaml", "--nproc", "3", "--runs-dir", "refused", cwd=work, timeout=120
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "train.batch_size: 64 is the global batch and must divide evenly across 3 " in (
        proc.stderr
    )
    assert "(64 / 3 = 21.33); use 63 or 66" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (work / "refused").exists()
    # 808 divides by 2, but leaves 1617 % 808 = 1 sample for the last batch: fewer than 2 ranks
    proc = agrad(
        "train",
        "digits.yaml",
        "--nproc",
        "2",
        "--set",
        "train.batch_size=808",
        "--runs-dir",
        "refused",
        cwd=work,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "the last batch of each epoch has 1 of the 1617 training samples, fewer than the 2" in (
        proc.stderr
    )
    assert not (work / "refused").exists()


@pytest.mark.mpi
def test_plain_mpiexec_refuses_the_batch_once(work):
    proc = mpi_agrad(3, "train", "digits.yaml", "--runs-dir", "refused3", cwd=work)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.count("must divide evenly across 3 processes") == 1  # rank 0 prints
    assert not (work / "refused3").exists()


@pytest.mark.mpi
def test_resume_on_any_number_of_processes(work, single):
    """A 2-rank run resumed on 1 process, and a 1-process run resumed on 2 ranks, both end
    with the uninterrupted one-process model."""
    base = ["--progress", "none", "--set", "train.epochs=1"]
    ok(agrad("train", "digits.yaml", "--nproc", "2", "--runs-dir", "r21", *base, cwd=work))
    run21 = one_run(work / "r21")
    ok(agrad("train", "--resume", str(run21), "--set", "train.epochs=2", cwd=work))
    assert max_diff(weights(run21), weights(single)) < TOL
    assert json.loads((run21 / "summary.json").read_text())["world_size"] == 1

    ok(agrad("train", "digits.yaml", "--runs-dir", "r12", *base, cwd=work))
    run12 = one_run(work / "r12")
    ok(agrad("train", "--resume", str(run12), "--nproc", "2", "--set", "train.epochs=2", cwd=work))
    assert max_diff(weights(run12), weights(single)) < TOL
    assert [r["epoch"] for r in history(run12)] == [1, 2]
    assert json.loads((run12 / "summary.json").read_text())["world_size"] == 2


def _with_hook(work: Path, how: str) -> str:
    name = f"die_{how}.yaml"
    (work / name).write_text(DIGITS + f"hooks:\n  - {{type: die.py:Die, how: {how}}}\n")
    return name


@pytest.mark.mpi
def test_a_killed_rank_ends_every_rank_and_leaves_a_resumable_last(work, single):
    config = _with_hook(work, "kill")
    proc = agrad(
        "train",
        config,
        "--nproc",
        "2",
        "--runs-dir",
        "killed",
        "--progress",
        "none",
        cwd=work,
        env={"AGRAD_DIST_TIMEOUT": "60"},
        timeout=240,
    )
    err = proc.stdout + proc.stderr
    assert proc.returncode not in (0, 1, 2), err
    assert "rank 1" in err and "signal 9" in err  # mpiexec names the rank
    assert "ended abnormally" in err and "60 s collective timeout, AGRAD_DIST_TIMEOUT" in err
    run = one_run(work / "killed")
    state = ag.load(str(run / "checkpoints" / "last"))
    assert state["epoch"] == 1 and state["batch_in_epoch"] == 0  # the previous epoch's end
    # resumable (on one process, without the hook's effect: it only acts on rank 1)
    ok(agrad("train", "--resume", str(run), cwd=work, timeout=240))
    assert max_diff(weights(run), weights(single)) < TOL


@pytest.mark.mpi
def test_a_stuck_rank_is_ended_by_the_collective_timeout(work):
    config = _with_hook(work, "hang")
    proc = agrad(
        "train",
        config,
        "--nproc",
        "2",
        "--runs-dir",
        "stuck",
        "--progress",
        "none",
        cwd=work,
        env={"AGRAD_DIST_TIMEOUT": "5"},
        timeout=240,
    )
    err = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "rank 0: DistributedDataParallel all_reduce" in err
    assert "did not complete within the 5 s timeout" in err and "AGRAD_DIST_TIMEOUT" in err
    state = ag.load(str(one_run(work / "stuck") / "checkpoints" / "last"))
    assert state["epoch"] == 1


def test_nproc_without_mpiexec_says_how_to_get_it(work, monkeypatch, capsys):
    from autogradcli.cli import main
    from autogradcli.distributed import process_group

    monkeypatch.setattr(process_group, "mpiexec_path", lambda: None)
    code = main(
        ["train", str(work / "digits.yaml"), "--nproc", "2", "--runs-dir", str(work / "none")]
    )
    assert code == 2
    assert "--nproc needs mpiexec: pip install 'autogradcli[mpi]'" in capsys.readouterr().err
    assert not (work / "none").exists()


@pytest.mark.parametrize(
    ("stderr", "expected"),
    [
        (
            "prterun noticed that process rank 1 with PID 30679 on node vm exited on\n"
            "signal 9 (Killed).\n",
            "rank 1 was killed by signal 9 (SIGKILL)",
        ),
        (
            "mpiexec noticed that process rank 0 with PID 12 on node a-b exited on signal 15 "
            "(Terminated).",
            "rank 0 was killed by signal 15 (SIGTERM)",
        ),
        (
            "prterun detected that one or more processes exited with non-zero status, thus "
            "causing\nthe job to be terminated. The first process to do so was:\n\n"
            "   Process name: [prterun-vm-4242@1,1]\n   Exit code:    3\n",
            "rank 1 exited with code 3",
        ),
        ("something else entirely", None),
    ],
)
def test_the_launcher_names_the_rank_that_ended_the_job(stderr, expected):
    """Open MPI's two messages (killed by a signal, exited non-zero), as the launcher reads
    them to write summary.json's reason."""
    from autogradcli.cli.launch import dead_rank

    assert dead_rank(stderr) == expected
