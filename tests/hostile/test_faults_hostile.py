"""Faults while a run trains: SIGINT, SIGTERM and SIGHUP end the run as ``interrupted``
(exit 130, ``checkpoints/last`` saved, ``summary.json`` never left at ``running``), and
``--resume`` then ends with the uninterrupted run's weights, bit for bit. Ctrl-C while agrad
is still importing is one line, no traceback. ``sys.exit()`` in the user's forward/backward
is a failed run naming their line.

The signals come from a user callback (``hooks``) that sends one to its own process at a
given step (``KILL_AT``/``KILL_SIGNAL``), so the step is known; one test signals from
outside while the epoch runs, as a person or a process manager would."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from hostile_harness import REPO, assert_refused, run_agrad, write

import autogradcli as ag

pytestmark = pytest.mark.slow

STEPS_PER_EPOCH = 24  # n 128 * 0.75 / batch 4

KILLER = """
import os
import signal


class KillAt:
    '''Send KILL_SIGNAL to this process at global step KILL_AT (both from the environment).'''

    def on_batch_end(self, trainer):
        at = int(os.environ.get("KILL_AT", "-1"))
        if trainer.global_step == at:
            os.kill(os.getpid(), getattr(signal, os.environ["KILL_SIGNAL"]))
"""

CONFIG = """
name: faults
seed: 0
data:
  dataset: sine
  n: 128
  val_split: 0.25
model:
  - {type: Linear, in_features: auto, out_features: 16}
  - Tanh
  - {type: Linear, in_features: auto, out_features: 1}
loss: mse
optimizer: {type: Adam, lr: 0.01}
scheduler: {type: StepLR, step_size: 10, gamma: 0.8, interval: step}
train: {epochs: 3, batch_size: 4, shuffle: true}
hooks:
  - LRLogger
  - {type: killer.py:KillAt}
"""


def _setup(tmp_path) -> str:
    write(str(tmp_path / "killer.py"), KILLER)
    return write(str(tmp_path / "c.yaml"), CONFIG)


def _run_folder(tmp_path, sub: str = "runs") -> str:
    runs = tmp_path / sub
    (folder,) = os.listdir(runs)
    return str(runs / folder)


def _summary(run: str) -> dict:
    with open(os.path.join(run, "summary.json"), encoding="utf-8") as f:
        return json.load(f)


def _weights(run: str) -> dict[str, np.ndarray]:
    state = ag.load(os.path.join(run, "checkpoints", "last"))
    return {k: v.numpy() for k, v in state["model"].items()}


def _assert_same_weights(a: str, b: str) -> None:
    wa, wb = _weights(a), _weights(b)
    assert wa.keys() == wb.keys()
    for k in wa:
        assert wa[k].dtype == wb[k].dtype and np.array_equal(wa[k], wb[k]), k


def _metrics_lines(run: str) -> list[dict]:
    if not os.path.exists(os.path.join(run, "metrics.jsonl")):  # before the first epoch ends
        return []
    with open(os.path.join(run, "metrics.jsonl"), encoding="utf-8") as f:
        text = f.read()
    assert text == "" or text.endswith("\n"), repr(text[-80:])
    return [json.loads(line) for line in text.splitlines()]


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> str:
    """The same run, never interrupted."""
    tmp = tmp_path_factory.mktemp("reference")
    cfg = _setup(tmp)
    res = run_agrad("train", cfg, "--progress", "none", cwd=str(tmp))
    assert res.code == 0, res.text
    return _run_folder(tmp)


@pytest.mark.parametrize(
    ("name", "step"),
    [("SIGTERM", 30), ("SIGHUP", 30), ("SIGINT", 30), ("SIGTERM", 5), ("SIGHUP", 60)],
)
def test_signal_mid_epoch_ends_interrupted_and_resume_is_bit_exact(tmp_path, reference, name, step):
    cfg = _setup(tmp_path)
    env = {"KILL_AT": str(step), "KILL_SIGNAL": name}
    res = run_agrad("train", cfg, "--progress", "plain", cwd=str(tmp_path), env=env)
    assert_refused(res, "interrupted", code=130)
    run = _run_folder(tmp_path)
    summary = _summary(run)
    assert summary["status"] == "interrupted" and summary["exit_code"] == 130
    assert summary["global_step"] == step, summary  # stopped at the next step boundary
    if name != "SIGINT":
        assert f"({name})" in summary["message"]
    assert "saved checkpoints/last" in summary["message"]
    last = ag.load(os.path.join(run, "checkpoints", "last"))
    assert last["global_step"] == step and last["batch_in_epoch"] == step % STEPS_PER_EPOCH
    assert [r["epoch"] for r in _metrics_lines(run)] == list(range(1, step // STEPS_PER_EPOCH + 1))
    assert not os.path.exists(os.path.join(run, ".lock"))

    again = run_agrad("train", "--resume", run, "--progress", "none", cwd=str(tmp_path))
    assert again.code == 0, again.text
    assert _summary(run)["status"] == "completed"
    assert [r["epoch"] for r in _metrics_lines(run)] == [1, 2, 3]
    _assert_same_weights(run, reference)
    # the resumed epoch's record is the uninterrupted one's (lr_min/lr_max included)
    untimed = [{k: v for k, v in r.items() if k != "time"} for r in _metrics_lines(run)]
    expected = [{k: v for k, v in r.items() if k != "time"} for r in _metrics_lines(reference)]
    assert all("lr_min" in r for r in expected)
    assert untimed == expected


def test_nohup_keeps_sighup_ignored(tmp_path):
    """Under ``nohup`` (SIGHUP ignored) a closed terminal does not stop the run."""
    _setup(tmp_path)
    env = dict(os.environ, PYTHONPATH=REPO, KILL_AT="10", KILL_SIGNAL="SIGHUP")
    code = (
        "import signal, sys; signal.signal(signal.SIGHUP, signal.SIG_IGN); "
        "sys.argv = ['agrad', 'train', 'c.yaml', '--progress', 'none']; "
        "from autogradcli.cli import main; sys.exit(main())"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert _summary(_run_folder(tmp_path))["status"] == "completed"


LONG_EPOCH = """
name: long
seed: 0
data: {dataset: sine, n: 40000}
model:
  - {type: Linear, in_features: auto, out_features: 8}
  - Tanh
  - {type: Linear, in_features: auto, out_features: 1}
