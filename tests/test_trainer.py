"""Trainer built from objects: loop order, determinism, exact resume, interrupts, NaN guard,
callbacks, reporters and run folders."""

from __future__ import annotations

import io
import json
import os
import re
import signal

import numpy as np
import pytest

import autogradcli as ag
from autogradcli import data as D
from autogradcli import nn, optim
from autogradcli.nn.utils import clip_grad_norm_
from autogradcli.optim import lr_scheduler
from autogradcli.trainer import (
    Callback,
    EarlyStopping,
    GradNormLogger,
    LRLogger,
    ModuleHooks,
    PlainReporter,
    RunDir,
    Trainer,
    make_reporter,
    model_text,
)
from autogradcli.trainer import run_dir as run_dir_mod

N, FEATURES, CLASSES, BATCH = 96, 8, 3, 16  # 6 batches per epoch


def make_parts(seed: int = 0, dropout: float = 0.1, sched: str | None = "step_lr"):
    """Fresh, seeded objects: (model, loss, optimizer, scheduler, train_loader, val_loader)."""
    rs = np.random.RandomState(1234)
    x = rs.randn(N + 32, FEATURES).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int64) + (x[:, 1] > 0.5).astype(np.int64)
    ag.manual_seed(seed)
    model = nn.Sequential(
        nn.Linear(FEATURES, 16), nn.ReLU(), nn.Dropout(dropout), nn.Linear(16, CLASSES)
    )
    opt = optim.Adam(model.parameters(), lr=0.01)
    if sched == "step_lr":
        scheduler = lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    elif sched == "exp":
        scheduler = lr_scheduler.ExponentialLR(opt, gamma=0.97)
    elif sched == "plateau":
        scheduler = lr_scheduler.ReduceLROnPlateau(opt, patience=0, factor=0.5)
    else:
        scheduler = None
    train = D.TensorDataset(ag.tensor(x[:N]), ag.tensor(y[:N]))
    val = D.TensorDataset(ag.tensor(x[N:]), ag.tensor(y[N:]))
    train_loader = D.DataLoader(train, batch_size=BATCH, shuffle=True, generator=D.Generator(seed))
    val_loader = D.DataLoader(val, batch_size=BATCH)
    return model, nn.CrossEntropyLoss(), opt, scheduler, train_loader, val_loader


def make_trainer(
    tmp_path=None, epochs=3, callbacks=(), sched="step_lr", reporter=None, **kw
) -> Trainer:
    model, loss, opt, scheduler, tl, vl = make_parts(sched=sched)
    run = RunDir.create(str(tmp_path), "t") if tmp_path is not None else None
    callbacks = [*callbacks, reporter] if reporter is not None else list(callbacks)
    return Trainer(
        model, loss, opt, tl, vl, scheduler=scheduler, epochs=epochs, callbacks=callbacks,
        run=run, **kw,
    )  # fmt: skip


def read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def params(model) -> dict[str, np.ndarray]:
    return {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}


def assert_same_params(a, b) -> None:
    pa, pb = params(a), params(b)
    assert pa.keys() == pb.keys()
    for k in pa:
        np.testing.assert_array_equal(pa[k], pb[k], err_msg=k)


class RaiseAt(Callback):
    """Raise KeyboardInterrupt at a given global step (on_batch_end) or epoch (on_epoch_end)."""

    def __init__(self, step=None, epoch=None, real_signal=False, val_epoch=None):
        self.step, self.epoch, self.real_signal = step, epoch, real_signal
        self.val_epoch = val_epoch

    def on_batch_end(self, trainer):
        if self.step is not None and trainer.global_step == self.step:
            if self.real_signal:
                os.kill(os.getpid(), signal.SIGINT)
            else:
                raise KeyboardInterrupt

    def on_epoch_end(self, trainer):
        if self.epoch is not None and trainer.epoch == self.epoch:
            raise KeyboardInterrupt

    def on_validation_end(self, trainer):
        if self.val_epoch is not None and trainer.epoch == self.val_epoch:
            raise KeyboardInterrupt


