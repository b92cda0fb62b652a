"""Which run-folder writes are fsynced: checkpoints every epoch (one file and one folder fsync
each), the configs and model.txt once, the summary at fit's start and end; the tables, plots,
summary and metrics lines of the new folder and of every epoch only at the end (their writes
stay atomic; a resume rebuilds them from the checkpoint)."""

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
    assert four["metrics.csv"] == four["loss.svg"] == 1  # the end's
    assert four["summary.json"] == 2  # fit's start and end
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


def _traced_run(tmp_path, monkeypatch, epochs: int, on_fsync, rename: str, on_rename):
    """A run of ``epochs`` with ``os.fsync`` and ``os.<rename>`` traced: ``on_fsync(path)`` and
    ``on_rename(src, dst)`` give an event or None; (the events in order, the result)."""
    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("names fsynced files through /proc/self/fd")
    events: list = []
    real_rename = getattr(os, rename)

    def fsync(fd: int) -> None:
        events.append(on_fsync(os.readlink(f"/proc/self/fd/{fd}")))
        _FSYNC(fd)

    def traced(src, dst) -> None:
        events.append(on_rename(os.fspath(src), os.fspath(dst)))
        real_rename(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, rename, traced)
    cfg = tmp_path / "c.yaml"
    cfg.write_text(CONFIG.replace("EPOCHS", str(epochs)))
    result = train_from_config(str(cfg), progress="none", runs_dir=str(tmp_path / "runs"))
    assert result.status == "completed", result.message
    return [e for e in events if e is not None], result


def test_one_file_and_one_folder_fsync_per_checkpoint(tmp_path, monkeypatch):
    """Each epoch's checkpoint: ``last`` fsynced once as a file, then one fsync of
    ``checkpoints/`` after every rename there (``best``'s link included), never before."""

    def on_fsync(path: str):
        if os.path.basename(path) == "checkpoints":
            return ("sync", "folder")
        if os.path.basename(os.path.dirname(path)) == "checkpoints":
            return ("sync", re.sub(r"^\.(.+)\.[^.]+\.tmp$", r"\1", os.path.basename(path)))
        return None

    def on_rename(src: str, dst: str):
        if os.path.basename(os.path.dirname(dst)) == "checkpoints":
            return ("rename", os.path.basename(dst))
        return None

    events, result = _traced_run(tmp_path, monkeypatch, 4, on_fsync, "replace", on_rename)
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


def test_tables_and_plots_redrawn_at_most_every_tables_every_seconds(tmp_path, monkeypatch):
    """metrics.csv and the plots are rewritten after an epoch once ``tables_every`` seconds
    have passed (a fake clock, 0.5 s an epoch: due at exactly 1.0 s, not at 0.5 s) and at the
    end; metrics.jsonl and summary.json after every epoch."""
    import types

    from autogradcli import nn
    from autogradcli.data import DataLoader, TensorDataset
    from autogradcli.trainer import Callback, RunLogger, Trainer, run_logger
    from autogradcli.trainer.run_dir import RunDir

    clock = [0.0]
    monkeypatch.setattr(run_logger, "time", types.SimpleNamespace(monotonic=lambda: clock[0]))
    drawn, seen = [], []

    class Tick(Callback):
        order = 0  # before RunLogger

        def on_epoch_end(self, trainer):
            clock[0] += 0.5

    class Look(Callback):
        order = 300  # after RunLogger

        def on_epoch_end(self, trainer):
            trainer.checkpoint_writer.wait()  # the epoch's files are written on its thread
            summary = json.loads(Path(trainer.run.file("summary.json")).read_text())
            seen.append((len(trainer.run.read_metrics()), summary["epochs_completed"]))

    ag.manual_seed(0)
    model = nn.Linear(2, 2)
    data = TensorDataset(ag.randn(8, 2), ag.tensor([0, 1] * 4))
    trainer = Trainer(
        model, nn.CrossEntropyLoss(), ag.optim.SGD(model.parameters(), lr=0.1),
        DataLoader(data, batch_size=4), epochs=5, callbacks=[Tick(), Look()],
        run=RunDir.create(str(tmp_path), "t"),
    )  # fmt: skip
    (logger,) = [c for c in trainer.callbacks if isinstance(c, RunLogger)]
    write_csv = trainer.run.write_metrics_csv
    monkeypatch.setattr(
        trainer.run,
        "write_metrics_csv",
        lambda history, durable=True: (drawn.append(len(history)), write_csv(history, durable)),
    )
    assert logger.tables_every == 1.0
    assert trainer.fit().status == "completed"
    assert drawn == [0, 2, 4, 5]  # fit start, 1.0 s, 2.0 s, the end
    assert seen == [(e, e) for e in range(1, 6)]
    csv_rows = Path(trainer.run.file("metrics.csv")).read_text().splitlines()
    assert [row.split(",")[0] for row in csv_rows[1:]] == ["1", "2", "3", "4", "5"]


def test_plot_escape_is_saxutils_escape():
    from xml.sax.saxutils import escape as sax_escape

    from autogradcli.trainer.plot import escape

    for text in ("a & b < c > d", "&amp; already", "<script>'\"", "plain", ""):
        assert escape(text) == sax_escape(text)


def test_a_new_run_folder_is_fsynced_once_before_it_is_published(tmp_path, monkeypatch):
    """The staged folder's first files (configs, data state, model.txt) are each fsynced as
    files, and the folder once, just before its rename into place."""

    def on_fsync(path: str):
        if os.path.isdir(path) and path.endswith(".partial"):
            return "folder"
        return "file" if os.path.dirname(path).endswith(".partial") else None

    def on_rename(src: str, dst: str):
        return "publish" if src.endswith(".partial") else None

    events, _ = _traced_run(tmp_path, monkeypatch, 1, on_fsync, "rename", on_rename)
    # config.yaml, config.resolved.yaml, data_state.json, model.txt (the tables and summary
    # are written again, durably, by fit); then the folder, then the rename
    assert events == ["file"] * 4 + ["folder", "publish"]


def test_the_end_of_a_run_fsyncs_its_folder_once_after_its_last_rename(tmp_path, monkeypatch):
    """fit's end writes the tables, plots and summary durably: each file fsynced, the run
    folder once, after the last of their renames (fit's start: once, for its summary)."""
    runs = str(tmp_path / "runs")

    def on_fsync(path: str):
        if os.path.dirname(path) == runs and not path.endswith(".partial"):
            return "folder"
        return "file" if os.path.dirname(os.path.dirname(path)) == runs else None

    def on_rename(src: str, dst: str):
        parent = os.path.dirname(dst)
        return "rename" if os.path.dirname(parent) == runs and parent != src else None

    events, _ = _traced_run(tmp_path, monkeypatch, 2, on_fsync, "replace", on_rename)
    assert events.count("folder") == 2  # fit's start (summary) and end
    assert events[-1] == "folder" and events[-2] == "rename"  # the end: after summary.json
