"""Which run-folder writes are fsynced: checkpoints every epoch, the run's first and last
files once each; the per-epoch tables, plots, summary and metrics lines only at the end (their
writes stay atomic; a resume rebuilds them from the checkpoint)."""

from __future__ import annotations

import collections
import json
import os
import re
from pathlib import Path

import pytest

import autogradcli as ag
from autogradcli.trainer import train_from_config

CONFIG = """\
name: durable
seed: 0
data: {dataset: spirals, n_per_class: 8, classes: 2, val_split: 0.25}
model:
  - {type: Linear, in_features: auto, out_features: 2}
loss: CrossEntropyLoss
optimizer: {type: SGD, lr: 0.1}
train: {epochs: EPOCHS, batch_size: 4}
"""
_FSYNC = os.fsync


def _fsynced(tmp_path, monkeypatch, epochs: int) -> tuple[collections.Counter, str]:
    """How many times each run-folder file was fsynced during a run of ``epochs``."""
    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("names fsynced files through /proc/self/fd")
    counts: collections.Counter = collections.Counter()

    def fsync(fd: int) -> None:
        path = os.readlink(f"/proc/self/fd/{fd}")
        if not os.path.isdir(path):  # a folder's fsync (after a rename) is not counted
            name = os.path.basename(path)  # a temporary ".<name>.<random>.tmp" counts as <name>
            counts[re.sub(r"^\.(.+)\.[^.]+\.tmp$", r"\1", name)] += 1
        _FSYNC(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    tmp_path.mkdir()
    cfg = tmp_path / "c.yaml"
    cfg.write_text(CONFIG.replace("EPOCHS", str(epochs)))
    result = train_from_config(str(cfg), progress="none", runs_dir=str(tmp_path / "runs"))
    assert result.status == "completed", result.message
    return counts, result.run_dir


def test_per_epoch_files_fsynced_once_at_the_end_checkpoints_every_epoch(tmp_path, monkeypatch):
    one, _ = _fsynced(tmp_path / "one", monkeypatch, 1)
    four, run_dir = _fsynced(tmp_path / "four", monkeypatch, 4)
    for name in ("summary.json", "metrics.csv", "loss.svg", "metrics.jsonl", "config.yaml"):
        assert four[name] == one[name] >= 1, name  # not one more per epoch
    assert four["last"] == one["last"] + 3  # the checkpoint: every epoch
    with open(os.path.join(run_dir, "metrics.jsonl"), encoding="utf-8") as f:
        assert [json.loads(line)["epoch"] for line in f] == [1, 2, 3, 4]
    with open(os.path.join(run_dir, "summary.json"), encoding="utf-8") as f:
        summary = json.load(f)
    assert summary["epochs_completed"] == 4
    checkpoints = os.path.join(run_dir, "checkpoints")  # best: linked to that epoch's last
    assert ag.load(os.path.join(checkpoints, "best"))["epoch"] == summary["best"]["epoch"]
    assert ag.load(os.path.join(checkpoints, "last"))["epoch"] == 4


def test_best_checkpoint_linked_to_last_keeps_its_state_when_last_moves_on(tmp_path, monkeypatch):
    from autogradcli._utils.atomic import atomic_link, atomic_write_bytes

    last, best = str(tmp_path / "last"), str(tmp_path / "best")
    atomic_write_bytes(last, b"epoch 3")
    atomic_write_bytes(best, b"epoch 1")
    assert atomic_link(last, best)
    atomic_write_bytes(last, b"epoch 4")  # the next epoch's last, not a better one
    assert Path(best).read_bytes() == b"epoch 3"
    assert sorted(os.listdir(tmp_path)) == ["best", "last"]  # no temporary name left

    def no_links(src, dst):
        raise OSError(1, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)  # a file system without hard links
    assert not atomic_link(last, best)
    assert Path(best).read_bytes() == b"epoch 3"
    assert sorted(os.listdir(tmp_path)) == ["best", "last"]


def test_one_file_and_one_folder_fsync_per_checkpoint(tmp_path, monkeypatch):
    """Each epoch's checkpoint: ``last`` fsynced once as a file, then one fsync of
    ``checkpoints/`` after every rename there (``best``'s link included), never before."""
    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("names fsynced files through /proc/self/fd")
    events: list[tuple[str, str]] = []
    replace = os.replace

    def fsync(fd: int) -> None:
        path = os.readlink(f"/proc/self/fd/{fd}")
        if os.path.basename(path) == "checkpoints":
            events.append(("sync", "folder"))
        elif os.path.basename(os.path.dirname(path)) == "checkpoints":
            events.append(("sync", re.sub(r"^\.(.+)\.[^.]+\.tmp$", r"\1", os.path.basename(path))))
        _FSYNC(fd)

    def rename(src, dst) -> None:
        if os.path.basename(os.path.dirname(os.fspath(dst))) == "checkpoints":
            events.append(("rename", os.path.basename(os.fspath(dst))))
        replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", rename)
    cfg = tmp_path / "c.yaml"
    cfg.write_text(CONFIG.replace("EPOCHS", "4"))
    result = train_from_config(str(cfg), progress="none", runs_dir=str(tmp_path / "runs"))
    assert result.status == "completed", result.message
    best_epochs = {1}  # the epochs that improved val_loss (the trainer's monitor)
    losses = [row["val_loss"] for row in result.history]
    best_epochs |= {i + 1 for i in range(1, 4) if losses[i] < min(losses[:i])}
    want = []
    for epoch in range(1, 5):
        want += [("sync", "last"), ("rename", "last")]
        want += [("rename", "best")] if epoch in best_epochs else []
        want += [("sync", "folder")]
    assert events == want
    assert ag.load(os.path.join(result.run_dir, "checkpoints", "best"))["epoch"] == max(best_epochs)
