"""``Trainer``: the training loop, in PyTorch's order, with checkpoints and exact resume.

One step: ``optimizer.zero_grad()``, forward, loss, ``backward()``, gradient clipping,
``optimizer.step()``, then ``scheduler.step()`` when the scheduler steps per batch. After the
epoch: validation (``model.eval()`` under ``no_grad``), the per-epoch ``scheduler.step()``
(``ReduceLROnPlateau`` gets the monitored metric), then the callbacks.

Everything that decides the numbers (weights, optimizer and scheduler state, the global RNG, the
data-order generator, counters, callback state, the partial sums of an unfinished epoch) goes in
the checkpoint, so a resumed run ends with the same weights, bit for bit on the CPU, as one that
never stopped, whether it stopped between epochs or in the middle of one.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import math
import os
import platform
import signal
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._version import __version__
from ..autograd.grad_mode import no_grad
from ..data.dataloader import default_collate
from ..data.generator import Generator
from ..nn.utils.clip_grad import clip_grad_norm_, get_total_norm
from ..optim.lr_scheduler import ReduceLROnPlateau
from ..serialization import load, save
from ..tensor.random import get_rng_state, manual_seed, set_rng_state
from ..tensor.tensor import Tensor
from .callbacks import (
    Checkpoint,
    NonFiniteGuard,
    NonFiniteLossError,
    find_nonfinite_layer,
)
from .plot import loss_svg
from .progress import NullReporter, Reporter
from .run_dir import LOSS_SVG, MODEL_TXT, RunDir, jsonable

__all__ = ["CHECKPOINT_FORMAT", "RunResult", "Trainer", "model_text"]

CHECKPOINT_FORMAT = "autogradcli.trainer/1"
EXIT_OK, EXIT_FAILED, EXIT_INTERRUPTED = 0, 1, 130
MODULE_HOOK_KINDS = ("forward_pre", "forward", "full_backward")


@dataclass
class RunResult:
    """The outcome of a run: ``status`` is ``completed`` | ``failed`` | ``interrupted``;
    ``exit_code`` 0 | 1 | 130 (what the process should exit with); ``best`` is
    ``{"epoch", "monitor", "mode", "value", "metrics"}`` (or None), ``final`` the last epoch's
    metrics (or None); ``message`` says why a run stopped early or failed; ``traceback`` is set
    for unexpected errors."""

    run_dir: str | None
    status: str
    exit_code: int
    best: dict[str, Any] | None
    final: dict[str, Any] | None
    message: str = ""
    traceback: str | None = None
    history: list[dict[str, Any]] = field(default_factory=list, repr=False)


def _now() -> str:
    return _dt.datetime.now().astimezone().isoformat(timespec="seconds")


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version(), "numpy": np.__version__, "autogradcli": __version__}
    try:  # only when cupy is already in use; never import it here
        import sys

        cupy = sys.modules.get("cupy")
        if cupy is not None:
            out["cupy"] = cupy.__version__
    except Exception:
        pass
    return out


def _plain_state(state: dict[str, Any]) -> dict[str, Any]:
    """A scheduler's state_dict without what cannot be saved (lambdas: they come from code)."""
    return {k: v for k, v in state.items() if not callable(v) or isinstance(v, Tensor)}


def model_text(model: Any, sample_input: Any = None) -> str:
    """The model table: ``nn.utils.summary.summarize(model, sample).to_text()`` when that module
    exists and works, else ``repr(model)`` and parameter counts."""
    if sample_input is not None:
        try:
            from ..nn.utils import summary as _summary

            was_training = model.training
            rng = get_rng_state()
            try:
                with no_grad():
                    text = _summary.summarize(model, sample_input).to_text()
            finally:
                set_rng_state(rng)
                model.train(was_training)
            if text:
                return text if text.endswith("\n") else text + "\n"
        except Exception:
            pass
    params = list(model.parameters())
    total = sum(int(p.numel()) for p in params)
    trainable = sum(int(p.numel()) for p in params if p.requires_grad)
    return (
        f"{model!r}\n\n"
        f"parameters: {total:,}\ntrainable: {trainable:,}\nnon-trainable: {total - trainable:,}\n"
    )


