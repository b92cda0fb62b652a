"""What a Keras/Lightning user expects of `agrad train` (issue 11, "wrong today"): the best
checkpoint follows the metric's direction, epoch times add up, the progress display shows every
metric with the right epoch, model.txt is inspect's table, divergence and errors in the user's
code are explained, and finished run folders have no lock. Numbers are checked against values
computed here."""

from __future__ import annotations

import csv
import io
import json
import os
import re

import pytest
from test_cli_helpers import agrad, agrad_in_process, agrad_subprocess, write

import autogradcli as ag
from autogradcli import data as D
from autogradcli import nn, optim
from autogradcli.trainer import (
    Callback,
    Checkpoint,
    EarlyStopping,
    GradNormLogger,
    PlainReporter,
    RunDir,
    Trainer,
    make_reporter,
)

SPIRALS = """
name: spirals
seed: 1
data: {dataset: spirals, n_per_class: 30, classes: 3, val_split: 0.3}
model:
  - {type: Linear, in_features: auto, out_features: 16}
  - Tanh
  - {type: Linear, in_features: auto, out_features: 3}
loss: CrossEntropyLoss
optimizer: {type: Adam, lr: 0.03}
hooks:
  - {type: Checkpoint, monitor: val_acc}
  - {type: EarlyStopping, monitor: val_acc, patience: 100}
train: {epochs: 6, batch_size: 8}
"""


def jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f.read().splitlines()]


def read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def only_run(runs):
    (run,) = [os.path.join(runs, d) for d in os.listdir(runs)]
    return run


# ---------------------------------------------------------------------------- monitor mode
def test_val_acc_monitor_keeps_the_most_accurate_epoch(tmp_path):
    cfg = write(tmp_path / "s.yaml", SPIRALS)
    runs = str(tmp_path / "runs")
    res = agrad_in_process("train", cfg, "--runs-dir", runs, "--progress", "none")
    assert res.returncode == 0, res.stderr
    run = only_run(runs)
    accs = [r["val_acc"] for r in jsonl(os.path.join(run, "metrics.jsonl"))]
    assert len(set(accs)) > 1  # the data can tell max from min
    best_epoch = accs.index(max(accs)) + 1  # the first epoch with the highest accuracy
    summary = read_json(os.path.join(run, "summary.json"))
    assert summary["best"]["epoch"] == best_epoch and summary["best"]["mode"] == "max"
    assert summary["best"]["value"] == max(accs)
    assert ag.load(os.path.join(run, "checkpoints", "best"))["epoch"] == best_epoch
    assert not os.path.exists(os.path.join(run, ".lock"))  # a finished run has no lock


def test_contradicting_mode_is_refused_unless_insisted(capsys, tmp_path):
    bad = write(
        tmp_path / "bad.yaml",
        SPIRALS.replace("monitor: val_acc}", "monitor: val_acc, mode: min}", 1),
    )
    code, _, err = agrad(capsys, "train", bad, "--print-config")
    assert code == 2
    assert f"{bad}:11:" in err and "hooks.0.mode: mode 'min' contradicts val_acc" in err
    assert "'min!' to insist" in err
    forced = write(
        tmp_path / "ok.yaml",
        SPIRALS.replace("monitor: val_acc}", "monitor: val_acc, mode: min!}", 1),
    )
    code, out, err = agrad(capsys, "train", forced, "--print-config")
    assert code == 0, err
    assert "mode: min!" in out
    # the Python API: auto follows the metric, a contradiction is refused, '!' insists
    assert Checkpoint(monitor="val_acc").mode == "max"
    assert EarlyStopping(monitor="train_loss").mode == "min"
    assert Checkpoint(monitor="val_acc", mode="min!").mode == "min"
    with pytest.raises(ValueError, match="contradicts val_acc"):
        EarlyStopping(monitor="val_acc", mode="min")
    assert Checkpoint(monitor="my_score", mode="max").mode == "max"  # unknown: as given


# ---------------------------------------------------------------------------- small trainer
def parts(n=96, lr=0.05, model=None, seed=0):
    ag.manual_seed(seed)
    x = ag.randn(n, 4)
    y = (x[:, 0] > 0).long()
    model = model or nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    opt = optim.SGD(model.parameters(), lr=lr)
    train = D.DataLoader(
        D.TensorDataset(x, y), batch_size=16, shuffle=True, generator=D.Generator(seed)
    )
    val = D.DataLoader(D.TensorDataset(x[:32], y[:32]), batch_size=16)
    return model, nn.CrossEntropyLoss(), opt, train, val


