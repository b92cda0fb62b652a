"""Run folders under faults and tampering: a full disk (tmpfs when root, ``RLIMIT_FSIZE``
otherwise) while the folder is made or a checkpoint is written, a torn ``metrics.jsonl`` line
(power loss), a closed stdout or pipe, and files that are not what a run folder holds
(``checkpoints/last``, ``summary.json``, ``config.resolved.yaml``)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import uuid

import numpy as np
import pytest
from hostile_harness import REPO, assert_refused, run_agrad, write

import autogradcli as ag

CONFIG = """
name: folder
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
train: {epochs: 3, batch_size: 4}
hooks:
  - {type: filler.py:FillDisk}
output: {dir: RUNS}
"""

FILLER = """
import os
import resource


class FillDisk:
    '''At step FILL_AT: fill the disk under FILL_DIR (tmpfs), or cap the file size
    (RLIMIT_FSIZE) where the test cannot mount one.'''

    def on_batch_end(self, trainer):
        if trainer.global_step != int(os.environ.get("FILL_AT", "-1")):
            return
        # the previous epoch's checkpoint is written in the background: let it land first,
        # so the disk fills before the next one (not while the previous one is written)
        trainer.checkpoint_writer.wait()
        if os.environ.get("FILL_MODE") == "fsize":
            resource.setrlimit(resource.RLIMIT_FSIZE, (2048, resource.RLIM_INFINITY))
            return
        fill(os.path.join(os.environ["FILL_DIR"], "filler"))


def fill(path):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        while True:
            os.write(fd, b"x" * 4096)
    except OSError:
        pass
    finally:
        os.close(fd)
