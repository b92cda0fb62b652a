"""End to end: the shipped CNN config against PyTorch, and a real Ctrl-C on the `agrad` process."""

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import autogradcli as ag
from autogradcli import data as D
from autogradcli.config import build_experiment, load_config
from autogradcli.trainer import train_from_config

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CNN = os.path.join(ROOT, "configs", "digits_cnn.yaml")
MLP = os.path.join(ROOT, "configs", "digits_mlp.yaml")


def _torch_cnn(torch):
    nn = torch.nn
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10),
    )  # fmt: skip


@pytest.mark.slow
def test_digits_cnn_matches_pytorch_and_reaches_95_percent(tmp_path):
    torch = pytest.importorskip("torch")
    epochs = 2  # compared with PyTorch: the shipped run's first two epochs
    cfg = load_config(CNN)
    exp = build_experiment(cfg)  # the run's model and batches before training (the config's seed)
    init = {k: v.numpy().copy() for k, v in exp.model.state_dict().items()}
    full = train_from_config(CNN, progress="none", runs_dir=str(tmp_path / "runs"))
    assert full.status == "completed"
    assert full.final["val_acc"] >= 0.95

    # the same loop in PyTorch from the same weights, the same batches and the same Adam+StepLR
    tmodel = _torch_cnn(torch)
    tmodel.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    topt = torch.optim.Adam(tmodel.parameters(), lr=cfg.data["optimizer"]["lr"])
    sched = torch.optim.lr_scheduler.StepLR(topt, step_size=4, gamma=0.5)
    crit = torch.nn.CrossEntropyLoss()
    loader = D.DataLoader(
        exp.train_loader.dataset,
        batch_size=cfg.data["train"]["batch_size"],
        shuffle=True,
        generator=D.Generator(exp.seed),
    )
    curve = []
    for _ in range(epochs):
        total, n = 0.0, 0
        for x, y in loader:
            xt, yt = torch.from_numpy(x.numpy()), torch.from_numpy(y.numpy())
            topt.zero_grad()
            loss = crit(tmodel(xt), yt)
            loss.backward()
            topt.step()
            total += loss.item() * len(yt)
            n += len(yt)
        sched.step()
        curve.append(total / n)
    ours = [m["train_loss"] for m in full.history[:epochs]]
    assert len(ours) == epochs
    np.testing.assert_allclose(ours, curve, rtol=1e-4)


def test_ctrl_c_on_agrad_train_saves_last_and_exits_130(tmp_path):
    runs = tmp_path / "runs"
    cmd = [sys.executable, "-m", "autogradcli.cli", "train", MLP, "--progress", "plain",
           "--runs-dir", str(runs), "--set", "train.epochs=100000"]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.time() + 180
        metrics = None
        while time.time() < deadline and proc.poll() is None:
            found = list(runs.glob("*/metrics.jsonl")) if runs.exists() else []
            if found and found[0].read_text().count("\n") >= 2:
                metrics = found[0]
                break
            time.sleep(0.05)
        assert metrics is not None, "the run never wrote two epochs"
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, out
    assert "Traceback" not in out
    run_dir = metrics.parent
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "interrupted"
    last = ag.load(str(run_dir / "checkpoints" / "last"))
    epochs_logged = [json.loads(line)["epoch"] for line in metrics.read_text().splitlines()]
    assert epochs_logged == list(range(1, len(epochs_logged) + 1))  # whole lines, no duplicates
    assert last["epoch"] >= epochs_logged[-1] - 1