class LogCustom(Callback):
    def on_validation_end(self, trainer):
        trainer.metrics["zeta"] = 1.0 * trainer.epoch
        trainer.metrics["alpha"] = 2.0


def test_every_logged_metric_shown_in_csv_order(tmp_path):
    from rich.console import Console

    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=250)
    plain = io.StringIO()
    model, loss, opt, tl, vl = parts()
    run = RunDir.create(str(tmp_path), "cols")
    cbs = [GradNormLogger(), LogCustom(), make_reporter("bar", console), PlainReporter(plain)]
    Trainer(model, loss, opt, tl, vl, epochs=2, run=run, callbacks=cbs).fit()
    with open(run.file("metrics.csv"), newline="") as f:
        header = next(csv.reader(f))
    shown = [c for c in header if c != "step"]
    assert {"train_acc", "grad_norm", "grad_norm_max", "alpha", "zeta"} <= set(shown)
    # the live table's header row: the same columns in the same order
    text = re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", buf.getvalue())
    heads = [ln.split() for ln in text.splitlines() if ln.split()[:2] == ["epoch", "train_loss"]]
    assert heads and heads[-1] == shown
    # the plain lines: the same keys in the same order
    line = next(ln for ln in plain.getvalue().splitlines() if ln.startswith("epoch 2/2"))
    keys = re.findall(r"  ([a-z_]+) ", line)
    assert keys == shown[1:]


def test_progress_bar_shows_the_epoch_in_progress():
    from rich.console import Console

    seen, rates = [], []
    rep = make_reporter("bar", Console(file=io.StringIO(), force_terminal=True))

    class Probe(Callback):
        def on_batch_end(self, trainer):
            seen.append((rep._progress.tasks[0].fields["epoch"], trainer.epoch))
            rates.append(rep._progress.tasks[0].fields["rate"])

    model, loss, opt, tl, vl = parts()
    Trainer(model, loss, opt, tl, vl, epochs=3, callbacks=[Probe(), rep]).fit()
    assert {shown for shown, _ in seen} == {"1/3", "2/3", "3/3"}
    assert all(shown == f"{epoch}/3" for shown, epoch in seen)
    assert any(re.fullmatch(r"\d+\.\d steps/s", r) for r in rates)  # the speed is shown


def test_progress_bar_updated_at_most_every_bar_every_s(monkeypatch):
    """The bar's steps and loss move at most every ``BAR_EVERY_S`` (a fake clock, 1/16 s a
    step against 1/8 s: due at exactly 1/8 s, not at 1/16 s), and whole at the epoch's end."""
    import types

    from rich.console import Console

    from autogradcli.trainer import progress
    from autogradcli.trainer.progress import format_metric

    clock = [0.0]
    monkeypatch.setattr(progress, "time", types.SimpleNamespace(monotonic=lambda: clock[0]))
    monkeypatch.setattr(progress, "BAR_EVERY_S", 0.125)
    rep = make_reporter("bar", Console(file=io.StringIO(), force_terminal=True))
    shown, ends = [], []

    class Tick(Callback):
        def on_batch_end(self, trainer):
            clock[0] += 0.0625

    class Look(Callback):
        order = 2000  # after the reporter

        def on_batch_end(self, trainer):
            task = rep._progress.tasks[0]
            shown.append((int(task.completed), task.fields["loss"]))
            ends.append(format_metric("loss", trainer.batch_loss))

        def on_epoch_end(self, trainer):
            shown.append((int(rep._progress.tasks[0].completed), "end"))

    model, loss, opt, tl, vl = parts()  # 6 steps an epoch
    Trainer(model, loss, opt, tl, vl, epochs=2, callbacks=[Tick(), rep, Look()]).fit()
    epoch = [1, 1, 3, 3, 5, 5]
    assert [c for c, _ in shown] == epoch + [6] + epoch + [6]
    steps = [(c, lo) for c, lo in shown if lo != "end"]
    for i in (0, 2, 4, 6, 8, 10):  # an update shows that step's loss
        assert steps[i][1] == ends[i]