class Trainer:
    """Train ``model`` on ``train_loader``.

    ``callbacks``: Callback objects (see ``trainer.callbacks``); ``Checkpoint`` and
    ``NonFiniteGuard`` are added when absent (``default_callbacks=False`` to not). ``module_hooks``:
    ``(layer name, "forward_pre"|"forward"|"full_backward", fn)`` installed on
    ``model.named_modules()[layer]`` for the fit. ``task`` is ``"classification"`` (adds
    ``train_acc``/``val_acc``) or ``"regression"``; ``None`` guesses from the loss.
    ``run``: a ``RunDir`` (or folder path) for the files; without it nothing is written.
    ``seed``: when given, a fresh fit seeds the global RNG and the train loader's ``Generator``.
    ``monitor``/``mode``: the metric for ``best`` (default: the Checkpoint callback's, else
    ``val_loss``/``min``; ``val_*`` falls back to ``train_*`` without validation data).
    ``resume_from``: a run folder (continues it, writing there) or a checkpoint file to load
    before ``fit()``; the objects must be built as for the first session.
    """

    def __init__(
        self,
        model: Any,
        loss_fn: Callable[[Any, Any], Tensor],
        optimizer: Any,
        train_loader: Any,
        val_loader: Any = None,
        *,
        scheduler: Any = None,
        scheduler_interval: str = "epoch",
        scheduler_monitor: str | None = None,
        callbacks: Sequence[Any] = (),
        epochs: int = 10,
        eval_every: int = 1,
        grad_clip: float | None = None,
        task: str | None = None,
        device: str | None = None,
        run: RunDir | str | None = None,
        reporter: Reporter | None = None,
        seed: int | None = None,
        monitor: str | None = None,
        mode: str | None = None,
        module_hooks: Sequence[tuple[str, str, Callable]] = (),
        default_callbacks: bool = True,
        name: str | None = None,
        summary_extra: dict[str, Any] | None = None,
        resume_from: str | None = None,
    ) -> None:
        if scheduler_interval not in ("epoch", "step"):
            raise ValueError(
                f"scheduler_interval must be 'epoch' or 'step', got {scheduler_interval!r}"
            )
        if int(epochs) < 0:
            raise ValueError(f"epochs must be >= 0, got {epochs}")
        if int(eval_every) < 1:
            raise ValueError(f"eval_every must be >= 1, got {eval_every}")
        self.model, self.loss_fn, self.optimizer = model, loss_fn, optimizer
        self.train_loader, self.val_loader = train_loader, val_loader
        self.scheduler, self.scheduler_interval = scheduler, scheduler_interval
        self.scheduler_monitor = scheduler_monitor
        self.epochs, self.eval_every = int(epochs), int(eval_every)
        self.grad_clip = None if grad_clip is None else float(grad_clip)
        self.task = task if task is not None else _guess_task(loss_fn)
        self.device = str(device) if device is not None else _model_device(model)
        self._move_batches = device is not None and self.device != "cpu"
        self.run = RunDir(run) if isinstance(run, str) else run
        self.reporter = reporter if reporter is not None else NullReporter()
        self.seed = seed
        self.name = name or type(model).__name__
        self.summary_extra = dict(summary_extra or {})
        cbs = list(callbacks)
        if default_callbacks:
            if not any(isinstance(c, Checkpoint) for c in cbs):
                cbs.append(Checkpoint())
            if not any(isinstance(c, NonFiniteGuard) for c in cbs):
                cbs.append(NonFiniteGuard())
        # Checkpoint instances run last in every hook, so the state they save is complete
        self.callbacks = [c for c in cbs if not isinstance(c, Checkpoint)] + [
            c for c in cbs if isinstance(c, Checkpoint)
        ]
        ckpt = next((c for c in self.callbacks if isinstance(c, Checkpoint)), None)
        self.monitor = monitor or (ckpt.monitor if ckpt else "val_loss")
        self.mode = mode or (ckpt.mode if ckpt else "min")
        self.module_hooks = list(module_hooks)

        # loop state
        self.epoch = 0  # the epoch in progress (1-based), or the last one finished
        self.epochs_done = 0
        self.batch_in_epoch = 0
        self.global_step = 0
        self.batches_per_epoch = _safe_len(train_loader)
        self.metrics: dict[str, Any] = {}
        self.history: list[dict[str, Any]] = []
        self.best: dict[str, Any] = {
            "epoch": None,
            "monitor": self.monitor,
            "mode": self.mode,
            "value": None,
            "metrics": {},
        }
        self.batch_loss: float | None = None
        self.last_grad_norm: Tensor | None = None
        self.should_stop = False
        self.stop_reason = ""
        self.status = "created"
        self.exit_code: int | None = None
        self.message = ""
        self.guard_nonfinite = False
        self._grad_norm_type: float | None = None
        self._acc = _zero_acc()
        self._epoch_start: dict[str, Any] | None = None
        self._resume: dict[str, Any] | None = None
        self._written = 0  # history rows already in metrics.jsonl
        self._interrupt_requested = False
        self._critical = False
        self._wall_before = 0.0
        self._t_start = 0.0
        self._started_at = _now()
        self._sessions = 0
        self._hook_handles: list[Any] = []
        if resume_from is not None:
            path = str(resume_from)
            if os.path.isdir(path):
                if self.run is None:
                    self.run = RunDir(path)
                path = RunDir(path).checkpoint_path("last")
            self.load_checkpoint(path)

    # ------------------------------------------------------------------ small API for callbacks
    def request_stop(self, reason: str = "") -> None:
        """Finish after this epoch (status stays ``completed``)."""
        self.should_stop = True
        if reason and not self.stop_reason:
            self.stop_reason = reason

    def track_grad_norm(self, norm_type: float = 2.0) -> None:
        """Compute ``last_grad_norm`` every step (clipping computes it anyway)."""
        self._grad_norm_type = float(norm_type)

    def current_lrs(self) -> list[float]:
        return [float(g["lr"]) for g in self.optimizer.param_groups]

    def metric(self, name: str) -> Any:
        """This epoch's ``name``; ``val_*`` reads ``train_*`` when there is no validation set."""
        value = self.metrics.get(name)
        if value is None and self.val_loader is None and name.startswith("val_"):
            value = self.metrics.get("train_" + name[4:])
        return value

    # ------------------------------------------------------------------ checkpoints
    def _callback_key(self, index: int) -> str:
        cb = self.callbacks[index]
        name = type(cb).__name__
        same = [c for c in self.callbacks[:index] if type(c).__name__ == name]
        return f"{name}#{len(same)}" if same else name

    def _data_generator(self) -> Generator | None:
        gen = getattr(self.train_loader, "generator", None)
        return gen if isinstance(gen, Generator) else None

    def _rng_now(self) -> dict[str, Any]:
        gen = self._data_generator()
        return {"rng": get_rng_state(), "data_generator": gen.get_state() if gen else None}

    def checkpoint_state(self) -> dict[str, Any]:
        """Everything needed to continue this run exactly (see ``load_checkpoint_state``)."""
        partial = self.batch_in_epoch > 0
        sched = self.scheduler.state_dict() if self.scheduler is not None else None
        cb_state = {}
        for i, cb in enumerate(self.callbacks):
            get = getattr(cb, "state_dict", None)
            if callable(get):
                cb_state[self._callback_key(i)] = get()
        return {
            "format": CHECKPOINT_FORMAT,
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "scheduler": _plain_state(sched) if sched is not None else None,
            "epoch": self.epochs_done,
            "batch_in_epoch": self.batch_in_epoch,
            "global_step": self.global_step,
            "epochs": self.epochs,
            **self._rng_now(),
            "epoch_start": self._epoch_start if partial else None,
            "partial": dict(self._acc) if partial else None,
            "best": self.best,
            "history": self.history,
            "callbacks": cb_state,
            "should_stop": self.should_stop,
            "stop_reason": self.stop_reason,
            "wall_time": self._wall_before + (time.perf_counter() - self._t_start),
            "sessions": self._sessions,
            "started_at": self._started_at,
        }

    def save_checkpoint(self, name: str = "last") -> str | None:
        """Save ``checkpoint_state()`` to ``checkpoints/<name>`` of the run folder (atomic)."""
        if self.run is None:
            return None
        path = self.run.checkpoint_path(name)
        save(self.checkpoint_state(), path)
        return path

    def load_checkpoint(self, path: str) -> None:
        self.load_checkpoint_state(load(path))

    def load_checkpoint_state(self, state: dict[str, Any]) -> None:
        """Restore a ``checkpoint_state()``; the next ``fit()`` continues from there."""
        if state.get("format") != CHECKPOINT_FORMAT:
            raise ValueError(
                f"not a trainer checkpoint (format {state.get('format')!r}, "
                f"expected {CHECKPOINT_FORMAT!r})"
            )
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        if self.scheduler is not None and state.get("scheduler") is not None:
            self.scheduler.load_state_dict(state["scheduler"])
        self.epochs_done = self.epoch = int(state["epoch"])
        self.batch_in_epoch = int(state["batch_in_epoch"])
        self.global_step = int(state["global_step"])
        self.best = dict(state["best"])
        self.history = [dict(r) for r in state["history"]]
        self.should_stop = bool(state.get("should_stop", False))
        self.stop_reason = state.get("stop_reason", "")
        self._wall_before = float(state.get("wall_time", 0.0))
        self._sessions = int(state.get("sessions", 0))
        self._started_at = state.get("started_at", self._started_at)
        if self.batch_in_epoch:
            self._acc = dict(state["partial"])
            self._epoch_start = state["epoch_start"]
        saved = state.get("callbacks", {})
        for i, cb in enumerate(self.callbacks):
            key = self._callback_key(i)
            if key in saved and callable(getattr(cb, "load_state_dict", None)):
                cb.load_state_dict(saved[key])
        self._resume = {"rng": state["rng"], "data_generator": state["data_generator"]}
        self._written = len(self.history)

    # ------------------------------------------------------------------ the loop
    def fit(self, *, raise_errors: bool = True) -> RunResult:
        """Train until ``epochs`` (or a stop request). KeyboardInterrupt and a non-finite loss
        end the run with a result (exit codes 130 and 1), not an exception; any other error is
        recorded (summary.json, status failed) and re-raised, or returned as a failed result with
        ``raise_errors=False``."""
        self._t_start = time.perf_counter()
        self._sessions += 1
        self._interrupt_requested = False
        resumed = self._resume is not None
        if not resumed and self.seed is not None:
            manual_seed(self.seed)
            gen = self._data_generator()
            if gen is not None:
                gen.manual_seed(self.seed)
        self.status, self.exit_code, self.message = "running", None, ""
        error: BaseException | None = None
        tb_text: str | None = None
        if self.run is not None:
            self.run.lock()
        restore_sigint = self._install_sigint()
        try:
            if self.device != "cpu" and self._move_batches:
                self.model.to(self.device)
            if self.run is not None:
                self._prepare_run_files(resumed)
            self._install_module_hooks()
            for cb in self._all_callbacks():
                _call(cb, "on_fit_start", self)
            self._write_summary()
            while self.epochs_done < self.epochs and not self.should_stop:
                self._run_epoch()
            self.status, self.exit_code = "completed", EXIT_OK
            self.message = self.stop_reason
        except KeyboardInterrupt as err:
            self.status, self.exit_code = "interrupted", EXIT_INTERRUPTED
            where = f"epoch {self.epochs_done + (1 if self.batch_in_epoch else 0)}"
            self.message = f"interrupted at {where}, step {self.global_step}"
            self._notify_exception(err)
            if self.run is not None:
                if self._critical:
                    self.message += " (inside optimizer.step: checkpoints/last not updated)"
                else:
                    try:
                        self.save_checkpoint("last")
                        self.message += "; saved checkpoints/last"
                    except Exception as save_err:
                        self.message += f"; could not save checkpoints/last: {save_err}"
        except NonFiniteLossError as err:
            self.status, self.exit_code, self.message = "failed", EXIT_FAILED, str(err)
            self._notify_exception(err)
        except Exception as err:
            self.status, self.exit_code = "failed", EXIT_FAILED
            self.message = f"{type(err).__name__}: {err}"
            tb_text = traceback.format_exc()
            error = err
            self._notify_exception(err)
        finally:
            restore_sigint()
            self._remove_module_hooks()
            try:
                self._finish(tb_text)
            finally:
                if self.run is not None:
                    self.run.unlock()
        result = self.result(tb_text)
        if error is not None and raise_errors:
            raise error
        return result

    def result(self, tb_text: str | None = None) -> RunResult:
        return RunResult(
            run_dir=self.run.path if self.run is not None else None,
            status=self.status,
            exit_code=self.exit_code if self.exit_code is not None else EXIT_FAILED,
            best=self.best if self.best.get("epoch") is not None else None,
            final=self.history[-1] if self.history else None,
            message=self.message,
            traceback=tb_text,
            history=self.history,
        )

    def _all_callbacks(self) -> list[Any]:
        return self.callbacks + [self.reporter]

    def _notify_exception(self, err: BaseException) -> None:
        for cb in self._all_callbacks():
            with contextlib.suppress(Exception):
                _call(cb, "on_exception", self, err)

    def _finish(self, tb_text: str | None) -> None:
        for cb in self._all_callbacks():
            try:
                _call(cb, "on_fit_end", self)
            except Exception as err:
                if self.status == "completed":
                    self.status, self.exit_code = "failed", EXIT_FAILED
                    self.message = f"{type(cb).__name__}.on_fit_end: {type(err).__name__}: {err}"
        if self.run is not None:
            with contextlib.suppress(Exception):
                self._sync_metric_files()
            if tb_text:
                with contextlib.suppress(Exception):
                    self.run.write_text("traceback.txt", tb_text)
            self._write_summary()

    # ------------------------------------------------------------------ one epoch
    def _run_epoch(self) -> None:
        self.epoch = self.epochs_done + 1
        resume, self._resume = self._resume, None
        skip = self.batch_in_epoch
        if skip == 0:
            if resume is not None:
                self._restore_rng(resume)
            self._acc = _zero_acc()
            self._epoch_start = self._rng_now()
        else:  # resuming inside this epoch: replay its data order up to where it stopped
            self._restore_rng(self._epoch_start)
        self.metrics = {}
        for cb in self._all_callbacks():
            _call(cb, "on_epoch_start", self)
        self._check_interrupt()
        t0 = time.perf_counter()
        self.model.train()
        it = iter(self.train_loader)
        for _ in range(skip):
            next(it)
        if skip and resume is not None:
            self._restore_rng(resume, data=False)
        for batch in it:
            self._train_step(batch)
            self.batch_in_epoch += 1
            self.global_step += 1
            for cb in self._all_callbacks():
                _call(cb, "on_batch_end", self)
            self._check_interrupt()
        acc = self._acc
        m: dict[str, Any] = {"epoch": self.epoch, "step": self.global_step}
        m["train_loss"] = acc["loss_sum"] / acc["n"] if acc["n"] else None
        if self.task == "classification" and acc["n_acc"]:
            m["train_acc"] = acc["correct"] / acc["n_acc"]
        if self.val_loader is not None and (
            self.epoch % self.eval_every == 0 or self.epoch == self.epochs
        ):
            m.update(self._validate())
        m["lr"] = acc["lr"] if acc["lr"] is not None else self.current_lrs()[0]
        self.metrics = m
        for cb in self._all_callbacks():
            _call(cb, "on_validation_end", self)
        self._scheduler_epoch_step()
        m["time"] = acc["time"] + (time.perf_counter() - t0)
        self.history.append(m)
        self.epochs_done += 1
        self.batch_in_epoch = 0
        self._epoch_start = None
        self._update_best()
        for cb in self.callbacks:
            _call(cb, "on_epoch_end", self)
        if self.run is not None:
            self._sync_metric_files()
            self._write_summary()
        _call(self.reporter, "on_epoch_end", self)

    def _train_step(self, batch: Any) -> None:
        x, y = self._unpack(batch)
        t0 = time.perf_counter()
        self.optimizer.zero_grad()
        out = self.model(x)
        loss = self.loss_fn(out, y)
        value = float(loss.item())
        self.batch_loss = value
        if not math.isfinite(value) and self.guard_nonfinite:
            raise self._nonfinite_error(x, value)
        loss.backward()
        params = None
        if self.grad_clip is not None:
            params = [p for g in self.optimizer.param_groups for p in g["params"]]
            self.last_grad_norm = clip_grad_norm_(
                params, self.grad_clip, norm_type=self._grad_norm_type or 2.0
            )
        elif self._grad_norm_type is not None:
            params = [p for g in self.optimizer.param_groups for p in g["params"]]
            self.last_grad_norm = get_total_norm(
                [p.grad for p in params if p.grad is not None], self._grad_norm_type
            )
        acc = self._acc
        acc["lr"] = float(self.optimizer.param_groups[0]["lr"])
        self._critical = True
        self.optimizer.step()
        if self.scheduler is not None and self.scheduler_interval == "step":
            if isinstance(self.scheduler, ReduceLROnPlateau):
                self.scheduler.step(value)
            else:
                self.scheduler.step()
        self._critical = False
        n = _batch_size(x)
        acc["loss_sum"] += value * n
        acc["n"] += n
        if self.task == "classification":
            correct, count = _count_correct(out, y, self.loss_fn)
            acc["correct"] += correct
            acc["n_acc"] += count
        acc["time"] += time.perf_counter() - t0

    def _validate(self) -> dict[str, Any]:
        self.model.eval()
        loss_sum, n, correct, n_acc = 0.0, 0, 0, 0
        try:
            with no_grad():
                for batch in self.val_loader:
                    x, y = self._unpack(batch)
                    out = self.model(x)
                    value = float(self.loss_fn(out, y).item())
                    b = _batch_size(x)
                    loss_sum += value * b
                    n += b
                    if self.task == "classification":
                        c, k = _count_correct(out, y, self.loss_fn)
                        correct += c
                        n_acc += k
                    self._check_interrupt()
        finally:
            self.model.train()
        out_m: dict[str, Any] = {"val_loss": loss_sum / n if n else None}
        if self.task == "classification" and n_acc:
            out_m["val_acc"] = correct / n_acc
        return out_m

    def _scheduler_epoch_step(self) -> None:
        if self.scheduler is None or self.scheduler_interval != "epoch":
            return
        if isinstance(self.scheduler, ReduceLROnPlateau):
            name = self.scheduler_monitor or "val_loss"
            value = self.metric(name)
            if value is not None:
                self.scheduler.step(value)
        else:
            self.scheduler.step()

    def _update_best(self) -> None:
        from .callbacks import is_better

        value = self.metric(self.monitor)
        if value is not None and is_better(value, self.best.get("value"), self.mode):
            self.best = {
                "epoch": self.epoch,
                "monitor": self.monitor,
                "mode": self.mode,
                "value": float(value),
                "metrics": dict(self.metrics),
            }

    # ------------------------------------------------------------------ helpers
    def _unpack(self, batch: Any) -> tuple[Any, Any]:
        if isinstance(batch, dict):
            x, y = batch.get("x", batch.get("input")), batch.get("y", batch.get("target"))
        else:
            x, y = batch[0], batch[1]
        if self._move_batches:
            x, y = _to(x, self.device), _to(y, self.device)
        return x, y

    def _restore_rng(self, state: dict[str, Any] | None, data: bool = True) -> None:
        if not state:
            return
        set_rng_state(state["rng"])
        gen = self._data_generator()
        if data and gen is not None and state.get("data_generator") is not None:
            gen.set_state(state["data_generator"])

    def _nonfinite_error(self, x: Any, value: float) -> NonFiniteLossError:
        kind = "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
        step = self.global_step + 1
        head = f"non-finite loss ({kind}) at epoch {self.epoch}, step {step}"
        found = find_nonfinite_layer(self.model, x)
        layer = None
        if found is None:
            loss_name = type(self.loss_fn).__name__
            tail = (
                f"the model's outputs are finite; the loss function ({loss_name}) produced it "
                "(check the targets)"
            )
        else:
            name, module, where, bad = found
            layer = name
            if module is None:
                tail = f"the input batch already contains {bad}"
            else:
                label = (
                    f"layer '{name}' ({type(module).__name__})"
                    if name
                    else (f"the model ({type(module).__name__})")
                )
                if where == "weight":
                    tail = f"first produced by {label}: its parameters contain {bad}"
                else:
                    tail = f"first produced by {label} output"
        return NonFiniteLossError(f"{head}: {tail}", self.epoch, step, layer)

    def _check_interrupt(self) -> None:
        if self._interrupt_requested:
            self._interrupt_requested = False
            raise KeyboardInterrupt

    def _install_sigint(self) -> Callable[[], None]:
        """Defer Ctrl-C to the next batch boundary (a second Ctrl-C interrupts at once)."""
        if threading.current_thread() is not threading.main_thread():
            return lambda: None
        try:
            previous = signal.getsignal(signal.SIGINT)
        except (ValueError, OSError):
            return lambda: None
        if previous is not signal.default_int_handler:
            return lambda: None

        def handler(signum: int, frame: Any) -> None:
            if self._interrupt_requested:
                raise KeyboardInterrupt
            self._interrupt_requested = True

        try:
            signal.signal(signal.SIGINT, handler)
        except (ValueError, OSError):
            return lambda: None

        def restore() -> None:
            with contextlib.suppress(ValueError, OSError):
                signal.signal(signal.SIGINT, previous)

        return restore

    def _install_module_hooks(self) -> None:
        modules = dict(self.model.named_modules())
        for layer, kind, fn in self.module_hooks:
            if kind not in MODULE_HOOK_KINDS:
                raise ValueError(
                    f"module hook kind must be one of {MODULE_HOOK_KINDS}, got {kind!r}"
                )
            if layer not in modules:
                names = ", ".join(n for n in modules if n)
                raise ValueError(f"the model has no layer {layer!r} (layers: {names})")
            register = getattr(modules[layer], f"register_{kind}_hook")
            self._hook_handles.append(register(fn))

    def _remove_module_hooks(self) -> None:
        for h in self._hook_handles:
            h.remove()
        self._hook_handles = []

    # ------------------------------------------------------------------ files
    def _prepare_run_files(self, resumed: bool) -> None:
        run = self.run
        assert run is not None
        if resumed:
            on_disk = run.read_metrics()
            done = len(self.history)
            if [r.get("epoch") for r in on_disk] != [r.get("epoch") for r in self.history]:
                run.write_metrics_jsonl(self.history)  # drop epochs after the checkpoint
            self._written = done
            self._write_tables()
        else:
            run.write_text(MODEL_TXT, model_text(self.model, self._sample_input()))
            self._write_tables()

    def _sample_input(self) -> Any:
        try:
            ds = self.train_loader.dataset
            first = default_collate([ds[0]])
            x = first[0] if isinstance(first, (list, tuple)) else first
            return _to(x, self.device) if self._move_batches else x
        except Exception:
            return None

    def _sync_metric_files(self) -> None:
        run = self.run
        assert run is not None
        for row in self.history[self._written :]:
            run.append_metrics(row)
        if self._written != len(self.history):
            self._written = len(self.history)
            self._write_tables()

    def _write_tables(self) -> None:
        run = self.run
        assert run is not None
        run.write_metrics_csv(self.history)
        run.write_text(LOSS_SVG, loss_svg(self.history, title=f"{self.name}: loss"))

    def summary(self) -> dict[str, Any]:
        wall = self._wall_before + (time.perf_counter() - self._t_start if self._t_start else 0.0)
        out = {
            "name": self.name,
            "status": self.status,
            "exit_code": self.exit_code,
            "message": self.message,
            "run_dir": self.run.path if self.run is not None else None,
            "started_at": self._started_at,
            "updated_at": _now(),
            "wall_time_s": round(wall, 3),
            "epochs": self.epochs,
            "epochs_completed": self.epochs_done,
            "global_step": self.global_step,
            "stopped_early": bool(self.stop_reason),
            "best": self.best if self.best.get("epoch") is not None else None,
            "final": self.history[-1] if self.history else None,
            "task": self.task,
            "device": self.device,
            "seed": self.seed,
            "sessions": self._sessions,
            "versions": _versions(),
        }
        out.update(self.summary_extra)
        return jsonable(out)

    def _write_summary(self) -> None:
        if self.run is not None:
            self.run.write_summary(self.summary())


