"""End-to-end runs from YAML configs: the run folder's files, determinism, resume, hooks, and
the shipped digits MLP (accuracy, and its loss curve against a PyTorch loop)."""

from __future__ import annotations

import csv
import errno
import json
import os
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import autogradcli as ag
from autogradcli import data as D
from autogradcli.config import build_experiment, load_config
from autogradcli.trainer import RunDir, resume, train_from_config, trainer_from_experiment

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TINY = """\
name: tiny
seed: 3
data: {dataset: spirals, n_per_class: 20, classes: 3, val_split: 0.25}
model:
  - {type: Linear, in_features: auto, out_features: 16}
  - {type: Tanh, name: act}
  - {type: Dropout, p: 0.1}
  - {type: Linear, in_features: auto, out_features: 3}
loss: CrossEntropyLoss
optimizer: {type: Adam, lr: 0.02}
scheduler: {type: StepLR, step_size: 1, gamma: 0.7}
hooks:
  - {type: EarlyStopping, monitor: val_loss, patience: 50}
  - LRLogger
  - GradNormLogger
train: {epochs: 3, batch_size: 8}
"""


def write_config(tmp_path, text=TINY, name="tiny.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f.read().splitlines()]


def model_state(run_dir):
    state = ag.load(os.path.join(run_dir, "checkpoints", "last"))
    return {k: v.numpy() for k, v in state["model"].items()}


def test_tiny_run_writes_every_file(tmp_path):
    cfg = write_config(tmp_path)
    res = train_from_config(cfg, progress="none", runs_dir=str(tmp_path / "runs"))
    assert res.status == "completed"
    run = res.run_dir
    assert os.path.dirname(run) == str(tmp_path / "runs")
    assert os.path.basename(run).startswith("tiny-")
    expected = {"config.yaml", "config.resolved.yaml", "metrics.jsonl", "metrics.csv"}
    expected |= {"summary.json", "model.txt", "loss.svg", "checkpoints"}
    assert expected <= set(os.listdir(run))
    assert not [f for f in os.listdir(run) if f.endswith(".tmp")]

    # configs: the text as given, and a resolved one that loads again
    with open(os.path.join(run, "config.yaml")) as f:
        assert f.read() == TINY
    again = load_config(os.path.join(run, "config.resolved.yaml"))
    assert again.data["train"]["epochs"] == 3 and again.data["seed"] == 3

    rows = jsonl(os.path.join(run, "metrics.jsonl"))
    assert [r["epoch"] for r in rows] == [1, 2, 3]
    for r in rows:
        for key in ("train_loss", "val_loss", "val_acc", "train_acc", "lr", "time", "grad_norm"):
            assert isinstance(r[key], float), key
    assert [r["lr"] for r in rows] == pytest.approx([0.02, 0.014, 0.0098])

    with open(os.path.join(run, "metrics.csv"), newline="") as f:
        table = list(csv.reader(f))
    assert table[0] == [
        "epoch", "step", "train_loss", "train_acc", "val_loss", "val_acc", "lr",
        "grad_norm", "grad_norm_max", "time",
    ]  # fmt: skip
    assert len(table) == 4 and float(table[3][2]) == rows[2]["train_loss"]

    summary = read_json(os.path.join(run, "summary.json"))
    assert summary["status"] == "completed"
    assert summary["epochs_completed"] == 3 and summary["seed"] == 3
    assert summary["device"] == "cpu" and summary["task"] == "classification"
    assert set(summary["versions"]) >= {"python", "numpy", "autogradcli"}
    assert summary["final"]["epoch"] == 3 and summary["best"]["monitor"] == "val_loss"
    assert summary["best"]["value"] == min(r["val_loss"] for r in rows)
    assert summary["wall_time_s"] > 0
    assert res.best == summary["best"] and res.final["epoch"] == 3

    with open(os.path.join(run, "model.txt")) as f:
        text = f.read()
    assert "Linear" in text and "Tanh" in text

    for name in ("last", "best"):
        state = ag.load(os.path.join(run, "checkpoints", name))
        assert set(state) >= {"model", "optimizer", "scheduler", "rng", "data_generator"}
        assert set(state) >= {"epoch", "global_step", "best", "callbacks", "history"}
        assert "EarlyStopping" in state["callbacks"]
    assert ag.load(os.path.join(run, "checkpoints", "last"))["epoch"] == 3

    svg = ET.parse(os.path.join(run, "loss.svg")).getroot()
    assert svg.tag.endswith("svg")
    ns = "{http://www.w3.org/2000/svg}"
    assert len(svg.findall(f"{ns}polyline")) == 2  # train and val
    texts = [t.text for t in svg.iter(f"{ns}text")]
    assert "train loss" in texts and "val loss" in texts and "epoch" in texts
    acc = ET.parse(os.path.join(run, "acc.svg")).getroot()  # a class loss: accuracy plotted
    assert len(acc.findall(f"{ns}polyline")) == 2
    assert {"train acc", "val acc", "accuracy"} <= {t.text for t in acc.iter(f"{ns}text")}


def test_same_config_same_losses(tmp_path):
    cfg = write_config(tmp_path)
    a = train_from_config(cfg, progress="none", runs_dir=str(tmp_path / "runs"))
    b = train_from_config(cfg, progress="none", runs_dir=str(tmp_path / "runs"))
    assert a.run_dir != b.run_dir
    key = ("train_loss", "val_loss", "train_acc", "val_acc", "grad_norm")
    ra, rb = jsonl(os.path.join(a.run_dir, "metrics.jsonl")), jsonl(b.run_dir + "/metrics.jsonl")
    assert [[r[k] for k in key] for r in ra] == [[r[k] for k in key] for r in rb]
    for k, v in model_state(a.run_dir).items():
        np.testing.assert_array_equal(v, model_state(b.run_dir)[k])


def test_resume_from_run_folder_is_bit_identical(tmp_path):
    cfg = write_config(tmp_path, TINY.replace("epochs: 3", "epochs: 4"))
    runs = str(tmp_path / "runs")
    straight = train_from_config(cfg, progress="none", runs_dir=runs)
    part = train_from_config(cfg, progress="none", runs_dir=runs, epochs=2)
    assert part.final["epoch"] == 2
    done = resume(part.run_dir, progress="none")  # the stored config says 4 epochs
    assert (done.status, done.run_dir) == ("completed", part.run_dir)
    a, b = model_state(straight.run_dir), model_state(part.run_dir)
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)
    rows = jsonl(os.path.join(part.run_dir, "metrics.jsonl"))
    assert [r["epoch"] for r in rows] == [1, 2, 3, 4]
    ref = jsonl(os.path.join(straight.run_dir, "metrics.jsonl"))
    assert [r["train_loss"] for r in rows] == [r["train_loss"] for r in ref]
    # resuming a finished run does nothing and says completed
    again = resume(part.run_dir, progress="none")
    assert again.status == "completed" and again.final["epoch"] == 4