loss: mse
optimizer: {type: SGD, lr: 0.01}
train: {epochs: 2, batch_size: 2}
"""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_from_outside_stops_a_long_epoch_within_a_step(tmp_path, sig):
    """A 16,000-step epoch: the signal, sent once the run has started, stops it inside that
    epoch (the checkpoint is mid-epoch, no epoch was logged), not at its end."""
    cfg = write(str(tmp_path / "long.yaml"), LONG_EPOCH)
    env = dict(os.environ, PYTHONPATH=REPO, COLUMNS="120")
    proc = subprocess.Popen(
        [sys.executable, "-m", "autogradcli.cli", "train", cfg, "--progress", "plain"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        runs = tmp_path / "runs"
        while time.monotonic() < deadline and proc.poll() is None:
            found = list(runs.glob("*/summary.json")) if runs.exists() else []
            if found:  # written by on_fit_start: the loop is about to run
                break
            time.sleep(0.02)
        time.sleep(0.3)
        proc.send_signal(sig)
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, out
    assert "Traceback" not in out
    run = _run_folder(tmp_path)
    summary = _summary(run)
    assert summary["status"] == "interrupted" and summary["epochs_completed"] == 0, summary
    last = ag.load(os.path.join(run, "checkpoints", "last"))
    # 0 when the signal came before the first step ended (a loaded machine): still epoch 1
    assert last["epoch"] == 0 and 0 <= last["batch_in_epoch"] < 16000
    assert last["global_step"] == summary["global_step"]
    assert _metrics_lines(run) == []


# ---------------------------------------------------------------- Ctrl-C while importing

INTERRUPT_ON_IMPORT = """
import importlib.abc, os, signal, sys

class Interrupt(importlib.abc.MetaPathFinder):
    '''Ctrl-C (a real SIGINT) the moment agrad starts importing TARGET.'''
    def find_spec(self, name, path=None, target=None):
        if name == os.environ["TARGET"]:
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, Interrupt())
sys.argv = ["agrad"] + sys.argv[1:]
from autogradcli.cli import main
sys.exit(main())
"""


@pytest.mark.parametrize(
    "target",
    ["numpy", "autogradcli.nn", "typer", "autogradcli.config", "autogradcli.trainer"],
)
def test_ctrl_c_while_importing_is_one_line(tmp_path, target):
    cfg = write(str(tmp_path / "c.yaml"), LONG_EPOCH)
    script = write(str(tmp_path / "agrad_entry.py"), INTERRUPT_ON_IMPORT)
    env = dict(os.environ, PYTHONPATH=REPO, TARGET=target)
    proc = subprocess.run(
        [sys.executable, script, "train", cfg, "--progress", "none"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 130, proc.stderr
    assert proc.stderr.strip() == "agrad: interrupted", proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    assert not (tmp_path / "runs").exists()  # stopped before any run folder was made


# ---------------------------------------------------------------- sys.exit in user code

EXITING = """
import os
import sys