# ---------------------------------------------------------------------- module helpers
def _call(cb: Any, hook: str, *args: Any) -> None:
    fn = getattr(cb, hook, None)
    if fn is not None:
        fn(*args)


def _zero_acc() -> dict[str, Any]:
    return {"loss_sum": 0.0, "n": 0, "correct": 0, "n_acc": 0, "time": 0.0, "lr": None}


def _safe_len(loader: Any) -> int | None:
    try:
        return len(loader)
    except TypeError:
        return None


def _model_device(model: Any) -> str:
    for p in model.parameters():
        return str(p.device)
    return "cpu"


def _to(x: Any, device: str) -> Any:
    if isinstance(x, Tensor):
        return x.to(device)
    if isinstance(x, (list, tuple)):
        return type(x)(_to(v, device) for v in x)
    return x


def _batch_size(x: Any) -> int:
    if isinstance(x, Tensor):
        return int(x.shape[0]) if x.dim() else 1
    if isinstance(x, (list, tuple)) and x:
        return _batch_size(x[0])
    return 1


CLASSIFICATION_LOSSES = (
    "CrossEntropyLoss",
    "NLLLoss",
    "BCELoss",
    "BCEWithLogitsLoss",
)


def _guess_task(loss_fn: Any) -> str:
    return "classification" if type(loss_fn).__name__ in CLASSIFICATION_LOSSES else "regression"


def _count_correct(out: Any, y: Any, loss_fn: Any) -> tuple[int, int]:
    """(correct predictions, predictions) for a batch; (0, 0) when it cannot tell."""
    if not isinstance(out, Tensor) or not isinstance(y, Tensor):
        return 0, 0
    o, t = out._data, y._data
    from ..backend import array_module

    xp = array_module(o)
    name = type(loss_fn).__name__
    if t.dtype.kind in "iu" and o.ndim == t.ndim + 1 and o.ndim >= 1:
        pred = xp.argmax(o, axis=1 if o.ndim > 1 else 0)
        return int((pred == t).sum()), int(t.size)
    if o.shape == t.shape:
        if name.startswith("BCE") or o.ndim < 2 or o.shape[1] == 1:
            threshold = 0.0 if name == "BCEWithLogitsLoss" else 0.5
            pred = o > threshold
            return int((pred == (t > 0.5)).sum()), int(t.size)
        if o.ndim >= 2:  # class probabilities as targets
            ok = xp.argmax(o, axis=1) == xp.argmax(t, axis=1)
            return int(ok.sum()), int(ok.size)
    return 0, 0
