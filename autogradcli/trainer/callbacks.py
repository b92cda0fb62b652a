"""Callbacks: code the ``Trainer`` calls at fixed points of the loop.

Every event receives the trainer (``trainer.epoch``, ``trainer.global_step``,
``trainer.metrics`` (this epoch's dict, still writable in ``on_validation_end``/
``on_epoch_end``), ``trainer.history``, ``trainer.model``, ``trainer.optimizer``,
``trainer.batch``, ``trainer.batch_loss``...). The events, in order::

    on_fit_start(trainer)
      on_epoch_start(trainer)
        on_batch_start(trainer)             (trainer.batch is the batch, before zero_grad)
        on_before_backward(trainer, loss)   (the loss is read: trainer.batch_loss)
        on_after_backward(trainer)          (gradients are complete, before clipping/step)
        on_batch_end(trainer)               (after optimizer.step and a per-step scheduler.step)
      on_validation_end(trainer)            (after validation; also on epochs without it)
      on_epoch_end(trainer)                 (after the per-epoch scheduler.step)
    on_exception(trainer, exception)        (KeyboardInterrupt or an error, before on_fit_end)
    on_fit_end(trainer)                     (always, also after a failure)

Callbacks run in ``order`` (lower first, then in the order given): user callbacks 0,
``Checkpoint`` 100 (so the state it saves includes everybody's), ``RunLogger`` 200, reporters
1000. A callback that keeps state across epochs returns it from ``state_dict()`` (plain data)
and takes it back in ``load_state_dict()``, so it is saved in checkpoints and restored on
resume. PyTorch Lightning's event names (``on_train_epoch_end``...) are refused with ours named.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._utils.atomic import atomic_link
from ..backend import threads
from ..serialization.archive import detached, prepared_nbytes
from ..tensor.tensor import Tensor
from .metrics import mode_problem, resolve_mode

if TYPE_CHECKING:
    from .trainer import Trainer

__all__ = [
    "EVENTS",
    "LIGHTNING_NAMES",
    "Callback",
    "Checkpoint",
    "EarlyStopping",
    "FunctionCallback",
    "GradNormLogger",
    "LRLogger",
    "ModuleHooks",
    "event_table",
    "is_better",
    "mode_for",
]

EVENTS = (
    "on_fit_start",
    "on_epoch_start",
    "on_batch_start",
    "on_before_backward",
    "on_after_backward",
    "on_batch_end",
    "on_validation_end",
    "on_epoch_end",
    "on_exception",
    "on_fit_end",
)
# Lightning's names for the same points, so a ported callback is not silently ignored.
LIGHTNING_NAMES = {
    "on_train_start": "on_fit_start",
    "on_train_end": "on_fit_end",
    "on_train_epoch_start": "on_epoch_start",
    "on_train_epoch_end": "on_epoch_end",
    "on_train_batch_start": "on_batch_start",
    "on_train_batch_end": "on_batch_end",
    "on_validation_epoch_end": "on_validation_end",
    "on_before_optimizer_step": "on_after_backward",
}


class Callback:
    """Base class; override the events you need (each gets the trainer)."""

    order = 0

    def on_fit_start(self, trainer: Trainer) -> None:
        pass

    def on_epoch_start(self, trainer: Trainer) -> None:
        pass

    def on_batch_start(self, trainer: Trainer) -> None:
        pass

    def on_before_backward(self, trainer: Trainer, loss: Tensor) -> None:
        pass

    def on_after_backward(self, trainer: Trainer) -> None:
        pass

    def on_batch_end(self, trainer: Trainer) -> None:
        pass

    def on_validation_end(self, trainer: Trainer) -> None:
        pass

    def on_epoch_end(self, trainer: Trainer) -> None:
        pass

    def on_fit_end(self, trainer: Trainer) -> None:
        pass

    def on_exception(self, trainer: Trainer, exception: BaseException) -> None:
        pass

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        pass

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def event_table(callbacks: list[Any]) -> dict[str, list[Callable[..., Any]]]:
    """For each event, the bound methods to call, in order (the base class's empty methods
    left out). A method named as in Lightning is refused with our name for it."""
    for cb in callbacks:
        for name, ours in LIGHTNING_NAMES.items():
            if callable(getattr(cb, name, None)):
                raise TypeError(
                    f"{type(cb).__name__}.{name} is a PyTorch Lightning name: autogradcli calls "
                    f"{ours}(trainer{', loss' if ours == 'on_before_backward' else ''}) "
                    "(see trainer.callbacks)"
                )
    table: dict[str, list[Callable[..., Any]]] = {}
    for event in EVENTS:
        base = getattr(Callback, event)
        table[event] = [
            getattr(cb, event)
            for cb in callbacks
            if callable(getattr(cb, event, None)) and getattr(type(cb), event, None) is not base
        ]
    return table


def core_free() -> bool:
    """Whether the compute threads leave a CPU core to a background writer."""
    return threads.get_num_threads() < threads.usable_cores()


def mode_for(monitor: str, mode: str) -> str:
    """``mode`` resolved for ``monitor`` (``auto``: from the metric); ValueError if refused."""
    problem = mode_problem(monitor, mode)
    if problem:
        raise ValueError(problem)
    return resolve_mode(monitor, mode)


def is_better(value: float, best: float | None, mode: str, min_delta: float = 0.0) -> bool:
    """Whether ``value`` improves on ``best`` by more than ``min_delta`` (``mode`` min/max)."""
    if value is None or not math.isfinite(value):
        return False
    if best is None:
        return True
    return value < best - min_delta if mode == "min" else value > best + min_delta


class EarlyStopping(Callback):
    """Stop when ``monitor`` has not improved by more than ``min_delta`` for ``patience``
    validated epochs (epochs where the metric is missing do not count). ``mode`` ``auto``
    follows the metric (``val_acc``: max, losses: min)."""

    def __init__(
        self,
        monitor: str = "val_loss",
        patience: int = 5,
        mode: str = "auto",
        min_delta: float = 0.0,
    ) -> None:
        self.monitor, self.patience = monitor, int(patience)
        self.mode = mode_for(monitor, mode)
        self.min_delta = abs(float(min_delta))
        self.best: float | None = None
        self.wait = 0
        self.stopped_epoch: int | None = None

    def on_epoch_end(self, trainer: Trainer) -> None:
        value = trainer.metrics.get(self.monitor)
        if value is None:
            return
        if is_better(value, self.best, self.mode, self.min_delta):
            self.best = float(value)
            self.wait = 0
            return
        self.wait += 1
        if self.wait >= self.patience:
            self.stopped_epoch = trainer.epoch
            trainer.request_stop(
                f"early stopping: {self.monitor} did not improve for {self.wait} epochs "
                f"(best {self.best:.6g})"
                if self.best is not None
                else f"early stopping: {self.monitor} never had a finite value"
            )

    def state_dict(self) -> dict[str, Any]:
        return {"best": self.best, "wait": self.wait, "stopped_epoch": self.stopped_epoch}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.best, self.wait = state.get("best"), int(state.get("wait", 0))
        self.stopped_epoch = state.get("stopped_epoch")

    def __repr__(self) -> str:
        return (
            f"EarlyStopping(monitor={self.monitor!r}, patience={self.patience}, "
            f"mode={self.mode!r}, min_delta={self.min_delta})"
        )


class Checkpoint(Callback):
    """Save ``checkpoints/last`` every epoch and ``checkpoints/best`` on every epoch that
    improves the trainer's record of the best (``trainer.best``: the one record, which
    summary.json reports), so ``best`` always holds the reported best epoch. ``monitor``
    (None: the trainer's, ``val_loss`` by default) and ``mode`` (``auto`` follows the metric)
    set the trainer's monitor when ``Trainer(monitor=...)`` is not given; given both, they
    must agree. Needs a run folder (does nothing otherwise); ``order`` 100 runs it after the
    other callbacks, so the saved state includes theirs. ``background``: True copies the state
    at the epoch's end and has ``trainer.checkpoint_writer``'s thread write it while training
    goes on (one write at a time; on disk when ``fit`` returns; a failed write fails the run at
    the next step); False writes it at once; None (default) writes in the background only where
    that measured faster (bench/README.md): after a write at once that spent
    ``background_wait_s`` or more waiting on the disk (its wall time less its CPU time) and
    more waiting than computing (measured again at once after ``background_probe_every``
    writes in the background, whose times include waiting for the GIL), or for a state of
    ``background_min_bytes`` or more with a core free for the writer (a device run, or fewer
    compute threads than cores)."""

    order = 100
    background_min_bytes = 1 << 20
    background_wait_s = 0.003
    background_probe_every = 8

    def __init__(
        self,
        monitor: str | None = None,
        mode: str = "auto",
        save_last: bool = True,
        save_best: bool = True,
        enabled: bool = True,
        background: bool | None = None,
    ) -> None:
        if monitor is None and mode != "auto":
            raise ValueError(f"Checkpoint(mode={mode!r}) needs the monitor it applies to")
        self.monitor = monitor
        self.mode = mode if monitor is None else mode_for(monitor, mode)
        self.save_last, self.save_best, self.enabled = save_last, save_best, enabled
        self.background = background
        self._waited = self._computed = 0.0  # the last write at once: disk wait, CPU seconds
        self._behind = 0  # writes in the background since then

    def on_batch_end(self, trainer: Trainer) -> None:
        trainer.checkpoint_writer.check()  # a failed write stops the run at the next step

    def on_epoch_end(self, trainer: Trainer) -> None:
        if not self.enabled or trainer.run is None:
            return
        best = self.save_best and trainer.best.get("epoch") == trainer.epoch
        if not (self.save_last or best):
            return
        last = trainer.run.checkpoint_path("last") if self.save_last else None
        best_path = trainer.run.checkpoint_path("best") if best else None
        write = trainer.state.write
        trainer.checkpoint_writer.wait()  # one write at a time; the previous one's error here
        state = trainer.state.snapshot(copy=False)
        background = self.background
        if background is None:
            big = prepared_nbytes(state) >= self.background_min_bytes
            waits = self._waited >= self.background_wait_s and self._waited > self._computed
            waits = waits and self._behind < self.background_probe_every
            background = waits or (big and (trainer.device != "cpu" or core_free()))
        self._behind = self._behind + 1 if background else 0
        if background:
            state = detached(state)  # copied now: training goes on while it is written

        def job() -> None:
            wall, cpu = time.perf_counter(), time.thread_time()
            # on a best epoch the folder's fsync waits for ``best``'s rename: one for both
            if last is not None:
                write(state, last, sync_folder=best_path is None)
            # the same state as ``last``: linked (one serialization and fsync less); the
            # link's folder fsync, or the copy's, makes ``last``'s rename durable too
            if best_path is not None and (last is None or not atomic_link(last, best_path)):
                write(state, best_path)
            if not background:
                self._computed = time.thread_time() - cpu
                self._waited = time.perf_counter() - wall - self._computed

        if background:
            trainer.checkpoint_writer.submit(job)
        else:
            job()

    def __repr__(self) -> str:
        return f"Checkpoint(monitor={self.monitor!r}, mode={self.mode!r}, enabled={self.enabled})"


class LRLogger(Callback):
    """Adds ``lr_<i>`` per param group (when there are several) and ``lr_min``/``lr_max`` over
    the epoch's steps (when the lr changes within an epoch) to the metrics; ``history`` keeps
    ``(global_step, [lr per group])`` for every step."""

    def __init__(self) -> None:
        self.history: list[tuple[int, list[float]]] = []
        self._epoch_lrs: list[float] = []

    def on_epoch_start(self, trainer: Trainer) -> None:
        if trainer.batch_in_epoch == 0:  # not a resumed epoch: its earlier steps' lrs are kept
            self._epoch_lrs = []

    def on_batch_end(self, trainer: Trainer) -> None:
        lrs = trainer.current_lrs()
        self.history.append((trainer.global_step, lrs))
        self._epoch_lrs.append(lrs[0])

    def on_validation_end(self, trainer: Trainer) -> None:
        lrs = trainer.current_lrs()
        if len(lrs) > 1:
            for i, lr in enumerate(lrs):
                trainer.metrics[f"lr_{i}"] = lr
        if self._epoch_lrs and min(self._epoch_lrs) != max(self._epoch_lrs):
            trainer.metrics["lr_min"] = min(self._epoch_lrs)
            trainer.metrics["lr_max"] = max(self._epoch_lrs)

    def state_dict(self) -> dict[str, Any]:
        return {"epoch_lrs": list(self._epoch_lrs)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self._epoch_lrs = [float(lr) for lr in state.get("epoch_lrs", [])]


class GradNormLogger(Callback):
    """Adds ``grad_norm`` (mean over the epoch's steps of the total gradient norm before
    clipping) and ``grad_norm_max`` to the metrics."""

    def __init__(self, norm_type: float = 2.0) -> None:
        self.norm_type = float(norm_type)
        self._sum = 0.0
        self._max = 0.0
        self._n = 0

    def on_fit_start(self, trainer: Trainer) -> None:
        trainer.track_grad_norm(self.norm_type)

    def on_epoch_start(self, trainer: Trainer) -> None:
        if trainer.batch_in_epoch == 0:
            self._sum, self._max, self._n = 0.0, 0.0, 0

    def on_batch_end(self, trainer: Trainer) -> None:
        norm = trainer.last_grad_norm
        if norm is None:
            return
        value = float(norm.item() if isinstance(norm, Tensor) else norm)
        self._sum += value
        self._max = max(self._max, value)
        self._n += 1

    def on_validation_end(self, trainer: Trainer) -> None:
        if self._n:
            trainer.metrics["grad_norm"] = self._sum / self._n
            trainer.metrics["grad_norm_max"] = self._max

    def state_dict(self) -> dict[str, Any]:
        return {"sum": self._sum, "max": self._max, "n": self._n}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self._sum, self._max, self._n = state["sum"], state["max"], state["n"]

    def __repr__(self) -> str:
        return f"GradNormLogger(norm_type={self.norm_type})"


class FunctionCallback(Callback):
    """A user function from ``hooks`` (``type: file.py:fn``), called as
    ``fn(trainer, **kwargs)`` at the end of every epoch."""

    def __init__(self, fn: Callable, **kwargs: Any) -> None:
        self.fn, self.kwargs = fn, kwargs

    def on_epoch_end(self, trainer: Trainer) -> None:
        self.fn(trainer, **self.kwargs)

    def __repr__(self) -> str:
        return f"FunctionCallback({getattr(self.fn, '__name__', self.fn)!r})"


class ModuleHooks(Callback):
    """Module hooks for the fit: ``(layer name, "forward_pre"|"forward"|"full_backward", fn)``
    installed on ``model.named_modules()[layer]`` at ``on_fit_start``, removed at the end."""

    KINDS = ("forward_pre", "forward", "full_backward")

    def __init__(self, hooks: list[tuple[str, str, Callable]]) -> None:
        for _, kind, _ in hooks:
            if kind not in self.KINDS:
                raise ValueError(f"module hook kind must be one of {self.KINDS}, got {kind!r}")
        self.hooks = list(hooks)
        self._handles: list[Any] = []

    def on_fit_start(self, trainer: Trainer) -> None:
        modules = dict(trainer.model.named_modules())
        for layer, kind, fn in self.hooks:
            if layer not in modules:
                names = ", ".join(n for n in modules if n)
                raise ValueError(f"the model has no layer {layer!r} (layers: {names})")
            register = getattr(modules[layer], f"register_{kind}_hook")
            self._handles.append(register(fn))

    def on_fit_end(self, trainer: Trainer) -> None:
        for h in self._handles:
            h.remove()
        self._handles = []

    def state_dict(self) -> dict[str, Any]:
        return {}

    def __repr__(self) -> str:
        return f"ModuleHooks({[(layer, kind) for layer, kind, _ in self.hooks]})"