import autogradcli as ag
import autogradcli.nn as nn

calls = {"n": 0}


class ExitInForward(nn.Module):
    def forward(self, x):
        calls["n"] += 1
        if calls["n"] == int(os.environ.get("EXIT_AT", "10")):
            sys.exit(int(os.environ.get("EXIT_CODE", "0")))
        return x


class _ExitGrad(ag.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        calls["n"] += 1
        if calls["n"] == int(os.environ.get("EXIT_AT", "10")):
            sys.exit(int(os.environ.get("EXIT_CODE", "0")))
        return grad


class ExitInBackward(nn.Module):
    def forward(self, x):
        return _ExitGrad.apply(x)


class _RaiseGrad(ag.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        calls["n"] += 1
        if calls["n"] == int(os.environ.get("EXIT_AT", "10")):
            raise ValueError("bad gradient in my backward")
        return grad


class RaiseInBackward(nn.Module):
    def forward(self, x):
        return _RaiseGrad.apply(x)
"""

EXIT_CONFIG = """
name: exits
seed: 0
data: {dataset: sine, n: 128, val_split: 0.25}
model:
  - {type: Linear, in_features: auto, out_features: 8}
  - exiting.py:LAYER
  - {type: Linear, in_features: auto, out_features: 1}
loss: mse
optimizer: {type: SGD, lr: 0.05}
train: {epochs: 3, batch_size: 4}
"""


@pytest.mark.parametrize(
    ("layer", "exit_code", "words"),
    [
        ("ExitInForward", "0", ["sys.exit(0)", "exiting.py:14", "in forward"]),
        ("ExitInForward", "3", ["sys.exit(3)", "exiting.py:14"]),
        ("ExitInBackward", "0", ["sys.exit(0)", "exiting.py:27", "in backward"]),
        ("RaiseInBackward", "0", ["ValueError: bad gradient", "exiting.py:45", "in backward"]),
    ],
)
def test_user_code_exiting_or_raising_at_run_time_is_a_failed_run(
    tmp_path, layer, exit_code, words
):
    write(str(tmp_path / "exiting.py"), EXITING)
    cfg = write(str(tmp_path / "c.yaml"), EXIT_CONFIG.replace("LAYER", layer))
    env = {"EXIT_AT": "40", "EXIT_CODE": exit_code}  # in epoch 2 (24 steps per epoch)
    res = run_agrad("train", cfg, "--progress", "plain", cwd=str(tmp_path), env=env)
    assert_refused(res, *words, code=1)
    run = _run_folder(tmp_path)
    summary = _summary(run)
    assert summary["status"] == "failed" and summary["exit_code"] == 1, summary
    for w in words:
        assert w in summary["message"], summary["message"]
    last = ag.load(os.path.join(run, "checkpoints", "last"))  # epoch 1's, intact
    assert last["epoch"] == 1 and last["batch_in_epoch"] == 0
    assert [r["epoch"] for r in _metrics_lines(run)] == [1]


@pytest.mark.parametrize(
    ("layer", "words"),
    [
        ("ReturnsNone", ["model.1: ReturnsNone returned None, not a Tensor", "c.yaml:4:5"]),
        ("ReturnsList", ["model.1: ReturnsList returned a list, not a Tensor"]),
        ("ReturnsArray", ["model.1: ReturnsArray returned a numpy.ndarray, not a Tensor"]),
        ("ReturnsFloat", ["model.1: ReturnsFloat returned a float, not a Tensor"]),
        ("ExitsAtBuild", ["the user's code called sys.exit(5)", "bad.py:30, in forward"]),
    ],
)
def test_forward_returning_a_non_tensor_is_refused_at_build(tmp_path, layer, words):
    write(
        str(tmp_path / "bad.py"),
        """
        import sys

        import numpy as np

        import autogradcli.nn as nn


        class ReturnsNone(nn.Module):
            def forward(self, x):
                return None


        class ReturnsList(nn.Module):
            def forward(self, x):
                return [x]


        class ReturnsArray(nn.Module):
            def forward(self, x):
                return np.zeros(3)


        class ReturnsFloat(nn.Module):
            def forward(self, x):
                return 1.5


        class ExitsAtBuild(nn.Module):
            def forward(self, x):
                sys.exit(5)
        """,
    )
    cfg = write(
        str(tmp_path / "c.yaml"),
        f"""
        data: {{dataset: sine, n: 64}}
        model:
          - {{type: Linear, in_features: auto, out_features: 8}}
          - {{type: bad.py:{layer}}}
          - {{type: Linear, in_features: auto, out_features: 1}}
        loss: mse
        """,
    )
    res = run_agrad("train", cfg, cwd=str(tmp_path))
    code = 1 if layer == "ExitsAtBuild" else 2  # user code that exits: a failure, as gradcheck
    assert_refused(res, *words, code=code)
    assert not (tmp_path / "runs").exists() or os.listdir(tmp_path / "runs") == []


# ---------------------------------------------------------------- a rank killed (--nproc 2)

DIE = """
import os
import signal


class Die:
    '''Rank DIE_RANK kills itself (SIGKILL: no handler runs) at epoch 4, step 2.'''

    def on_batch_end(self, trainer):
        rank = os.environ.get("OMPI_COMM_WORLD_RANK")
        if rank == os.environ["DIE_RANK"] and trainer.epoch == 4 and trainer.batch_in_epoch == 2:
            # epoch 3's checkpoint and files are written in the background: a SIGKILL while
            # they are in flight loses them (resume starts at epoch 2); let them land first
            trainer.checkpoint_writer.wait()
            os.kill(os.getpid(), signal.SIGKILL)
"""

DIST_CONFIG = """
name: killed
seed: 0
data: {dataset: sine, n: 256, val_split: 0.25}
model:
  - {type: Linear, in_features: auto, out_features: 8}
  - Tanh
  - {type: Linear, in_features: auto, out_features: 1}
loss: mse
optimizer: {type: SGD, lr: 0.05}
train: {epochs: 12, batch_size: 32}
hooks:
  - {type: die.py:Die}
"""


def _require_mpi() -> None:
    import importlib.util

    from autogradcli.distributed.process_group import mpiexec_path

    if importlib.util.find_spec("mpi4py") is None or mpiexec_path() is None:
        pytest.skip("needs mpi4py and mpiexec (pip install -e '.[mpi]')")


class TestKilledRank:
    """``agrad train --nproc 2`` with one rank SIGKILLed in epoch 4 (3 epochs written): mpiexec
    ends the other rank; the launcher then marks the run ``failed`` naming the rank and the
    signal, removes the stale lock, and leaves metrics.jsonl and checkpoints/last intact."""

    @pytest.mark.parametrize("rank", [0, 1])
    def test_killed_rank_leaves_a_failed_record(self, tmp_path, rank):
        _require_mpi()
        write(str(tmp_path / "die.py"), DIE)
        cfg = write(str(tmp_path / "c.yaml"), DIST_CONFIG)
        env = {"DIE_RANK": str(rank), "OMP_NUM_THREADS": "1"}
        res = run_agrad("train", cfg, "--nproc", "2", "--progress", "none", cwd=str(tmp_path),
                        env=env)  # fmt: skip
        assert res.code not in (0, 1, 2, 130), res.text
        killed = f"rank {rank} was killed by signal 9 (SIGKILL)"
        assert f"{killed} and mpiexec stopped the others" in res.err, res.err
        assert "Traceback" not in res.text
        run = _run_folder(tmp_path)
        assert f"The run folder {run} is marked failed" in res.err
        summary = _summary(run)
        assert summary["status"] == "failed" and summary["exit_code"] == res.code, summary
        assert summary["message"].startswith(f"{killed} in the 2-process run"), summary
        assert summary["epochs_completed"] == 3 and summary["epochs"] == 12
        assert summary["world_size"] == 2 and summary["best"]["epoch"] in (1, 2, 3)
        assert not os.path.exists(os.path.join(run, ".lock"))
        assert [r["epoch"] for r in _metrics_lines(run)] == [1, 2, 3]  # whole lines
        last = ag.load(os.path.join(run, "checkpoints", "last"))
        assert (last["epoch"], last["batch_in_epoch"]) == (3, 0)

        listed = run_agrad("runs", "--json", cwd=str(tmp_path))
        (row,) = json.loads(listed.out)
        assert (row["status"], row["epochs_completed"], row["epochs"]) == ("failed", 3, 12)
        if rank == 1:  # the state is usable: resumed on one process (the hook is idle there)
            again = run_agrad("train", "--resume", run, "--progress", "none", cwd=str(tmp_path),
                              env={"DIE_RANK": "none"})  # fmt: skip
            assert again.code == 0, again.text
            assert _summary(run)["status"] == "completed"
            assert [r["epoch"] for r in _metrics_lines(run)] == list(range(1, 13))
