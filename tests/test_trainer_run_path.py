"""``Trainer(..., run="some/folder")`` as the README's Python example writes it: a path (str or
``os.PathLike``, relative or absolute, absent or an existing empty folder) makes or reuses a run
folder; one that already holds a run is refused unless resuming it."""

from __future__ import annotations

import json
import os
import pathlib

import numpy as np
import pytest

import autogradcli as ag
from autogradcli import nn, optim
from autogradcli.data import DataLoader, TensorDataset
from autogradcli.trainer import EarlyStopping, Trainer, make_reporter

EPOCHS = 3


def _readme_trainer(run, epochs: int = EPOCHS, **kw) -> Trainer:
    """The README's ``Trainer(...)`` example on a small seeded classification set."""
    ag.manual_seed(0)
    x = ag.randn(48, 4)
    y = (x[:, 0] > 0).long()
    train_loader = DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8)
    val_loader = DataLoader(TensorDataset(x[32:], y[32:]), batch_size=8)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
    loss_fn = nn.CrossEntropyLoss()
    optimizer = optim.SGD(model.parameters(), lr=0.1)
    return Trainer(
        model,
        loss_fn,
        optimizer,
        train_loader,
        val_loader,
        epochs=epochs,
        metrics=["accuracy", "f1_macro"],
        run=run,
        callbacks=[EarlyStopping(monitor="val_acc", patience=3), make_reporter("none")],
        **kw,
    )


def _check_run_folder(folder: str, trainer: Trainer, epochs: int = EPOCHS) -> None:
    with open(os.path.join(folder, "summary.json"), encoding="utf-8") as f:
        summary = json.load(f)
    assert summary["status"] == "completed" and summary["epochs_completed"] == epochs
    with open(os.path.join(folder, "metrics.jsonl"), encoding="utf-8") as f:
        assert [json.loads(ln)["epoch"] for ln in f] == list(range(1, epochs + 1))
    last = ag.load(os.path.join(folder, "checkpoints", "last"))
    assert last["epoch"] == epochs
    for k, v in trainer.model.state_dict().items():  # the trained weights, as saved
        np.testing.assert_array_equal(last["model"][k].numpy(), v.numpy(), err_msg=k)
    assert not os.path.exists(os.path.join(folder, ".lock"))


def test_relative_string_path_makes_the_run_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    trainer = _readme_trainer("runs/mine")
    result = trainer.fit()
    assert result.status == "completed", result.message
    assert result.run_dir == str(tmp_path / "runs" / "mine")
    _check_run_folder(str(tmp_path / "runs" / "mine"), trainer)


@pytest.mark.parametrize("kind", [str, pathlib.Path])
def test_existing_empty_folder_is_reused(tmp_path, kind):
    folder = tmp_path / "made-by-me"
    folder.mkdir()
    trainer = _readme_trainer(kind(folder))
    assert trainer.fit().status == "completed"
    _check_run_folder(str(folder), trainer)


def test_folder_holding_a_run_is_refused_then_resumed(tmp_path):
    folder = str(tmp_path / "mine")
    _readme_trainer(folder, epochs=2).fit()
    with open(os.path.join(folder, "metrics.jsonl"), encoding="utf-8") as f:
        before = f.read()
    with pytest.raises(FileExistsError, match=r"already holds a run.*resume_from"):
        _readme_trainer(folder)
    with open(os.path.join(folder, "metrics.jsonl"), encoding="utf-8") as f:
        assert f.read() == before  # nothing written by the refused trainer
    trainer = _readme_trainer(folder, resume_from=folder)  # run= and resume_from= the same
    assert trainer.fit().status == "completed"
    _check_run_folder(folder, trainer)


def test_a_file_is_not_a_run_folder(tmp_path):
    path = tmp_path / "file"
    path.write_text("x")
    with pytest.raises(NotADirectoryError, match="is a file, not a folder"):
        _readme_trainer(str(path))