# ---------------------------------------------------------------------------- loop order
def hand_loop(epochs, sched_kind, grad_clip=None, interval="epoch"):
    """PyTorch's canonical loop on fresh objects; returns (model, lrs per epoch, losses)."""
    model, crit, opt, sched, tl, vl = make_parts(sched=sched_kind)
    lrs, losses = [], []
    for _ in range(epochs):
        model.train()
        tot, n = 0.0, 0
        for x, y in tl:
            opt.zero_grad()
            loss = crit(model(x), y)
            loss.backward()
            if grad_clip is not None:
                clip_grad_norm_(model.parameters(), grad_clip)
            lr_used = opt.param_groups[0]["lr"]
            opt.step()
            if interval == "step":
                sched.step()
            tot += float(loss.item()) * x.shape[0]
            n += x.shape[0]
        model.eval()
        vt, vn = 0.0, 0
        with ag.no_grad():
            for x, y in vl:
                vt += float(crit(model(x), y).item()) * x.shape[0]
                vn += x.shape[0]
        model.train()
        if sched is not None and interval == "epoch":
            if isinstance(sched, lr_scheduler.ReduceLROnPlateau):
                sched.step(vt / vn)
            else:
                sched.step()
        lrs.append(lr_used)
        losses.append((tot / n, vt / vn))
    return model, lrs, losses


@pytest.mark.parametrize(
    "sched_kind,interval", [("step_lr", "epoch"), ("exp", "step"), ("plateau", "epoch")]
)
def test_matches_hand_written_pytorch_order_loop(sched_kind, interval):
    ref, ref_lrs, ref_losses = hand_loop(3, sched_kind, interval=interval)
    tr = make_trainer(epochs=3, sched=sched_kind, scheduler_interval=interval)
    res = tr.fit()
    assert res.status == "completed"
    assert_same_params(tr.model, ref)
    assert [m["lr"] for m in tr.history] == ref_lrs
    assert [(m["train_loss"], m["val_loss"]) for m in tr.history] == ref_losses
    if sched_kind == "step_lr":
        assert ref_lrs == [0.01, 0.005, 0.0025]


def test_grad_clip_matches_clip_grad_norm_and_logs_norm():
    ref, _, _ = hand_loop(2, "step_lr", grad_clip=0.05)
    tr = make_trainer(epochs=2, grad_clip=0.05, callbacks=[GradNormLogger()])
    tr.fit()
    assert_same_params(tr.model, ref)
    unclipped = make_trainer(epochs=2)
    unclipped.fit()
    assert not np.array_equal(params(unclipped.model)["0.weight"], params(ref)["0.weight"])
    # the logged norm is the norm before clipping
    assert all(m["grad_norm"] > 0.05 for m in tr.history)
    assert all(m["grad_norm_max"] >= m["grad_norm"] for m in tr.history)


def test_metrics_keys_and_accuracy_range():
    tr = make_trainer(epochs=2, callbacks=[LRLogger()])
    tr.fit()
    m = tr.history[-1]
    for key in ("epoch", "step", "train_loss", "train_acc", "val_loss", "val_acc", "lr", "time"):
        assert key in m, key
    assert 0.0 <= m["val_acc"] <= 1.0 and m["step"] == 12
    assert tr.callbacks[0].history[0][0] == 1  # LRLogger: (global step, lrs)


def test_eval_every_skips_validation_but_validates_last_epoch():
    tr = make_trainer(epochs=3, eval_every=2)
    tr.fit()
    assert ["val_loss" in m for m in tr.history] == [False, True, True]


# ---------------------------------------------------------------------------- determinism
def test_same_seed_same_losses_bit_for_bit():
    # both built first: only Trainer(seed=...) re-seeding the global RNG (dropout) and the
    # loader's Generator at fit start makes them agree
    a, b = make_trainer(epochs=2, seed=5), make_trainer(epochs=2, seed=5)
    a.fit()
    b.fit()
    key = ("train_loss", "val_loss", "train_acc", "val_acc")
    assert [[m[k] for k in key] for m in a.history] == [[m[k] for k in key] for m in b.history]
    assert_same_params(a.model, b.model)


