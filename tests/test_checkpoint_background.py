"""Checkpoints written off the training thread: the snapshot is the state of its epoch's end,
one write at a time, on disk when ``fit`` returns, a failed write fails the run, and a run
stopped mid-way (signal, non-finite guard, error) leaves a loadable ``checkpoints/last``."""

from __future__ import annotations

import errno
import os
import threading
import time
import types

import numpy as np
import pytest

import autogradcli as ag
from autogradcli import data as D
from autogradcli import nn, optim
from autogradcli.serialization.archive import prepare_archive, write_prepared
from autogradcli.trainer import Callback, RunDir, Trainer
from autogradcli.trainer import state as state_mod
from autogradcli.trainer.checkpoint_writer import CheckpointWriter
from autogradcli.trainer.run_errors import RunFolderError

STEPS = 4  # batches per epoch


def make_trainer(tmp_path, epochs: int = 3, callbacks=(), model=None) -> Trainer:
    ag.manual_seed(0)
    x = ag.tensor(np.random.RandomState(0).randn(8 * STEPS, 3).astype(np.float32))
    y = ag.tensor(np.arange(8 * STEPS) % 2)
    model = model if model is not None else nn.Linear(3, 2)
    return Trainer(
        model, nn.CrossEntropyLoss(), optim.Adam(model.parameters(), lr=0.1),
        D.DataLoader(D.TensorDataset(x, y), batch_size=8), epochs=epochs,
        callbacks=list(callbacks),
        run=RunDir.create(str(tmp_path), "bg") if tmp_path is not None else None,
    )  # fmt: skip


def _arrays(tree) -> list[np.ndarray]:
    """Every array of a state tree, copied, in a fixed order."""
    if isinstance(tree, dict):
        return [a for k in sorted(tree, key=str) for a in _arrays(tree[k])]
    if isinstance(tree, (list, tuple)):
        return [a for v in tree for a in _arrays(v)]
    if isinstance(tree, ag.Tensor):
        return [tree.numpy().copy()]
    return [np.array(tree, copy=True)] if isinstance(tree, np.ndarray) else []


@pytest.fixture(autouse=True)
def every_checkpoint_in_the_background(monkeypatch):
    """These small states on a busy CPU would be written at once (``background=None``)."""
    from autogradcli.trainer import Checkpoint, callbacks

    monkeypatch.setattr(Checkpoint, "background_min_bytes", 0)
    monkeypatch.setattr(callbacks, "core_free", lambda: True)


@pytest.fixture
def slow_writes(monkeypatch):
    """``TrainingState.write`` taking 50 ms longer, on whatever thread runs it (recorded)."""
    threads: list[str] = []
    real = state_mod.TrainingState.write

    def write(state, path, sync_folder=True):
        threads.append(threading.current_thread().name)
        time.sleep(0.05)
        real(state, path, sync_folder)

    monkeypatch.setattr(state_mod.TrainingState, "write", staticmethod(write))
    return threads


def _written(prepared, tmp_path):
    path = str(tmp_path / "snapshot")
    state_mod.TrainingState.write(prepared, path)
    return ag.load(path)


def test_snapshot_is_not_changed_by_later_optimizer_steps(tmp_path):
    tr = make_trainer(tmp_path)
    x, y = next(iter(tr.train_loader))
    tr.train_step((x, y))  # Adam's moments exist
    snap = tr.state.snapshot()
    before = _arrays(tr.state.state_dict())
    assert len(before) == 2 + 2 * 3  # weight, bias; step, exp_avg, exp_avg_sq each
    tr.train_step((x, y))
    after = _arrays(tr.state.state_dict())
    assert not all(np.array_equal(a, b) for a, b in zip(before, after))  # training moved on
    got = _arrays(_written(snap, tmp_path))
    assert len(got) == len(before)
    for a, b in zip(got, before):
        assert a.dtype == b.dtype and np.array_equal(a, b)