def test_resume_without_checkpoint_is_an_error(tmp_path):
    run = RunDir.create(str(tmp_path), "empty")
    with pytest.raises(FileNotFoundError, match="no checkpoints/last"):
        resume(run.path, progress="none")


HOOKS_PY = """\
from autogradcli.trainer import Callback

SEEN = []


class Record(Callback):
    def __init__(self, tag):
        self.tag = tag

    def on_epoch_end(self, trainer):
        trainer.metrics["custom"] = float(trainer.epoch)
        SEEN.append((self.tag, trainer.epoch))


def stats(module, args, output):
    SEEN.append(("forward", tuple(output.shape)))


def every_epoch(trainer, scale):
    SEEN.append(("fn", trainer.epoch * scale))
"""


def test_config_hooks_user_callbacks_and_module_hooks(tmp_path):
    (tmp_path / "my_hooks.py").write_text(HOOKS_PY)
    text = TINY.replace(
        "  - GradNormLogger\n",
        "  - GradNormLogger\n"
        "  - {type: my_hooks.py:Record, tag: hi}\n"
        "  - {type: my_hooks.py:every_epoch, scale: 10}\n"
        "  - {type: forward, layer: act, fn: my_hooks.py:stats}\n",
    ).replace("epochs: 3", "epochs: 2")
    cfg = load_config(write_config(tmp_path, text))
    exp = build_experiment(cfg)
    trainer = trainer_from_experiment(exp)
    res = trainer.fit()
    assert res.status == "completed"
    seen = next(h.target for h in exp.hooks if h.kind == "forward").__globals__["SEEN"]
    assert ("hi", 1) in seen and ("hi", 2) in seen and ("fn", 20) in seen
    assert ("forward", (8, 16)) in seen
    assert trainer.history[-1]["custom"] == 2.0


def test_interrupted_config_run_exits_130_and_resumes(tmp_path):
    (tmp_path / "stop.py").write_text(
        "from autogradcli.trainer import Callback\n"
        "class StopAt(Callback):\n"
        "    def __init__(self, step):\n"
        "        self.step = step\n"
        "    def on_batch_end(self, trainer):\n"
        "        if trainer.global_step == self.step:\n"
        "            raise KeyboardInterrupt\n"
    )
    text = TINY.replace("  - LRLogger\n", "  - LRLogger\n  - {type: stop.py:StopAt, step: 8}\n")
    res = train_from_config(
        write_config(tmp_path, text), progress="none", runs_dir=str(tmp_path / "r")
    )
    assert res.status == "interrupted"
    summary = read_json(os.path.join(res.run_dir, "summary.json"))
    assert summary["status"] == "interrupted"
    assert ag.load(os.path.join(res.run_dir, "checkpoints", "last"))["global_step"] == 8