# ---------------------------------------------------------------------------- resume
@pytest.mark.parametrize(
    "stop",
    [{"epoch": 2}, {"step": 9}, {"step": 9, "real_signal": True}, {"val_epoch": 2}],
    ids=str,
)
def test_resume_is_bit_identical(tmp_path, stop):
    straight = make_trainer(tmp_path / "a", epochs=4)
    straight.fit()

    first = make_trainer(tmp_path / "b", epochs=4, callbacks=[RaiseAt(**stop)])
    res = first.fit()
    assert res.status == "interrupted"
    run = first.run
    assert read_json(run.file("summary.json"))["status"] == "interrupted"

    second = make_trainer(None, epochs=4, resume_from=run.path)
    assert second.run.path == run.path
    res = second.fit()
    assert res.status == "completed" and second.epochs_done == 4
    assert_same_params(second.model, straight.model)
    key = ("train_loss", "val_loss", "train_acc", "val_acc", "lr", "step")
    assert [[m[k] for k in key] for m in second.history] == [
        [m[k] for k in key] for m in straight.history
    ]
    lines = run.read_metrics()
    assert [r["epoch"] for r in lines] == [1, 2, 3, 4]
    summary = read_json(run.file("summary.json"))
    assert summary["status"] == "completed" and summary["sessions"] == 2
    # optimizer state came back too
    a, b = straight.optimizer.state_dict()["state"], second.optimizer.state_dict()["state"]
    for k in a:
        np.testing.assert_array_equal(a[k]["exp_avg"].numpy(), b[k]["exp_avg"].numpy())


def test_keyboard_interrupt_saves_last_and_reports_130(tmp_path):
    tr = make_trainer(tmp_path, epochs=3, callbacks=[RaiseAt(step=3)])
    res = tr.fit()
    assert res.status == "interrupted"
    assert "interrupted at epoch 1, step 3" in res.message
    state = ag.load(tr.run.checkpoint_path("last"))
    assert state["global_step"] == 3 and state["batch_in_epoch"] == 3 and state["epoch"] == 0
    for key in ("model", "optimizer", "scheduler", "rng", "data_generator", "callbacks", "best"):
        assert key in state
    summary = read_json(tr.run.file("summary.json"))
    assert summary["status"] == "interrupted"


# ---------------------------------------------------------------------------- NaN guard
class Explode(nn.Module):
    def __init__(self):
        super().__init__()
        self.armed = False

    def forward(self, x):
        return x + float("inf") if self.armed else x


class Arm(Callback):
    def __init__(self, layer, epoch):
        self.layer, self.epoch = layer, epoch

    def on_epoch_start(self, trainer):
        if trainer.epoch == self.epoch:
            self.layer.armed = True


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_nonfinite_loss_names_the_layer(tmp_path):
    ag.manual_seed(0)
    _, loss, _, _, tl, vl = make_parts()
    boom = Explode()
    model = nn.Sequential(nn.Linear(FEATURES, 16), boom, nn.ReLU(), nn.Linear(16, CLASSES))
    opt = optim.SGD(model.parameters(), lr=0.1)
    run = RunDir.create(str(tmp_path), "nan")
    tr = Trainer(model, loss, opt, tl, vl, epochs=3, run=run, callbacks=[Arm(boom, 2)])
    res = tr.fit()
    assert res.status == "failed"
    assert res.message.startswith("non-finite loss (nan) at epoch 2, step 7: ")
    assert "first produced by layer '1' (Explode) output" in res.message
    summary = read_json(run.file("summary.json"))
    assert summary["status"] == "failed"
    assert "layer '1' (Explode)" in summary["message"]
    assert np.isfinite(params(model)["0.weight"]).all()  # stopped before the step


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_nonfinite_weight_is_reported():
    ag.manual_seed(0)
    model, loss, opt, _, tl, _ = make_parts(dropout=0.0, sched=None)
    model[3].weight.detach()._data[0, 0] = np.inf
    res = Trainer(model, loss, opt, tl, epochs=1).fit()
    assert res.status == "failed"
    assert "layer '3' (Linear): its parameters contain inf" in res.message


# ---------------------------------------------------------------------------- callbacks
def test_early_stopping_stops_and_keeps_state(tmp_path):
    es = EarlyStopping(monitor="val_loss", patience=2, min_delta=1e9)
    tr = make_trainer(tmp_path, epochs=10, callbacks=[es])
    res = tr.fit()
    assert res.status == "completed" and tr.epochs_done == 3 and es.wait == 2
    assert "early stopping: val_loss did not improve for 2 epochs" in res.message
    summary = read_json(tr.run.file("summary.json"))
    assert summary["stopped_early"] and summary["epochs_completed"] == 3
    saved = ag.load(tr.run.checkpoint_path("last"))["callbacks"]["EarlyStopping"]
    assert saved["wait"] == 2