# ---------------------------------------------------------------------------- times, model.txt
def test_epoch_times_add_up_to_at_most_the_wall_time(tmp_path):
    text = (
        "name: t\nseed: 0\ndata: {dataset: sine, n: 1200, val_split: 0.1}\n"
        "model:\n  - {type: Linear, in_features: auto, out_features: 16}\n  - Tanh\n"
        "  - {type: Linear, in_features: auto, out_features: 1}\n"
        "loss: mse\noptimizer: {type: SGD, lr: 0.01}\ntrain: {epochs: 3, batch_size: 4}\n"
    )
    cfg = write(tmp_path / "t.yaml", text)
    runs = str(tmp_path / "runs")
    res = agrad_in_process("train", cfg, "--runs-dir", runs, "--progress", "none")
    assert res.returncode == 0, res.stderr
    run = only_run(runs)
    times = [r["time"] for r in jsonl(os.path.join(run, "metrics.jsonl"))]
    wall = read_json(os.path.join(run, "summary.json"))["wall_time_s"]
    assert len(times) == 3 and all(t > 0 for t in times)
    assert sum(times) <= wall + 0.0005  # wall_time_s is rounded to ms
    assert not os.path.exists(os.path.join(run, "acc.svg"))  # regression: no accuracy plot


def test_model_txt_is_the_inspect_table_at_the_training_batch(tmp_path):
    from autogradcli.config import build_experiment, load_config
    from autogradcli.nn.utils.summary import summarize

    cfg = write(tmp_path / "s.yaml", SPIRALS)
    runs = str(tmp_path / "runs")
    res = agrad_in_process("train", cfg, "--runs-dir", runs, "--progress", "none")
    assert res.returncode == 0, res.stderr
    with open(os.path.join(only_run(runs), "model.txt"), encoding="utf-8") as f:
        text = f.read()
    exp = build_experiment(load_config(cfg))
    x = next(iter(exp.train_loader))[0]
    assert x.shape[0] == 8  # train.batch_size
    table = summarize(exp.model, x, depth=3).to_text()
    assert text == "Sequential on a training batch of 8 (as agrad inspect)\n" + table
    assert "(B=8)" in text
    res = agrad_in_process("inspect", only_run(runs), "--json")
    doc = json.loads(res.stdout)["summary"]
    assert doc["batch_size"] == 8  # inspect runs the same training batch
    assert [r["output_shape"] for r in doc["rows"]][1:] == [["B", 16], ["B", 16], ["B", 3]]


# ---------------------------------------------------------------------------- divergence
DIVERGE = """
name: div
seed: 0
data: {dataset: sine, n: 64, val_split: 0.25}
model:
  - {type: Linear, in_features: auto, out_features: 8}
  - {type: Linear, in_features: auto, out_features: 1}
loss: mse
optimizer: {type: SGD, lr: 5.0}
train: {epochs: 50, batch_size: 16}
"""


def test_divergence_is_named_without_warnings(tmp_path):
    cfg = write(tmp_path / "d.yaml", DIVERGE)
    # a real process: under pytest, warnings are recorded instead of printed
    res = agrad_subprocess("train", cfg, "--runs-dir", str(tmp_path / "r"), "--progress", "plain")
    assert res.returncode == 1
    out = res.stdout + res.stderr
    assert "the model diverged: the loss grew from" in out
    assert "Lower the learning rate or clip gradients" in out
    assert "check the targets" not in out
    assert "Warning" not in out and "Traceback" not in out


def test_divergence_numbers_are_the_losses_seen():
    from autogradcli.config import build_experiment, load_config

    losses = []

    class Record(Callback):
        def on_before_backward(self, trainer, loss):
            losses.append(trainer.batch_loss)

    import tempfile

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "d.yaml")
        with open(path, "w") as f:
            f.write(DIVERGE)
        exp = build_experiment(load_config(path))
    trainer = Trainer(
        exp.model, exp.loss_fn, exp.optimizer, exp.train_loader, exp.val_loader,
        epochs=50, seed=0, callbacks=[Record()],
    )  # fmt: skip
    res = trainer.fit()
    assert res.status == "failed"
    finite = [v for v in losses if v == v and abs(v) != float("inf")]
    low = min(finite)
    low_step = losses.index(low) + 1
    bad_step = len(losses)
    assert bad_step == len(finite) + 1  # it stopped at the first non-finite loss
    assert f"step {bad_step}:" in res.message
    assert f"the loss grew from {low:.4g} (step {low_step})" in res.message
    assert f"over {bad_step - low_step} steps" in res.message


# ---------------------------------------------------------------------------- the user's code
BAD_FN = """\
import autogradcli as ag


class BadReLU(ag.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * (x > 0) * scale
"""