# ---------------------------------------------------------------------------- digits MLP
@pytest.mark.slow
def test_digits_mlp_accuracy_and_loss_curve_vs_pytorch(tmp_path):
    torch = pytest.importorskip("torch")
    cfg_path = os.path.join(ROOT, "configs", "digits_mlp.yaml")
    epochs = 3
    cfg = load_config(cfg_path, [f"train.epochs={epochs}", "hooks=[]"])
    exp = build_experiment(cfg)
    init = {k: v.numpy().copy() for k, v in exp.model.state_dict().items()}
    lr = cfg.data["optimizer"]["lr"]
    batch = cfg.data["train"]["batch_size"]
    trainer = trainer_from_experiment(exp)
    res = trainer.fit()
    assert res.status == "completed"

    # the same loop in PyTorch, from the same weights and the same batches
    tmodel = torch.nn.Sequential(
        torch.nn.Flatten(), torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10)
    )
    tmodel.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    topt = torch.optim.Adam(tmodel.parameters(), lr=lr)
    crit = torch.nn.CrossEntropyLoss()
    loader = D.DataLoader(
        exp.train_loader.dataset, batch_size=batch, shuffle=True, generator=D.Generator(exp.seed)
    )
    val = [(torch.from_numpy(x.numpy()), torch.from_numpy(y.numpy())) for x, y in exp.val_loader]
    curve = []
    for _ in range(epochs):
        tot, n = 0.0, 0
        for x, y in loader:
            xt, yt = torch.from_numpy(x.numpy()), torch.from_numpy(y.numpy())
            topt.zero_grad()
            loss = crit(tmodel(xt), yt)
            loss.backward()
            topt.step()
            tot += loss.item() * len(yt)
            n += len(yt)
        with torch.no_grad():
            vl = sum(crit(tmodel(x), y).item() * len(y) for x, y in val) / sum(
                len(y) for _, y in val
            )
        curve.append((tot / n, vl))
    ours = [(m["train_loss"], m["val_loss"]) for m in trainer.history]
    print("max rel diff vs torch:", np.max(np.abs(np.array(ours) / np.array(curve) - 1)))
    np.testing.assert_allclose(np.array(ours), np.array(curve), rtol=1e-4, atol=1e-6)

    # the shipped config, as is, reaches >= 95% validation accuracy
    full = train_from_config(cfg_path, progress="none", runs_dir=str(tmp_path / "runs"))
    assert full.status == "completed"
    print("digits val_acc final/best:", full.final["val_acc"], full.best["metrics"]["val_acc"])
    assert full.final["val_acc"] >= 0.95 and full.best["metrics"]["val_acc"] >= 0.95


# ---------------------------------------------------------------------------- folder creation
def _disk_full(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.mark.parametrize(
    ("step", "words"),
    [
        ("mkdir", "cannot make a run folder in"),
        ("config.yaml", "(writing config.yaml)"),
        ("config.resolved.yaml", "(writing config.resolved.yaml)"),
        ("lock", "cannot make the run folder"),
        ("model.txt", "(writing model.txt)"),
        ("metrics.csv", "(writing metrics.csv)"),
        ("loss.svg", "(writing loss.svg)"),
        ("summary", "cannot make the run folder"),
        ("publish", "cannot make the run folder"),
    ],
)
def test_disk_full_at_any_step_of_making_the_run_folder_leaves_nothing(
    tmp_path, monkeypatch, step, words
):
    """ENOSPC at each step of making a run folder: a ``RunFolderNotMade`` (exit 2) naming the
    folder and the OS error, and the runs folder as it was (no half-made or hidden folder)."""
    from autogradcli.cli.errors import describe
    from autogradcli.trainer.run_dir import RunFolderNotMade

    runs = tmp_path / "runs"
    runs.mkdir()
    if step == "mkdir":
        monkeypatch.setattr(os, "mkdir", _disk_full)
    elif step in ("lock", "publish"):
        monkeypatch.setattr(RunDir, step, _disk_full)
    elif step == "summary":
        monkeypatch.setattr(RunDir, "write_summary", _disk_full)
    else:
        from autogradcli.trainer import run_dir

        write = run_dir.atomic_write_text

        def fail_one(path, text, *durable):
            if os.path.basename(path) == step:
                _disk_full()
            write(path, text, *durable)

        monkeypatch.setattr(run_dir, "atomic_write_text", fail_one)
    cfg = write_config(tmp_path)
    with pytest.raises(RunFolderNotMade) as info:
        train_from_config(cfg, progress="none", runs_dir=str(runs))
    message = str(info.value)
    assert words in message and str(runs) in message
    assert "the disk is full (No space left on device)" in message
    assert describe(info.value) == (2, [f"agrad: error: {message}"])
    monkeypatch.undo()
    assert os.listdir(runs) == []