def test_checkpoint_best_follows_monitor(tmp_path):
    tr = make_trainer(tmp_path, epochs=3)
    res = tr.fit()
    best = ag.load(tr.run.checkpoint_path("best"))
    assert best["epoch"] == res.best["epoch"]
    vals = [m["val_loss"] for m in tr.history]
    assert res.best["value"] == min(vals) and res.best["epoch"] == vals.index(min(vals)) + 1


def test_module_hooks_and_user_callback_order():
    calls = []

    class Spy(Callback):
        def on_fit_start(self, t):
            calls.append("fit_start")

        def on_epoch_start(self, t):
            calls.append("epoch_start")

        def on_validation_end(self, t):
            calls.append("validation_end")

        def on_epoch_end(self, t):
            calls.append("epoch_end")

        def on_fit_end(self, t):
            calls.append("fit_end")

    seen = []
    hooks = ModuleHooks([("1", "forward", lambda m, i, o: seen.append(tuple(o.shape)))])
    tr = make_trainer(epochs=1, callbacks=[Spy(), hooks])
    tr.fit()
    assert calls == ["fit_start", "epoch_start", "validation_end", "epoch_end", "fit_end"]
    assert len(seen) == 6 + 2 and seen[0] == (BATCH, 16)  # 6 train + 2 val batches
    assert not tr.model[1]._forward_hooks  # removed after the fit


def test_unexpected_error_is_recorded_then_raised(tmp_path):
    class Bad(Callback):
        def on_batch_end(self, t):
            raise ValueError("boom")

    tr = make_trainer(tmp_path, epochs=1, callbacks=[Bad()])
    with pytest.raises(ValueError, match="boom"):
        tr.fit()
    summary = read_json(tr.run.file("summary.json"))
    assert summary["status"] == "failed" and "ValueError: boom" in summary["message"]
    assert os.path.isfile(tr.run.file("traceback.txt"))


# ---------------------------------------------------------------------------- reporters
def test_plain_reporter_has_no_control_characters(tmp_path):
    buf = io.StringIO()
    tr = make_trainer(tmp_path, epochs=2, reporter=PlainReporter(buf))
    tr.fit()
    text = buf.getvalue()
    assert re.search(r"[\x00-\x09\x0b-\x1f\x7f]", text) is None
    lines = text.splitlines()
    assert sum(line.startswith("epoch ") for line in lines) == 2
    assert any(line.startswith("run folder: ") for line in lines)
    assert isinstance(make_reporter("auto", io.StringIO()), PlainReporter)


def test_rich_reporter_renders(tmp_path):
    from rich.console import Console

    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=100)
    rep = make_reporter("bar", console)
    make_trainer(tmp_path, epochs=2, reporter=rep).fit()
    out = buf.getvalue()
    assert "summary" in out and "val_loss" in out and "best epoch" in out


def test_make_reporter_rejects_unknown_mode():
    with pytest.raises(ValueError, match="progress must be"):
        make_reporter("fancy")


# ---------------------------------------------------------------------------- run folders
def test_two_runs_in_the_same_second_get_different_folders(tmp_path, monkeypatch):
    now = 1_700_000_000.0
    a = RunDir.create(str(tmp_path), "same", now=now)
    b = RunDir.create(str(tmp_path), "same", now=now)
    assert a.path != b.path and os.path.isdir(a.path) and os.path.isdir(b.path)
    # a colliding random id is retried, never reused
    ids = iter(["aaaaaa", "aaaaaa", "bbbbbb"])
    monkeypatch.setattr(run_dir_mod.secrets, "token_hex", lambda n: next(ids))
    c = RunDir.create(str(tmp_path), "same", now=now)
    d = RunDir.create(str(tmp_path), "same", now=now)
    assert c.path.endswith("-aaaaaa") and d.path.endswith("-bbbbbb")
    assert re.fullmatch(r"same-\d{8}-\d{6}-[0-9a-f]{6}", a.name)


def test_model_text_fallback_without_sample():
    model = make_parts()[0]
    text = model_text(model)
    assert "Linear(in_features=8" in text and "parameters: 195" in text


def test_run_folder_lock_blocks_a_second_writer(tmp_path):
    run = RunDir.create(str(tmp_path), "locked")
    run.lock()
    other = RunDir(run.path)
    try:
        import fcntl  # noqa: F401
    except ImportError:
        pytest.skip("no flock here")
    with pytest.raises(RuntimeError, match="in use by another process"):
        other.lock()
    run.unlock()
    other.lock()
    other.unlock()