def test_prepared_archive_copies_a_shared_tensor_once(tmp_path):
    import io

    w = ag.ones(3)
    obj = {"a": w, "b": [w, (w, 1.5)], "c": np.zeros(2), "d": "text"}
    prepared = prepare_archive(obj)
    assert len(prepared[1]) == 2  # w once (tied), c
    w.add_(1.0)
    buf = io.BytesIO()
    write_prepared(prepared, buf)
    buf.seek(0)
    back = ag.load(buf)
    assert back["a"] is back["b"][0] is back["b"][1][0]  # still tied
    assert back["a"].tolist() == [1.0, 1.0, 1.0] and back["d"] == "text"
    again = io.BytesIO()
    ag.save(obj, again)  # the same archive as save writes, for the state as it is now
    write_prepared(prepare_archive(obj), buf := io.BytesIO())
    assert buf.getvalue() == again.getvalue()


def test_writer_runs_one_write_at_a_time_and_raises_its_error_once():
    writer = CheckpointWriter()
    running, most, order = [0], [0], []

    def job(name: str, pause: float):
        def run():
            running[0] += 1
            most[0] = max(most[0], running[0])
            time.sleep(pause)
            order.append(name)
            running[0] -= 1

        return run

    writer.submit(job("a", 0.03))
    writer.submit(job("b", 0.0))  # waits for a
    writer.close()
    assert order == ["a", "b"] and most[0] == 1 and not writer.busy

    def fail():
        raise OSError(errno.ENOSPC, "No space left on device")

    writer.submit(fail)
    with pytest.raises(OSError, match="No space"):
        writer.submit(job("c", 0.0))  # the previous write's error; c is not started
    writer.close()  # raised once: nothing left
    assert order == ["a", "b"]
    writer.submit(fail)
    assert writer.settle() == "; [Errno 28] No space left on device"  # a run ending otherwise
    assert writer.settle() == "" and not writer.busy


def test_checkpoint_written_off_the_training_thread_is_complete_when_fit_returns(
    tmp_path, slow_writes
):
    tr = make_trainer(tmp_path, epochs=2)
    assert tr.fit().status == "completed"
    assert slow_writes and all(name.startswith("agrad-checkpoint") for name in slow_writes)
    last = ag.load(tr.run.checkpoint_path("last"))
    assert last["epoch"] == 2 and last["global_step"] == 2 * STEPS
    for key, value in tr.model.state_dict().items():
        np.testing.assert_array_equal(last["model"][key].numpy(), value.numpy())
    best = ag.load(tr.run.checkpoint_path("best"))
    assert best["epoch"] == tr.best["epoch"]
    assert not [t for t in threading.enumerate() if t.name.startswith("agrad-checkpoint")]


@pytest.mark.parametrize("failing_epoch", [2, 3])  # a middle epoch's write, the last one's
def test_a_failed_background_write_fails_the_run_naming_the_file(
    tmp_path, monkeypatch, failing_epoch
):
    real_write = state_mod.write_prepared
    calls = []

    def write_prepared(prepared, out):
        calls.append(1)
        if len(calls) == failing_epoch:  # epoch n's checkpoint is the n-th write (no best)
            raise OSError(errno.ENOSPC, "No space left on device")
        real_write(prepared, out)

    monkeypatch.setattr(state_mod, "write_prepared", write_prepared)
    tr = make_trainer(tmp_path, epochs=3)
    res = tr.fit(raise_errors=False)
    assert res.status == "failed"
    assert "cannot write" in res.message and "checkpoints/last" in res.message
    assert "the disk is full" in res.message
    last = ag.load(tr.run.checkpoint_path("last"))  # the write before it, intact
    assert last["epoch"] == failing_epoch - 1
    calls.clear()
    with pytest.raises(RunFolderError, match="cannot write"):
        make_trainer(tmp_path / "again", epochs=3).fit()


class Stop(Callback):
    """At global step ``at``: a Ctrl-C (deferred, as the signal handler does), a NaN loss
    (the non-finite guard) or an error."""

    def __init__(self, at: int, how: str) -> None:
        self.at, self.how = at, how

    def on_batch_end(self, trainer):
        if trainer.global_step != self.at:
            return
        if self.how == "signal":
            trainer.interrupt.requested = True
        elif self.how == "error":
            raise RuntimeError("user callback failed")
        else:
            with ag.no_grad():
                trainer.model.weight.fill_(float("nan"))