@pytest.mark.parametrize("progress", ["none", "plain"])
def test_error_in_users_function_shows_their_line(tmp_path, progress):
    (tmp_path / "myfn.py").write_text(BAD_FN)
    cfg = write(
        tmp_path / "b.yaml",
        DIVERGE.replace("lr: 5.0", "lr: 0.1").replace(
            "  - {type: Linear, in_features: auto, out_features: 1}",
            "  - {type: myfn.py:BadReLU}\n  - {type: Linear, in_features: auto, out_features: 1}",
        ),
    )
    res = agrad_in_process(
        "train", cfg, "--runs-dir", str(tmp_path / "r"), "--progress", progress, cwd=str(tmp_path)
    )
    assert res.returncode == 1
    out = res.stdout + res.stderr
    lineno = BAD_FN.splitlines().index("        return grad_output * (x > 0) * scale") + 1
    assert "NameError: name 'scale' is not defined" in out
    assert f"myfn.py:{lineno}, in backward" in out
    assert "    return grad_output * (x > 0) * scale" in out
    assert "Traceback" not in out and "autogradcli/" not in out


# ---------------------------------------------------------------------------- metrics
def frozen_fit(model, loss, x, y, metrics, batch=8):
    """Train with lr 0 (the model never changes), so every epoch's train and val metrics are
    those of one fixed model over the whole data set."""
    data = D.TensorDataset(x, y)
    tl = D.DataLoader(data, batch_size=batch, shuffle=True, generator=D.Generator(0))
    vl = D.DataLoader(data, batch_size=batch)
    opt = optim.SGD(model.parameters(), lr=0.0)
    tr = Trainer(model, loss, opt, tl, vl, epochs=1, metrics=metrics, default_callbacks=False)
    assert tr.fit().status == "completed"
    return tr.history[-1]


def test_classification_metrics_match_hand_computed_values():
    import numpy as np

    ag.manual_seed(0)
    n, classes = 53, 7  # 53: the last batch is short
    x = ag.randn(n, 6)
    model = nn.Linear(6, classes)
    y = ag.tensor(np.random.RandomState(0).randint(0, classes, size=n))
    row = frozen_fit(model, nn.CrossEntropyLoss(), x, y, ["accuracy", "top5", "f1_macro"])
    with ag.no_grad():
        scores = model(x).numpy().astype(np.float64)
    t = y.numpy()
    pred = scores.argmax(1)
    acc = float((pred == t).mean())
    top5 = float(np.mean([t[i] in np.argsort(-scores[i])[:5] for i in range(n)]))
    f1s = []
    for c in sorted(set(t) | set(pred)):
        tp = np.sum((pred == c) & (t == c))
        fp = np.sum((pred == c) & (t != c))
        fn = np.sum((pred != c) & (t == c))
        f1s.append(2 * tp / (2 * tp + fp + fn))
    for split in ("train", "val"):
        assert row[f"{split}_acc"] == pytest.approx(acc, abs=1e-12)
        assert row[f"{split}_top5"] == pytest.approx(top5, abs=1e-12)
        assert row[f"{split}_f1_macro"] == pytest.approx(float(np.mean(f1s)), abs=1e-12)
    assert 0 < top5 < 1 and acc < top5  # the data can tell the metrics apart


def test_regression_metrics_match_hand_computed_values():
    import numpy as np

    ag.manual_seed(1)
    x = ag.randn(45, 3)
    model = nn.Linear(3, 2)
    y = ag.randn(45, 2) * 2.0
    row = frozen_fit(model, nn.MSELoss(), x, y, ["mae", "rmse", "r2"])
    with ag.no_grad():
        p = model(x).numpy().astype(np.float64)
    t = y.numpy().astype(np.float64)
    mae = np.abs(p - t).mean()
    rmse = np.sqrt(((p - t) ** 2).mean())
    r2 = np.mean(
        [
            1 - ((t[:, j] - p[:, j]) ** 2).sum() / ((t[:, j] - t[:, j].mean()) ** 2).sum()
            for j in (0, 1)
        ]
    )
    for split in ("train", "val"):
        assert row[f"{split}_mae"] == pytest.approx(mae, rel=1e-6)
        assert row[f"{split}_rmse"] == pytest.approx(rmse, rel=1e-6)
        assert row[f"{split}_r2"] == pytest.approx(r2, rel=1e-6, abs=1e-6)
    assert "train_acc" not in row