"""

STEPS_PER_EPOCH = 24


def _setup(tmp_path, runs: str) -> str:
    write(str(tmp_path / "filler.py"), FILLER)
    return write(str(tmp_path / "c.yaml"), CONFIG.replace("RUNS", runs))


def _only_run(runs: str) -> str:
    (name,) = os.listdir(runs)
    return os.path.join(runs, name)


def _summary(run: str):
    with open(os.path.join(run, "summary.json"), encoding="utf-8") as f:
        return json.load(f)


def _weights(run: str) -> dict[str, np.ndarray]:
    state = ag.load(os.path.join(run, "checkpoints", "last"))
    return {k: v.numpy() for k, v in state["model"].items()}


def _assert_same_weights(a: str, b: str) -> None:
    wa, wb = _weights(a), _weights(b)
    assert wa.keys() == wb.keys()
    for k in wa:
        assert np.array_equal(wa[k], wb[k]), k


def _metrics_text(run: str) -> str:
    with open(os.path.join(run, "metrics.jsonl"), encoding="utf-8") as f:
        return f.read()


def _epochs_logged(run: str) -> list[int]:
    text = _metrics_text(run)
    assert text.endswith("\n")
    return [json.loads(line)["epoch"] for line in text.splitlines()]  # every line whole JSON


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> str:
    tmp = tmp_path_factory.mktemp("reference")
    cfg = _setup(tmp, str(tmp / "runs"))
    res = run_agrad("train", cfg, "--progress", "none", cwd=str(tmp))
    assert res.code == 0, res.text
    return _only_run(str(tmp / "runs"))


@pytest.fixture(params=["tmpfs", "fsize"])
def full_disk_mode(request) -> str:
    """How the disk fills: a small tmpfs (needs root; else the ``fsize`` case covers it) or
    ``RLIMIT_FSIZE`` (EFBIG, the same path through agrad)."""
    return request.param


@contextlib.contextmanager
def small_disk(tmp_path, size: str = "400k", mode: str = "tmpfs"):
    """A tmpfs of ``size`` (root), or None (then the tests cap the file size instead)."""
    where = tmp_path / f"disk-{uuid.uuid4().hex[:6]}"
    where.mkdir()
    mounted = False
    can_mount = hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("mount")
    if mode == "tmpfs" and can_mount:
        proc = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
            capture_output=True,
        )
        mounted = proc.returncode == 0
    try:
        yield str(where) if mounted else None
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(where)], capture_output=True)


def _move_out(run: str, dest) -> str:
    """Copy a run folder off the small disk (the tmpfs goes away) and return the copy."""
    out = str(dest / os.path.basename(run))
    shutil.copytree(run, out)
    return out


# ---------------------------------------------------------------- disk full


@pytest.mark.slow
def test_disk_full_while_writing_a_checkpoint(tmp_path, reference, full_disk_mode):
    with small_disk(tmp_path, mode=full_disk_mode) as disk:
        runs = os.path.join(disk, "runs") if disk else str(tmp_path / "runs")
        cfg = _setup(tmp_path, runs)
        env = {"FILL_AT": str(STEPS_PER_EPOCH + 5)}  # in epoch 2: its checkpoint fails
        env.update({"FILL_DIR": disk} if disk else {"FILL_MODE": "fsize"})
        res = run_agrad("train", cfg, "--progress", "plain", cwd=str(tmp_path), env=env)
        assert_refused(res, "cannot write", "checkpoints/", code=1)
        assert "the disk is full" in res.text or "file size limit" in res.text
        run = _only_run(runs)
        summary = _summary(run)  # written in place when the disk had no room for a copy
        assert summary["status"] == "failed" and summary["exit_code"] == 1, summary
        assert "cannot write" in summary["message"]
        last = ag.load(os.path.join(run, "checkpoints", "last"))  # epoch 1's, intact
        assert last["epoch"] == 1 and last["batch_in_epoch"] == 0
        assert not [f for f in os.listdir(os.path.join(run, "checkpoints")) if f.endswith(".tmp")]
        # whole lines; epoch 2 (trained, not checkpointed) may be logged, and epoch 3 when it
        # was trained while epoch 2's checkpoint was written in the background: resume
        # rewrites them
        assert _epochs_logged(run) in ([1], [1, 2], [1, 2, 3])
        if disk:
            os.unlink(os.path.join(disk, "filler"))
        again = run_agrad("train", "--resume", run, "--progress", "none", cwd=str(tmp_path))
        assert again.code == 0, again.text
        assert _epochs_logged(run) == [1, 2, 3]
        _assert_same_weights(run, reference)


def test_disk_full_while_creating_the_run_folder(tmp_path, full_disk_mode):
    with small_disk(tmp_path, "64k", mode=full_disk_mode) as disk:
        runs = os.path.join(disk, "runs") if disk else str(tmp_path / "runs")
        cfg = _setup(tmp_path, runs)
        os.makedirs(runs)
        if disk:  # leave no room for the config files
            _fill(os.path.join(disk, "filler"))
            res = run_agrad("train", cfg, "--progress", "none", cwd=str(tmp_path))
        else:
            res = run_agrad("train", cfg, "--progress", "none", cwd=str(tmp_path), fsize=16)
        assert_refused(res, "cannot make the run folder", runs, code=2)
        assert "the disk is full" in res.text or "file size limit" in res.text
        assert os.listdir(runs) == []  # the half-made folder is removed again


def _first_file_sizes(cfg: str) -> dict[str, int]:
    """The sizes of the files a run folder is made with, before its summary.json."""
    from autogradcli.config import load_config
    from autogradcli.trainer.plot import loss_svg

    with open(cfg, "rb") as f:
        config_size = len(f.read())
    resolved = load_config(cfg).to_yaml(absolute_paths=True).encode()
    svg = loss_svg([], title="folder: loss").encode()  # no epoch yet
    return {"config.yaml": config_size, "config.resolved.yaml": len(resolved), "loss.svg": len(svg)}


@pytest.mark.parametrize(
    ("limit", "fails_at"),
    [
        ("config.yaml-1", "config.yaml"),  # the first file, one byte short
        ("config.yaml", "config.resolved.yaml"),  # config.yaml just fits
        ("config.resolved.yaml", "loss.svg"),  # the configs, model.txt, metrics.csv fit
        ("loss.svg", None),  # the largest first file fits: the folder is made (summary.json
        # included); the first checkpoint (~9 kB) then fails the run
    ],
)
def test_file_size_limit_at_each_step_of_making_the_run_folder(tmp_path, limit, fails_at):
    """A run folder appears whole (configs, model.txt, summary.json) or not at all: at each
    step a write can fail, agrad exits 2 naming the folder, the file and the OS error, and
    leaves nothing (no hidden staging folder either); once made, a failure is the run's, and
    its summary.json says so."""
    runs = str(tmp_path / "runs")
    cfg = _setup(tmp_path, runs)
    sizes = _first_file_sizes(cfg)
    # each limit hits its step: every file is larger than the ones before it
    assert sizes["config.yaml"] < sizes["config.resolved.yaml"] < sizes["loss.svg"]
    name, _, minus = limit.partition("-")
    fsize = sizes[name] - int(minus or 0)
    res = run_agrad("train", cfg, "--progress", "none", cwd=str(tmp_path), fsize=fsize)
    if fails_at is not None:
        assert_refused(res, "cannot make the run folder", runs, f"(writing {fails_at})", code=2)
        assert "file size limit was reached (File too large)" in res.text
        assert os.listdir(runs) == []
        return
    assert_refused(res, "cannot write", "checkpoints", code=1)
    run = _only_run(runs)  # the only entry: no staging folder left beside it
    summary = _summary(run)
    assert summary["status"] == "failed" and summary["run_dir"] == run, summary
    for name in ("config.yaml", "config.resolved.yaml", "model.txt"):
        assert os.path.isfile(os.path.join(run, name)), name
    assert not os.path.exists(os.path.join(run, ".lock"))


def _fill(path: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        while True:
            os.write(fd, b"x" * 4096)
    except OSError:
        pass
    finally:
        os.close(fd)


# ---------------------------------------------------------------- torn metrics.jsonl


def _interrupted_run(tmp_path, at: int) -> str:
    """A run stopped by SIGTERM at step ``at`` (checkpoint mid-epoch)."""
    write(
        str(tmp_path / "killer.py"),
        """
        import os
        import signal


        class FillDisk:
            def on_batch_end(self, trainer):
                if trainer.global_step == int(os.environ.get("KILL_AT", "-1")):
                    os.kill(os.getpid(), signal.SIGTERM)
        """,
    )
    cfg = write(
        str(tmp_path / "c.yaml"),
        CONFIG.replace("RUNS", str(tmp_path / "runs")).replace("filler.py", "killer.py"),
    )
    res = run_agrad("train", cfg, "--progress", "none", cwd=str(tmp_path), env={"KILL_AT": str(at)})
    assert res.code == 130, res.text
    return _only_run(str(tmp_path / "runs"))


@pytest.mark.slow
@pytest.mark.parametrize(
    "torn",
    [
        '{"epoch": 2, "step": 48, "train_lo',  # power loss inside the next epoch's line
        '{"epoch": 2, "step": 48}',  # a whole record without its newline
        "\x00\x00\x00\x00",  # a page of zeros (a filesystem's torn append)
        "\xff\xfe garbage",
    ],
)
def test_torn_last_metrics_line_is_dropped_on_resume(tmp_path, reference, torn):
    run = _interrupted_run(tmp_path, STEPS_PER_EPOCH + 7)  # epoch 1 logged, epoch 2 half done
    with open(os.path.join(run, "metrics.jsonl"), "a", encoding="utf-8") as f:
        f.write(torn)
    res = run_agrad("train", "--resume", run, "--progress", "none", cwd=str(tmp_path))
    assert res.code == 0, res.text
    assert _epochs_logged(run) == [1, 2, 3]
    _assert_same_weights(run, reference)


# ---------------------------------------------------------------- closed stdout / pipe


def _agrad_cmd(cfg: str) -> list[str]:
    return [sys.executable, "-m", "autogradcli.cli", "train", cfg, "--progress", "plain"]


def _complete(run: str) -> None:
    summary = _summary(run)
    assert summary["status"] == "completed" and summary["exit_code"] == 0, summary
    for name in ("config.yaml", "config.resolved.yaml", "metrics.csv", "model.txt", "loss.svg"):
        assert os.path.isfile(os.path.join(run, name)), name
    assert _epochs_logged(run) == [1, 2, 3]
    assert ag.load(os.path.join(run, "checkpoints", "last"))["epoch"] == 3


@pytest.mark.slow
@pytest.mark.parametrize("progress", ["plain", "bar"])
def test_pipe_closed_after_the_first_line(tmp_path, progress):
    """``agrad train ... | head -1``: the reader goes away, the run goes on to the end."""
    cfg = _setup(tmp_path, str(tmp_path / "runs"))
    env = dict(os.environ, PYTHONPATH=REPO, COLUMNS="120")
    cmd = [*_agrad_cmd(cfg)[:-1], progress]
    proc = subprocess.Popen(
        cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        first = proc.stdout.readline()
        proc.stdout.close()  # as head -1 exits
        err = proc.stderr.read()
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert first.strip(), "no first line"
    assert proc.returncode == 0, err
    assert "Traceback" not in err and "BrokenPipe" not in err, err
    _complete(_only_run(str(tmp_path / "runs")))


@pytest.mark.parametrize("closed", [[1], [2], [1, 2]])
def test_closed_stdout_or_stderr(tmp_path, closed):
    """``agrad train ... >&-`` (and ``2>&-``): nothing to print to is not a failure."""
    cfg = _setup(tmp_path, str(tmp_path / "runs"))
    env = dict(os.environ, PYTHONPATH=REPO, COLUMNS="120")

    def close() -> None:
        for fd in closed:
            os.close(fd)

    proc = subprocess.run(
        _agrad_cmd(cfg), cwd=tmp_path, env=env, timeout=120, preexec_fn=close,
        stdout=None if 1 in closed else subprocess.DEVNULL,
        stderr=None if 2 in closed else subprocess.PIPE,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    _complete(_only_run(str(tmp_path / "runs")))


# ---------------------------------------------------------------- tampered run folders


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> str:
    tmp = tmp_path_factory.mktemp("finished")
    cfg = _setup(tmp, str(tmp / "runs"))
    res = run_agrad("train", cfg, "--progress", "none", "--set", "train.epochs=1", cwd=str(tmp))
    assert res.code == 0, res.text
    return _only_run(str(tmp / "runs"))


def _copy(finished: str, tmp_path) -> str:
    out = str(tmp_path / "run")
    shutil.copytree(finished, out)
    return out


def _resume(run: str, tmp_path, *extra: str):
    return run_agrad("train", "--resume", run, "--progress", "none", *extra, cwd=str(tmp_path))


def _edit_last(run: str, change) -> None:
    path = os.path.join(run, "checkpoints", "last")
    state = ag.load(path)
    ag.save(change(state), path)


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda s: ag.zeros(3), ["its root is a Tensor, not a dict"]),
        (lambda s: [1, 2, 3], ["its root is a list, not a dict"]),
        (lambda s: {k: v for k, v in s.items() if k != "model"}, ["without model"]),
        (lambda s: {k: v for k, v in s.items() if k != "format"}, ["not a trainer checkpoint"]),
        (lambda s: {**s, "epoch": "three"}, ["'epoch' is a str, not a int"]),
        (lambda s: {**s, "epoch": -4}, ["'epoch' is negative"]),
        (lambda s: {**s, "history": {"a": 1}}, ["'history' is a dict, not a list"]),
        (lambda s: {**s, "model": {"0.weight": ag.zeros(2)}}, ["not a usable trainer"]),
    ],
)
def test_resume_refuses_a_checkpoint_that_is_not_a_trainers(tmp_path, finished, change, words):
    run = _copy(finished, tmp_path)
    _edit_last(run, change)
    before = _summary(run)
    res = _resume(run, tmp_path, "--set", "train.epochs=2")
    assert_refused(res, os.path.join("checkpoints", "last"), *words, code=2)
    assert _summary(run) == before  # nothing rewritten


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("[1, 2, 3]", ["the JSON is a list, not an object"]),
        ('"done"', ["the JSON is a string, not an object"]),
        ("{not json", ["not valid JSON"]),
        ('{"status": 3}', ["'status' is 3, expected a string"]),
        ('{"status": "completed", "best": [1]}', ["'best' is [1], expected an object or null"]),
        ('{"final": "x"}', ["'final' is \"x\", expected an object or null"]),
        ('{"exit_code": true}', ["'exit_code' is true, expected an integer or null"]),
        ('{"message": {"a": 1}}', ["'message' is"]),
    ],
)
def test_inspect_refuses_a_summary_that_is_not_a_runs(tmp_path, finished, text, words):
    run = _copy(finished, tmp_path)
    write(os.path.join(run, "summary.json"), text)
    res = run_agrad("inspect", run, cwd=str(tmp_path))
    assert_refused(res, "summary.json", *words, code=2)


def test_resume_rewrites_a_broken_summary(tmp_path, finished):
    """The checkpoint, not summary.json, is the run's state: a resume writes a fresh one."""
    run = _copy(finished, tmp_path)
    write(os.path.join(run, "summary.json"), "[1, 2, 3]")
    res = _resume(run, tmp_path, "--set", "train.epochs=2")
    assert res.code == 0, res.text
    assert _summary(run)["status"] == "completed" and _summary(run)["epochs_completed"] == 2


