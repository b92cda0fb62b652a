"""``Trainer``: the training loop, in PyTorch's order.

One step: ``optimizer.zero_grad()``, forward, loss, ``backward()``, gradient clipping,
``optimizer.step()``, then ``scheduler.step()`` when the scheduler steps per batch. After the
epoch: validation (``model.eval()`` under ``no_grad``), the per-epoch ``scheduler.step()``
(``ReduceLROnPlateau`` gets the monitored metric), then the callbacks.

Everything else sits beside the loop: callbacks (``callbacks.py``: early stopping,
checkpoints, loggers; ``guards.py``: the non-finite loss guard; ``run_logger.py``: the run
folder's files), the checkpoint and RNG state (``state.py``) and Ctrl-C (``signals.py``).
The loop reports how it ended as ``RunResult.status``; the CLI maps that to an exit code.
"""

from __future__ import annotations

import contextlib
import os
import traceback
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._utils.user_code import user_error_text
from ..data.dataloader import default_collate
from ..nn.utils.clip_grad import clip_grad_norm_, get_total_norm
from ..optim.lr_scheduler import ReduceLROnPlateau
from ..tensor.tensor import Tensor
from .batches import model_device, safe_len, unpack
from .best import best_monitor
from .builtin import BUILTIN_CALLBACKS, missing_defaults
from .callbacks import event_table, is_better
from .checkpoint_writer import CheckpointWriter
from .evaluate import sum_batches
from .guards import NonFiniteLossError
from .metrics import EpochSums, default_metrics, guess_task
from .run_dir import RunDir
from .run_logger import RunLogger
from .sequence_loss import compute_loss
from .signals import DeferredInterrupt
from .state import RunClock, TrainingState

__all__ = ["RunResult", "Trainer"]

STATUSES = ("completed", "failed", "interrupted")


@dataclass
class RunResult:
    """The outcome of a run: ``status`` is ``completed`` | ``failed`` | ``interrupted``;
    ``best`` is ``{"epoch", "monitor", "mode", "value", "metrics"}`` (or None), ``final`` the
    last epoch's metrics (or None); ``message`` says why a run stopped early or failed;
    ``traceback`` is set for unexpected errors."""

    run_dir: str | None
    status: str
    best: dict[str, Any] | None
    final: dict[str, Any] | None
    message: str = ""
    traceback: str | None = None
    history: list[dict[str, Any]] = field(default_factory=list, repr=False)