def test_metrics_from_the_config_and_as_monitor(capsys, tmp_path):
    text = (
        "name: r\nseed: 0\ndata: {dataset: sine, n: 80, val_split: 0.25}\n"
        "model:\n  - {type: Linear, in_features: auto, out_features: 8}\n  - Tanh\n"
        "  - {type: Linear, in_features: auto, out_features: 1}\n"
        "loss: mse\noptimizer: {type: Adam, lr: 0.05}\nmetrics: [mae, rmse, r2]\n"
        "hooks:\n  - {type: Checkpoint, monitor: val_r2}\ntrain: {epochs: 4, batch_size: 16}\n"
    )
    cfg = write(tmp_path / "r.yaml", text)
    runs = str(tmp_path / "runs")
    res = agrad_in_process("train", cfg, "--runs-dir", runs, "--progress", "none")
    assert res.returncode == 0, res.stderr
    run = only_run(runs)
    rows = jsonl(os.path.join(run, "metrics.jsonl"))
    for key in ("train_mae", "train_rmse", "train_r2", "val_mae", "val_rmse", "val_r2"):
        assert all(isinstance(r[key], float) for r in rows), key
    assert all(r["val_rmse"] >= r["val_mae"] for r in rows)  # RMSE >= MAE always
    r2 = [r["val_r2"] for r in rows]
    best = read_json(os.path.join(run, "summary.json"))["best"]
    assert best["mode"] == "max" and best["epoch"] == r2.index(max(r2)) + 1
    # a regression run logs mae by default
    from autogradcli.config import build_experiment, load_config

    assert build_experiment(load_config(cfg, ["metrics=null", "hooks=[]"])).metrics == ["mae"]
    # unknown metric, and a monitor that is never logged
    bad = write(tmp_path / "b.yaml", text.replace("[mae, rmse, r2]", "[mae, rsme]"))
    code, _, err = agrad(capsys, "train", bad, "--print-config")
    assert code == 2 and "metrics.1: unknown metric 'rsme' (did you mean 'rmse'?)" in err
    assert "hooks.0.monitor: val_r2 is not logged: add r2 to metrics" in err


def test_lightning_event_names_are_refused_with_ours():
    class Ported(Callback):
        def on_train_epoch_end(self, trainer, pl_module=None):
            pass

    model, loss, opt, tl, vl = parts()
    with pytest.raises(
        TypeError, match=r"on_train_epoch_end is a PyTorch Lightning name.*on_epoch_end"
    ):
        Trainer(model, loss, opt, tl, vl, epochs=1, callbacks=[Ported()])


def test_lightning_named_user_callback_in_a_config_is_a_config_error(capsys, tmp_path):
    (tmp_path / "pl_hooks.py").write_text(
        "from autogradcli.trainer import Callback\n"
        "class Ported(Callback):\n"
        "    def on_train_batch_end(self, trainer, *args):\n"
        "        pass\n"
    )
    text = SPIRALS.replace(
        "  - {type: EarlyStopping", "  - {type: pl_hooks.py:Ported}\n  - {type: EarlyStopping"
    )
    cfg = write(tmp_path / "pl.yaml", text)
    code, _, err = agrad(
        capsys, "train", cfg, "--runs-dir", str(tmp_path / "r"), "--progress", "none"
    )
    assert code == 2
    assert f"{cfg}:12:5  hooks.1: Ported.on_train_batch_end is a PyTorch Lightning name" in err
    assert "calls on_batch_end(trainer)" in err and "Traceback" not in err
    assert not os.listdir(tmp_path / "r")  # no run folder was left


def test_resume_extends_a_finished_run_with_set(tmp_path):
    cfg = write(tmp_path / "s.yaml", SPIRALS.replace("epochs: 6", "epochs: 2"))
    straight_runs, runs = str(tmp_path / "a"), str(tmp_path / "b")
    res = agrad_in_process(
        "train", cfg, "--runs-dir", straight_runs, "--progress", "none", "--set", "train.epochs=4"
    )
    assert res.returncode == 0, res.stderr
    res = agrad_in_process("train", cfg, "--runs-dir", runs, "--progress", "none")
    assert res.returncode == 0, res.stderr
    run = only_run(runs)
    # a key that would make it another run is refused by name, and nothing changes
    res = agrad_in_process("train", "--resume", run, "--set", "optimizer.lr=0.5")
    assert res.returncode == 2 and "cannot change optimizer.lr when resuming" in res.stderr
    assert len(jsonl(os.path.join(run, "metrics.jsonl"))) == 2
    # a fresh process: nothing left in memory by the first two epochs can stand in for the resume
    res = agrad_subprocess(
        "train", "--resume", run, "--set", "train.epochs=4", "--progress", "none"
    )
    assert res.returncode == 0, res.stderr
    rows = jsonl(os.path.join(run, "metrics.jsonl"))
    ref = jsonl(os.path.join(only_run(straight_runs), "metrics.jsonl"))
    assert [r["epoch"] for r in rows] == [1, 2, 3, 4]
    key = ("train_loss", "val_loss", "val_acc")
    assert [[r[k] for k in key] for r in rows] == [[r[k] for k in key] for r in ref]
    with open(os.path.join(run, "config.resolved.yaml"), encoding="utf-8") as f:
        assert "epochs: 4" in f.read()
