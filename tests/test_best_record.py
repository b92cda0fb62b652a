"""One record of the best epoch: ``checkpoints/best`` holds the weights of the epoch that
summary.json (and ``RunResult.best``) reports, for every choice of monitors and modes, through
the Python API and through ``agrad train``. The trainer owns the record; ``Checkpoint`` saves
it. The truth: the best epoch computed here from the logged history, and the weights copied at
the end of each epoch."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from test_cli_helpers import agrad, write

import autogradcli as ag
from autogradcli import data as D
from autogradcli import nn, optim
from autogradcli.trainer import Callback, Checkpoint, RunDir, Trainer

EPOCHS = 6
# per monitor: the modes to try (a direction against the metric's needs "!")
MODES = {
    "val_loss": ("auto", "min", "max!"),
    "val_acc": ("auto", "max", "min!"),
    "train_loss": ("auto", "min", "max!"),
}


class WeightsPerEpoch(Callback):
    """The model's weights at the end of every epoch (runs before Checkpoint saves)."""

    def __init__(self) -> None:
        self.weights: dict[int, dict[str, np.ndarray]] = {}

    def on_epoch_end(self, trainer) -> None:
        state = trainer.model.state_dict()
        self.weights[trainer.epoch] = {k: v.detach().numpy().copy() for k, v in state.items()}


def noisy_classification(seed: int = 3):
    """A small, noisy 3-class problem trained with a large lr, so val_loss, val_acc and
    train_loss pick different best epochs."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((90, 4)).astype(np.float32)
    y = (np.argmax(x[:, :3] + 0.8 * rng.standard_normal((90, 3)), axis=1)).astype(np.int64)
    ag.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 12), nn.Tanh(), nn.Linear(12, 3))
    ds = D.TensorDataset(ag.tensor(x[:60]), ag.tensor(y[:60]))
    val = D.TensorDataset(ag.tensor(x[60:]), ag.tensor(y[60:]))
    train = D.DataLoader(ds, batch_size=10, shuffle=True, generator=D.Generator(seed))
    opt = optim.SGD(model.parameters(), lr=0.6)
    return model, nn.CrossEntropyLoss(), opt, train, D.DataLoader(val, batch_size=30)


def expected_best(history, monitor: str, mode: str) -> int:
    """The first epoch with the best value (ties keep the earlier, as the record does)."""
    values = [h[monitor] for h in history]
    best = min(values) if mode.rstrip("!") == "min" else max(values)
    return values.index(best) + 1


def assert_best_is_saved(run_dir: str, history, best: dict, weights: dict) -> None:
    with open(os.path.join(run_dir, "summary.json"), encoding="utf-8") as f:
        summary = json.load(f)
    assert summary["best"]["epoch"] == best["epoch"]
    saved = ag.load(os.path.join(run_dir, "checkpoints", "best"))
    assert saved["epoch"] == best["epoch"]
    for name, value in saved["model"].items():
        np.testing.assert_array_equal(value.numpy(), weights[best["epoch"]][name], err_msg=name)


def fit(tmp_path, monitor=None, mode="auto", checkpoint=None, seed=3):
    model, loss, opt, train, val = noisy_classification(seed)
    spy = WeightsPerEpoch()
    callbacks = [spy] + ([checkpoint] if checkpoint is not None else [])
    kw = {"monitor": monitor, "mode": mode}
    run = RunDir.create(str(tmp_path), "b")
    tr = Trainer(model, loss, opt, train, val, epochs=EPOCHS, callbacks=callbacks, run=run, **kw)
    return tr, tr.fit(), spy


CASES = [(m, mode) for m, modes in MODES.items() for mode in modes]


@pytest.mark.parametrize("monitor, mode", CASES)
@pytest.mark.parametrize("where", ["trainer", "checkpoint", "both"])
def test_best_checkpoint_is_the_reported_best(tmp_path, monitor, mode, where):
    """The monitor given to the Trainer (the default Checkpoint follows it), to the
    Checkpoint (the trainer follows it), or to both alike."""
    if where == "trainer":
        tr, res, spy = fit(tmp_path, monitor, mode)
    elif where == "checkpoint":
        tr, res, spy = fit(tmp_path, checkpoint=Checkpoint(monitor=monitor, mode=mode))
    else:
        ckpt = Checkpoint(monitor=monitor, mode=mode)
        tr, res, spy = fit(tmp_path, monitor, mode, checkpoint=ckpt)
    assert res.status == "completed"
    natural = "max" if monitor == "val_acc" else "min"
    assert (res.best["monitor"], res.best["mode"]) == (
        monitor,
        mode.rstrip("!").replace("auto", natural),
    )
    assert res.best["epoch"] == expected_best(res.history, monitor, res.best["mode"])
    assert_best_is_saved(tr.run.path, res.history, res.best, spy.weights)


def test_the_monitors_pick_different_epochs(tmp_path):
    """The data can tell the monitors apart (else the matrix above could not fail)."""
    _, res, _ = fit(tmp_path, "val_loss")
    picks = {expected_best(res.history, m, "min" if "loss" in m else "max") for m in MODES}
    assert len(picks) > 1, res.history


@pytest.mark.parametrize("monitor", ["val_loss", "val_acc", "train_loss"])
def test_unset_checkpoint_follows_the_trainer(tmp_path, monitor):
    """``Checkpoint()`` given without a monitor, or the default one: the trainer's monitor."""
    tr, res, spy = fit(tmp_path, monitor, checkpoint=Checkpoint())
    assert res.best["monitor"] == monitor
    assert_best_is_saved(tr.run.path, res.history, res.best, spy.weights)