class Trainer:
    """Train ``model`` on ``train_loader``.

    ``callbacks``: Callback objects (``trainer.callbacks``), reporters included; ``Checkpoint``
    and ``NonFiniteGuard`` are added when absent (``default_callbacks=False`` to not), and a
    ``RunLogger`` when ``run`` is given. ``task`` is ``"classification"`` or ``"regression"``
    (``None``: guessed from the loss); ``metrics`` (``trainer.metrics`` module: accuracy, top5,
    f1_macro, mae, rmse, r2, perplexity) are logged as ``train_<m>``/``val_<m>`` (default:
    accuracy, logged as ``*_acc``, for classification; mae for regression). (N, T, C) outputs
    against (N, T) class targets go to the loss as (N, C, T) (``sequence_loss``).
    ``run``: a ``RunDir`` or a folder path (made when absent; one holding another run is
    refused unless resuming) for checkpoints and files; without it nothing is written.
    ``seed``: when given, a fresh fit seeds the global RNG and the train loader's
    ``Generator``. ``monitor``/``mode``: the metric for ``best``, the one record of the best
    epoch (``trainer.best``: summary.json reports it, ``Checkpoint`` saves ``checkpoints/best``
    on its epochs); default: a ``Checkpoint``'s own ``monitor``, else ``val_loss``; ``mode``
    ``auto`` follows the metric; ``val_*`` falls back to ``train_*`` without validation data.
    ``resume_from``: a run folder (continues it, writing there) or a checkpoint file to load
    before ``fit()``; the objects must be built as for the first session.
    """

    sums_class = EpochSums  # per-epoch sums; a data-parallel trainer reduces them across ranks

    def __init__(
        self,
        model: Any,
        loss_fn: Any,
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
        metrics: Sequence[str] | None = None,
        device: str | None = None,
        run: RunDir | str | os.PathLike | None = None,
        seed: int | None = None,
        monitor: str | None = None,
        mode: str = "auto",
        default_callbacks: bool = True,
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
        self.task = task if task is not None else guess_task(loss_fn)
        self.device = str(device) if device is not None else model_device(model)
        self._move_batches = device is not None and self.device != "cpu"
        if run is None and resume_from is not None and os.path.isdir(str(resume_from)):
            run = str(resume_from)  # continue the run folder, writing there
        if run is not None and not isinstance(run, RunDir):
            run = RunDir.make_or_reuse(run, fresh=resume_from is None)
        self.run = run
        self.seed = seed
        self.callbacks = _with_defaults(list(callbacks), default_callbacks, self.run)
        self.monitor, self.mode = best_monitor(monitor, mode, self.callbacks)

        # loop state
        self.epoch = 0  # the epoch in progress (1-based), or the last one finished
        self.epochs_done = self.batch_in_epoch = self.global_step = 0
        self.batches_per_epoch = safe_len(train_loader)
        self.metrics: dict[str, Any] = {}
        self.history: list[dict[str, Any]] = []
        self.best: dict[str, Any] = {"epoch": None, "monitor": self.monitor, "mode": self.mode}
        self.best.update(value=None, metrics={})
        self.batch: tuple[Any, Any] | None = None  # the (x, y) of the step in progress
        self.batch_loss: float | None = None
        self.last_grad_norm: Tensor | None = None
        self.should_stop, self.stop_reason = False, ""
        self.status, self.message = "created", ""
        self.traceback_text: str | None = None
        self.metric_names = list(default_metrics(self.task) if metrics is None else metrics)
        self.epoch_sums = self.sums_class(self.task, loss_fn, self.metric_names)
        self.epoch_start_rng: dict[str, Any] | None = None  # to replay a partial epoch's order
        self.resume_rng: dict[str, Any] | None = None  # set by a loaded checkpoint
        self.clock = RunClock()
        self.state = TrainingState(self)
        self.checkpoint_writer = CheckpointWriter()  # Checkpoint's writes, off this thread
        self.interrupt = DeferredInterrupt()
        self._grad_norm_type: float | None = None
        self._in_optimizer_step = False
        self._events = event_table(self.callbacks)
        if resume_from is not None:
            path = str(resume_from)
            self.load_checkpoint(
                RunDir(path).checkpoint_path("last") if os.path.isdir(path) else path
            )

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

    def save_checkpoint(self, name: str = "last", *, sync_folder: bool = True) -> str | None:
        """Save the checkpoint state to ``checkpoints/<name>`` of the run folder (atomic and
        durable; ``sync_folder=False`` leaves the folder's fsync to the caller's next rename),
        here, after the background writes (whose error it raises)."""
        if self.run is None:
            return None
        self.checkpoint_writer.wait()
        path = self.run.checkpoint_path(name)
        self.state.save(path, sync_folder=sync_folder)
        return path

    def load_checkpoint(self, path: str) -> None:
        """Restore a checkpoint; the next ``fit()`` continues from there."""
        self.state.load(path)

    def sample_batch(self) -> Any:
        """The inputs of the first training batch (for the model table; the RNG states are
        left as they were), or None."""
        rng = self.state.rng()
        try:
            return self._unpack(next(iter(self.train_loader)))[0]
        except Exception:
            try:
                return self._unpack(default_collate([self.train_loader.dataset[0]]))[0]
            except Exception:
                return None
        finally:
            self.state.restore_rng(rng)

    # ------------------------------------------------------------------ the loop
    def fit(self, *, raise_errors: bool = True) -> RunResult:
        """Train until ``epochs`` (or a stop request). KeyboardInterrupt and a non-finite loss
        end the run with a result (status ``interrupted``/``failed``), not an exception; any
        other error is recorded (summary.json, status failed) and re-raised, or returned as a
        failed result with ``raise_errors=False``."""
        self.clock.start()
        if self.resume_rng is None and self.seed is not None:
            self.state.seed(self.seed)
        self.status, self.message, self.traceback_text = "running", "", None
        self._events = event_table(self.callbacks)
        error: BaseException | None = None
        if self.run is not None:
            self.run.lock()
        try:
            # numpy's overflow/invalid warnings are not the user's business: the guard reports
            with self.interrupt, np.errstate(all="ignore"):
                error = self._fit_guarded()
        finally:
            if self.run is not None:
                self.run.unlock()
        result = self.result()
        if error is not None and raise_errors:
            raise error
        return result

    def _fit_guarded(self) -> BaseException | None:
        error = None
        try:
            if self._move_batches:
                self.model.to(self.device)
            self._emit("on_fit_start")
            while self.epochs_done < self.epochs and not self.should_stop:
                self._run_epoch()
            self.checkpoint_writer.close()  # the last checkpoint on disk; its error fails the run
            self.status, self.message = "completed", self.stop_reason
        except KeyboardInterrupt as err:
            self.status = "interrupted"
            where = f"epoch {self.epochs_done + (1 if self.batch_in_epoch else 0)}"
            self.message = f"interrupted at {where}, step {self.global_step}"
            if self.interrupt.signal_name not in (None, "SIGINT"):
                self.message += f" ({self.interrupt.signal_name})"
            self._notify_exception(err)
            self._save_after_interrupt()
        except NonFiniteLossError as err:
            self.status, self.message = "failed", str(err)
            self._notify_exception(err)
        except (Exception, SystemExit) as err:  # sys.exit() in user code fails the run too
            self.status = "failed"
            self.message = user_error_text(err)
            self.traceback_text = traceback.format_exc()
            error = err
            self._notify_exception(err)
        finally:
            self.message += self.checkpoint_writer.settle()  # on disk before fit returns
            self._end_fit()
        return error

    def result(self) -> RunResult:
        return RunResult(
            run_dir=self.run.path if self.run is not None else None,
            status=self.status if self.status in STATUSES else "failed",
            best=self.best if self.best.get("epoch") is not None else None,
            final=self.history[-1] if self.history else None,
            message=self.message,
            traceback=self.traceback_text,
            history=self.history,
        )

    def _emit(self, event: str, *args: Any) -> None:
        for fn in self._events[event]:
            fn(self, *args)

    def _notify_exception(self, err: BaseException) -> None:
        for fn in self._events["on_exception"]:
            with contextlib.suppress(Exception):
                fn(self, err)

    def _save_after_interrupt(self) -> None:
        if self.run is None:
            return
        self.message += self.checkpoint_writer.settle(close=False)  # the epoch's lands first
        if self._in_optimizer_step:
            self.message += " (inside optimizer.step: checkpoints/last not updated)"
            return
        try:
            self.save_checkpoint("last")
            self.message += "; saved checkpoints/last"
        except Exception as save_err:
            self.message += f"; could not save checkpoints/last: {save_err}"

    def _end_fit(self) -> None:
        for fn in self._events["on_fit_end"]:
            try:
                fn(self)
            except Exception as err:
                if self.status == "completed":
                    self.status = "failed"
                    owner = type(getattr(fn, "__self__", fn)).__name__
                    self.message = f"{owner}.on_fit_end: {type(err).__name__}: {err}"

    # ------------------------------------------------------------------ one epoch
    def _run_epoch(self) -> None:
        self.epoch = self.epochs_done + 1
        resume, self.resume_rng = self.resume_rng, None
        skip = self.batch_in_epoch
        if skip == 0:
            if resume is not None:
                self.state.restore_rng(resume)
            self.epoch_sums.reset()
            self.epoch_start_rng = self.state.rng()
        else:  # resuming inside this epoch: replay its data order up to where it stopped
            self.state.restore_rng(self.epoch_start_rng)
        self.metrics = {}
        self._emit("on_epoch_start")
        self.interrupt.check()
        self.epoch_sums.start_clock()
        self.model.train()
        batches = self.train_batches(skip)
        if skip and resume is not None:
            self.state.restore_rng(resume, data=False)
        for batch in batches:
            self.train_step(batch)
            self.batch_in_epoch += 1
            self.global_step += 1
            self._emit("on_batch_end")
            self.interrupt.check()
        sums = self.epoch_sums
        m: dict[str, Any] = {"epoch": self.epoch, "step": self.global_step}
        m.update(sums.metrics("train"))
        if self.val_loader is not None and (
            self.epoch % self.eval_every == 0 or self.epoch == self.epochs
        ):
            m.update(self.validate())
        m["lr"] = sums.lr if sums.lr is not None else self.current_lrs()[0]
        self.metrics = m
        self._emit("on_validation_end")
        self._scheduler_epoch_step()
        m["time"] = sums.elapsed()
        self.history.append(m)
        self.epochs_done += 1
        self.batch_in_epoch = 0
        self.epoch_start_rng = None
        self._update_best()
        self._emit("on_epoch_end")

    def train_batches(self, skip: int = 0) -> Iterator[Any]:
        """This epoch's training batches, the first ``skip`` left out (a resumed epoch). The
        seam for a data-parallel wrapper (a sampler's ``set_epoch``, sharding)."""
        it = iter(self.train_loader)
        for _ in range(skip):
            next(it)
        return it

    def train_step(self, batch: Any) -> float:
        """One optimisation step on ``batch``; returns the loss value."""
        x, y = self._unpack(batch)
        self.batch = (x, y)
        self._emit("on_batch_start")
        self.optimizer.zero_grad()
        out, value = self.forward_backward(x, y)
        self._clip_or_measure()
        sums = self.epoch_sums
        sums.lr = float(self.optimizer.param_groups[0]["lr"])
        self._in_optimizer_step = True
        self.optimizer.step()
        if self.scheduler is not None and self.scheduler_interval == "step":
            if isinstance(self.scheduler, ReduceLROnPlateau):
                self.scheduler.step(value)
            else:
                self.scheduler.step()
        self._in_optimizer_step = False
        sums.add(value, out, x, y, value_is_loss=True)
        return value

    def forward_backward(self, x: Any, y: Any) -> tuple[Any, float]:
        """Forward, loss, ``on_before_backward``, backward, ``on_after_backward`` (gradient
        synchronisation goes there); returns (output, loss value). Shared with ``dry_run``."""
        out = self.forward(x)
        loss = compute_loss(self.loss_fn, out, y)
        value = float(loss.item())
        self.batch_loss = value
        self._emit("on_before_backward", loss)
        loss.backward()
        self._emit("on_after_backward")
        return out, value

    def forward(self, x: Any) -> Any:
        """The model's output on a training batch (the seam for a data-parallel wrapper)."""
        return self.model(x)

    def dry_run(self) -> dict[str, Any]:
        """The training step on the first batch without ``optimizer.step``: ``{"input",
        "output"`` (shapes), ``"loss"``, ``"missing_grads"`` (parameters without a gradient),
        ``"finite"`` (loss and gradients)``}``; gradients are zeroed afterwards."""
        x, y = self._unpack(next(iter(self.train_loader)))
        self.batch = (x, y)
        self._events = event_table([])  # the loop's callbacks are not part of a dry run
        self.model.train()
        self.optimizer.zero_grad()
        with np.errstate(all="ignore"):
            out, value = self.forward_backward(x, y)
            grads = [p.grad for p in self.model.parameters() if p.requires_grad]
            finite = np.isfinite(value) and all(
                bool(np.isfinite(float(g.abs().sum().item()))) for g in grads if g is not None
            )
        self.optimizer.zero_grad()
        return {
            "input": tuple(x.shape) if isinstance(x, Tensor) else None,
            "output": tuple(out.shape) if isinstance(out, Tensor) else None,
            "loss": value,
            "missing_grads": sum(1 for g in grads if g is None),
            "finite": bool(finite),
        }

    def _clip_or_measure(self) -> None:
        if self.grad_clip is None and self._grad_norm_type is None:
            return
        params = [p for g in self.optimizer.param_groups for p in g["params"]]
        if self.grad_clip is not None:
            norm_type = self._grad_norm_type or 2.0
            self.last_grad_norm = clip_grad_norm_(params, self.grad_clip, norm_type=norm_type)
        else:
            grads = [p.grad for p in params if p.grad is not None]
            self.last_grad_norm = get_total_norm(grads, self._grad_norm_type)

    def validate(self) -> dict[str, Any]:
        """``val_loss`` and the metrics over ``val_loader``, in eval mode without a graph."""
        self.model.eval()
        sums = self.sums_class(self.task, self.loss_fn, self.metric_names)
        device = self.device if self._move_batches else None
        try:
            sum_batches(
                sums, self.model, self.loss_fn, self.val_loader, device, self.interrupt.check
            )
        finally:
            self.model.train()
        return sums.metrics("val")

    def _scheduler_epoch_step(self) -> None:
        if self.scheduler is None or self.scheduler_interval != "epoch":
            return
        if isinstance(self.scheduler, ReduceLROnPlateau):
            value = self.metric(self.scheduler_monitor or "val_loss")
            if value is not None:
                self.scheduler.step(value)
        else:
            self.scheduler.step()

    def _update_best(self) -> None:
        value = self.metric(self.monitor)
        if value is not None and is_better(value, self.best.get("value"), self.mode):
            self.best = {
                "epoch": self.epoch,
                "monitor": self.monitor,
                "mode": self.mode,
                "value": float(value),
                "metrics": dict(self.metrics),
            }

    def _unpack(self, batch: Any) -> tuple[Any, Any]:
        return unpack(batch, self.device if self._move_batches else None)


def _with_defaults(callbacks: list[Any], defaults: bool, run: RunDir | None) -> list[Any]:
    """``callbacks`` plus the default callbacks it lacks (``builtin.DEFAULT_CALLBACKS``, when
    ``defaults``) and a RunLogger (with a run folder and none given), sorted by ``order``."""
    if defaults:
        present = [
            n for n, cls in BUILTIN_CALLBACKS.items() if any(type(c) is cls for c in callbacks)
        ]
        callbacks += [BUILTIN_CALLBACKS[name]() for name in missing_defaults(present)]
    if run is not None and not any(isinstance(c, RunLogger) for c in callbacks):
        callbacks.append(RunLogger(run))
    return sorted(callbacks, key=lambda c: getattr(c, "order", 0))