@pytest.mark.parametrize("how", ["signal", "nonfinite", "error"])
def test_a_stop_mid_run_leaves_the_last_checkpoint_loadable(tmp_path, slow_writes, how):
    # epoch 1's write (50 ms) is still in flight at step STEPS + 1 when the run stops
    tr = make_trainer(tmp_path, epochs=3, callbacks=[Stop(STEPS + 1, how)])
    res = tr.fit(raise_errors=False)
    assert res.status == ("interrupted" if how == "signal" else "failed"), res.message
    last = ag.load(tr.run.checkpoint_path("last"))
    if how == "signal":  # saved at the stop, after epoch 1's write landed (not overwritten)
        assert "saved checkpoints/last" in res.message
        assert last["global_step"] == STEPS + 1 and last["batch_in_epoch"] == 1
        for key, value in tr.model.state_dict().items():
            np.testing.assert_array_equal(last["model"][key].numpy(), value.numpy())
    else:
        assert last["global_step"] == STEPS and last["epoch"] == 1
    resumed = make_trainer(None, epochs=3)
    resumed.load_checkpoint(tr.run.checkpoint_path("last"))
    assert resumed.global_step == last["global_step"]


def test_the_summary_never_runs_ahead_of_the_last_checkpoint(tmp_path, slow_writes, monkeypatch):
    """Each epoch's metrics line and summary are written on the writer thread after that
    epoch's (slow) checkpoint: whenever summary.json is written, ``checkpoints/last`` on disk
    holds at least the epochs it reports."""
    seen = []
    real = RunDir.write_summary

    def write_summary(self, summary, durable=True):
        last = ag.load(self.checkpoint_path("last")) if os.path.exists(
            self.checkpoint_path("last")) else {"epoch": 0}  # fmt: skip
        seen.append((summary["epochs_completed"], last["epoch"], threading.current_thread().name))
        real(self, summary, durable)

    monkeypatch.setattr(RunDir, "write_summary", write_summary)
    tr = make_trainer(tmp_path, epochs=3)
    assert tr.fit().status == "completed"
    per_epoch = [s for s in seen if s[2].startswith("agrad-checkpoint")]
    assert [s[0] for s in per_epoch] == [1, 2, 3]
    assert all(reported <= on_disk for reported, on_disk, _ in seen)
    assert [r["epoch"] for r in tr.run.read_metrics()] == [1, 2, 3]


@pytest.mark.parametrize(
    ("threshold", "free", "background", "thread"),
    [
        (1000, True, None, "agrad-checkpoint"),  # at the threshold, a core free
        (1001, True, None, "Main"),  # one byte under it
        (1000, False, None, "Main"),  # big enough, but the steps use every core
        (1001, False, True, "agrad-checkpoint"),  # asked for
        (1000, True, False, "Main"),  # refused
    ],
)
def test_when_a_checkpoint_is_written_in_the_background(
    tmp_path, slow_writes, monkeypatch, threshold, free, background, thread
):
    from autogradcli.trainer import Checkpoint, callbacks

    monkeypatch.setattr(callbacks, "prepared_nbytes", lambda prepared: 1000)
    monkeypatch.setattr(Checkpoint, "background_min_bytes", threshold)
    monkeypatch.setattr(Checkpoint, "background_wait_s", 10.0)  # the disk never seen slow
    monkeypatch.setattr(callbacks, "core_free", lambda: free)
    tr = make_trainer(tmp_path, epochs=1, callbacks=[Checkpoint(background=background)])
    assert tr.fit().status == "completed"
    assert slow_writes and all(name.startswith(thread) for name in slow_writes)
    assert ag.load(tr.run.checkpoint_path("last"))["epoch"] == 1


def test_core_free_compares_the_compute_threads_with_the_usable_cores(monkeypatch):
    from autogradcli.backend import threads

    monkeypatch.undo()  # the real core_free, not the autouse fixture's
    from autogradcli.trainer.callbacks import core_free

    monkeypatch.setattr(threads, "usable_cores", lambda: 2)
    monkeypatch.setattr(threads, "get_num_threads", lambda: 1)
    assert core_free()
    monkeypatch.setattr(threads, "get_num_threads", lambda: 2)
    assert not core_free()