@pytest.mark.parametrize(
    "trainer, checkpoint",
    [
        (("val_acc", "auto"), ("val_loss", "auto")),
        (("val_loss", "auto"), ("val_acc", "auto")),
        (("train_loss", "auto"), ("val_loss", "auto")),
        (("val_loss", "auto"), ("val_loss", "max!")),
    ],
)
def test_disagreeing_monitors_are_refused(tmp_path, trainer, checkpoint):
    """Two different bests cannot both be checkpoints/best: refused, naming both."""
    with pytest.raises(ValueError, match="disagree") as err:
        fit(tmp_path, *trainer, checkpoint=Checkpoint(monitor=checkpoint[0], mode=checkpoint[1]))
    assert trainer[0] in str(err.value) and checkpoint[0] in str(err.value)


def test_checkpoint_mode_without_monitor_is_refused():
    with pytest.raises(ValueError, match="needs the monitor"):
        Checkpoint(mode="max")


CONFIG = """
name: best
seed: 1
data: {dataset: spirals, n_per_class: 30, classes: 3, val_split: 0.3, noise: 0.6}
model:
  - {type: Linear, in_features: auto, out_features: 16}
  - Tanh
  - {type: Linear, in_features: auto, out_features: 3}
loss: CrossEntropyLoss
optimizer: {type: SGD, lr: 0.8}
HOOKS
train: {epochs: 6, batch_size: 8}
"""


@pytest.mark.parametrize(
    "hook, monitor, mode",
    [
        (None, "val_loss", "min"),
        ("{type: Checkpoint}", "val_loss", "min"),
        ("{type: Checkpoint, monitor: val_loss, mode: max!}", "val_loss", "max"),
        ("{type: Checkpoint, monitor: val_acc}", "val_acc", "max"),
        ("{type: Checkpoint, monitor: val_acc, mode: min!}", "val_acc", "min"),
        ("{type: Checkpoint, monitor: train_loss}", "train_loss", "min"),
        ("{type: EarlyStopping, monitor: val_acc, patience: 99}", "val_loss", "min"),
    ],
)
def test_agrad_train_best_checkpoint_is_the_summary_best(capsys, tmp_path, hook, monitor, mode):
    """The checkpoint's own recorded epoch is the summary's best epoch, which is the best of
    the logged history for the Checkpoint's monitor (EarlyStopping keeps its own patience)."""
    text = CONFIG.replace("HOOKS", f"hooks: [{hook}]" if hook else "")
    cfg = write(tmp_path / "c.yaml", text)
    runs = str(tmp_path / "runs")
    code, out, err = agrad(capsys, "train", str(cfg), "--runs-dir", runs, "--progress", "none")
    assert code == 0, out + err
    (run,) = [os.path.join(runs, d) for d in os.listdir(runs)]
    with open(os.path.join(run, "summary.json"), encoding="utf-8") as f:
        best = json.load(f)["best"]
    with open(os.path.join(run, "metrics.jsonl"), encoding="utf-8") as f:
        history = [json.loads(line) for line in f]
    assert (best["monitor"], best["mode"]) == (monitor, mode)
    assert best["epoch"] == expected_best(history, monitor, mode)
    assert ag.load(os.path.join(run, "checkpoints", "best"))["epoch"] == best["epoch"]


def test_trainer_mode_against_the_checkpoints_is_refused(tmp_path):
    """``Trainer(mode="min!")`` with ``Checkpoint(monitor="val_acc")`` (max): two directions."""
    with pytest.raises(ValueError, match="disagree"):
        fit(tmp_path, None, "min!", checkpoint=Checkpoint(monitor="val_acc"))
    _, res, _ = fit(tmp_path, None, "max", checkpoint=Checkpoint(monitor="val_acc"))
    assert (res.best["monitor"], res.best["mode"]) == ("val_acc", "max")