@pytest.mark.parametrize(
    ("setup", "command", "words"),
    [
        ("file", "resume", ["no such run folder"]),
        ("file", "inspect", ["run"]),
        ("no-resolved", "resume", ["config.resolved.yaml"]),
        ("garbage-resolved", "resume", ["config.resolved.yaml"]),
        ("binary-resolved", "resume", ["config.resolved.yaml"]),
        ("no-configs", "inspect", ["not a run folder"]),
        ("garbage-resolved", "inspect", ["config.resolved.yaml"]),
        ("no-last", "resume", ["no checkpoints/last"]),
    ],
)
def test_run_folder_missing_or_garbage_files(tmp_path, finished, setup, command, words):
    run = _copy(finished, tmp_path)
    resolved = os.path.join(run, "config.resolved.yaml")
    if setup == "file":
        shutil.rmtree(run)
        write(run, "just a file\n")
    elif setup == "no-resolved":
        os.unlink(resolved)
    elif setup == "garbage-resolved":
        write(resolved, "model: [\n  - {type: Linear\n")
    elif setup == "binary-resolved":
        write(resolved, b"\x00\xff\xfe\x89PNG\r\n")
    elif setup == "no-configs":
        os.unlink(resolved)
        os.unlink(os.path.join(run, "config.yaml"))
    elif setup == "no-last":
        os.unlink(os.path.join(run, "checkpoints", "last"))
    if command == "resume":
        res = _resume(run, tmp_path)
    else:
        res = run_agrad("inspect", run, cwd=str(tmp_path))
    assert_refused(res, *words, code=2)