def test_a_write_in_flight_holds_its_epochs_weights_while_training_goes_on(tmp_path, monkeypatch):
    """Epoch 1's write is held until epoch 2 has trained; the file still has epoch 1's end."""
    import shutil

    at_end, copies, trained = [], [], threading.Event()
    real = state_mod.TrainingState.write

    def write(state, path, sync_folder=True):
        if not copies:
            assert trained.wait(5)  # epoch 2's steps have changed the parameters
        real(state, path, sync_folder)
        copies.append(shutil.copy(path, f"{path}.{len(copies) + 1}"))

    class Record(Callback):
        def on_batch_end(self, trainer):
            if trainer.epoch == 2:
                trained.set()

        def on_epoch_end(self, trainer):
            at_end.append({k: v.numpy().copy() for k, v in trainer.model.state_dict().items()})

    monkeypatch.setattr(state_mod.TrainingState, "write", staticmethod(write))
    tr = make_trainer(tmp_path, epochs=2, callbacks=[Record()])
    assert tr.fit().status == "completed"
    assert len(copies) == 2 and not np.array_equal(at_end[0]["weight"], at_end[1]["weight"])
    for epoch, copy in enumerate(copies):
        saved = ag.load(copy)
        assert saved["epoch"] == epoch + 1
        for key, value in at_end[epoch].items():
            np.testing.assert_array_equal(saved["model"][key].numpy(), value)


def test_a_config_asks_for_background_checkpoints(tmp_path, slow_writes):
    from autogradcli.trainer import train_from_config

    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        "name: bg\nseed: 0\n"
        "data: {dataset: spirals, n_per_class: 8, classes: 2, val_split: 0.25}\n"
        "model:\n  - {type: Linear, in_features: auto, out_features: 2}\n"
        "loss: CrossEntropyLoss\noptimizer: {type: SGD, lr: 0.1}\n"
        "train: {epochs: 2, batch_size: 4}\n"
        "hooks:\n  - {type: Checkpoint, background: true}\n"
    )
    result = train_from_config(str(cfg), progress="none", runs_dir=str(tmp_path / "runs"))
    assert result.status == "completed", result.message
    assert slow_writes and all(name.startswith("agrad-checkpoint") for name in slow_writes)
    assert ag.load(os.path.join(result.run_dir, "checkpoints", "last"))["epoch"] == 2


@pytest.fixture
def disk_clock(monkeypatch, slow_writes):
    """The checkpoint callback's clocks: each write advances the wall clock by exactly 50 ms
    and the CPU clock not at all (a slow disk), whatever the machine's load adds."""
    from autogradcli.trainer import callbacks

    clock = types.SimpleNamespace(wall=0.0)
    real = state_mod.TrainingState.write

    def write(state, path, sync_folder=True):
        clock.wall += 0.05
        real(state, path, sync_folder)

    monkeypatch.setattr(state_mod.TrainingState, "write", staticmethod(write))
    fake_time = types.SimpleNamespace(perf_counter=lambda: clock.wall, thread_time=lambda: 0.0)
    monkeypatch.setattr(callbacks, "time", fake_time)
    return slow_writes


@pytest.mark.parametrize(
    ("wait_s", "threads"),
    [(0.049, ["Main", "agrad", "agrad", "Main", "agrad"]), (0.051, ["Main"] * 5)],
)
def test_after_a_write_that_waited_on_the_disk_the_next_goes_to_the_background(
    tmp_path, disk_clock, monkeypatch, wait_s, threads
):
    """Each write waits 50 ms (a slow disk: wall time, no CPU): with ``background_wait_s``
    just under that, the epochs after the first write in the background, measured at once
    again after ``background_probe_every`` (2 here) of them; just over it, all at once."""
    from autogradcli.trainer import Checkpoint

    monkeypatch.setattr(Checkpoint, "background_min_bytes", 1 << 62)
    monkeypatch.setattr(Checkpoint, "background_wait_s", wait_s)
    monkeypatch.setattr(Checkpoint, "background_probe_every", 2)
    tr = make_trainer(tmp_path, epochs=5, callbacks=[Checkpoint()])
    assert tr.fit().status == "completed"
    assert [name.split("-")[0].split("Thread")[0] for name in disk_clock] == threads
