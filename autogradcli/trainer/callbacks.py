"""Callbacks: code the ``Trainer`` calls at fixed points of the loop.

Every hook receives the trainer (``trainer.epoch``, ``trainer.global_step``, ``trainer.metrics``
(this epoch's dict, still writable in ``on_validation_end``/``on_epoch_end``),
``trainer.history``, ``trainer.model``, ``trainer.optimizer``, ``trainer.should_stop``...).
Order within an epoch::

    on_fit_start
      on_epoch_start
        on_batch_end            (after optimizer.step and a per-step scheduler.step)
      on_validation_end         (after validation; also called on epochs without validation)
      on_epoch_end              (after the per-epoch scheduler.step; Checkpoint runs last)
    on_fit_end                  (always, also after a failure)
    on_exception                (on KeyboardInterrupt or an error, before on_fit_end)

A callback that keeps state across epochs returns it from ``state_dict()`` (plain data) and takes
it back in ``load_state_dict()``, so it is saved in checkpoints and restored on resume.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..autograd.grad_mode import no_grad
from ..tensor.tensor import Tensor

if TYPE_CHECKING:
    from .trainer import Trainer

__all__ = [
    "BUILTIN_CALLBACKS",
    "Callback",
    "Checkpoint",
    "EarlyStopping",
    "FunctionCallback",
    "GradNormLogger",
    "LRLogger",
    "NonFiniteGuard",
    "NonFiniteLossError",
    "callbacks_from_hooks",
    "find_nonfinite_layer",
]

MODES = ("min", "max")


class Callback:
    """Base class; override the hooks you need (each gets the trainer)."""

    def on_fit_start(self, trainer: Trainer) -> None:
        pass

    def on_epoch_start(self, trainer: Trainer) -> None:
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


def _check_mode(mode: str) -> None:
    if mode not in MODES:
        raise ValueError(f"mode must be 'min' or 'max', got {mode!r}")


def is_better(value: float, best: float | None, mode: str, min_delta: float = 0.0) -> bool:
    """Whether ``value`` improves on ``best`` by more than ``min_delta`` (``mode`` min/max)."""
    if value is None or not math.isfinite(value):
        return False
    if best is None:
        return True
    return value < best - min_delta if mode == "min" else value > best + min_delta


class EarlyStopping(Callback):
    """Stop when ``monitor`` has not improved by more than ``min_delta`` for ``patience``
    validated epochs (epochs where the metric is missing do not count)."""

    def __init__(
        self,
        monitor: str = "val_loss",
        patience: int = 5,
        mode: str = "min",
        min_delta: float = 0.0,
    ) -> None:
        _check_mode(mode)
        self.monitor, self.patience, self.mode = monitor, int(patience), mode
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
    """Save ``checkpoints/last`` every epoch and ``checkpoints/best`` whenever ``monitor``
    improves (needs the trainer to have a run folder; does nothing otherwise). It runs after
    every other callback's ``on_epoch_end``, so the saved state includes theirs."""

    def __init__(
        self,
        monitor: str = "val_loss",
        mode: str = "min",
        save_last: bool = True,
        save_best: bool = True,
        enabled: bool = True,
    ) -> None:
        _check_mode(mode)
        self.monitor, self.mode = monitor, mode
        self.save_last, self.save_best, self.enabled = save_last, save_best, enabled
        self.best: float | None = None
        self.best_epoch: int | None = None

    def on_epoch_end(self, trainer: Trainer) -> None:
        value = trainer.metrics.get(self.monitor)
        improved = value is not None and is_better(value, self.best, self.mode)
        if improved:
            self.best, self.best_epoch = float(value), trainer.epoch
        if not self.enabled or trainer.run is None:
            return
        if self.save_last:
            trainer.save_checkpoint("last")
        if improved and self.save_best:
            trainer.save_checkpoint("best")

    def state_dict(self) -> dict[str, Any]:
        return {"best": self.best, "best_epoch": self.best_epoch}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.best, self.best_epoch = state.get("best"), state.get("best_epoch")

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


class NonFiniteLossError(RuntimeError):
    """The training loss became NaN/inf; the message says where (epoch, step, layer)."""

    def __init__(self, message: str, epoch: int, step: int, layer: str | None) -> None:
        super().__init__(message)
        self.epoch, self.step, self.layer = epoch, step, layer


class NonFiniteGuard(Callback):
    """Stop the run (status failed, exit code 1) at the first non-finite training loss, before
    that step's backward/optimizer step, naming the layer whose output first went non-finite.
    The check is the loss value the trainer reads anyway; the layer search (a second forward of
    that one batch with hooks on every module) runs only after a failure."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled

    def on_fit_start(self, trainer: Trainer) -> None:
        if self.enabled:
            trainer.guard_nonfinite = True

    def __repr__(self) -> str:
        return f"NonFiniteGuard(enabled={self.enabled})"


def _nonfinite_kind(arr: Any) -> str | None:
    """``"nan"``/``"inf"``/``"-inf"`` for the first kind of non-finite value in ``arr``."""
    from ..backend import array_module

    xp = array_module(arr)
    if arr.dtype.kind not in "fc":
        return None
    if bool(xp.isfinite(arr).all()):
        return None
    if bool(xp.isnan(arr).any()):
        return "nan"
    return "inf" if bool((arr == xp.inf).any()) else "-inf"


def _first_nonfinite(value: Any) -> str | None:
    if isinstance(value, Tensor):
        return _nonfinite_kind(value._data)
    if isinstance(value, (tuple, list)):
        for v in value:
            kind = _first_nonfinite(v)
            if kind:
                return kind
    if isinstance(value, dict):
        return _first_nonfinite(list(value.values()))
    return None


def find_nonfinite_layer(model: Any, inputs: Any) -> tuple[str, Any, str, str] | None:
    """Run ``model(inputs)`` (no grad) with forward hooks on every module and return
    ``(name, module, "input"|"output"|"weight", kind)`` for the first module (in completion
    order, so the innermost) whose output is non-finite; ``("", None, "input", kind)`` when the
    input itself is; None when every output is finite."""
    kind = _first_nonfinite(inputs)
    if kind:
        return ("", None, "input", kind)
    found: list[tuple[str, Any, str, str]] = []
    handles = []

    def make_hook(name: str) -> Callable:
        def hook(module: Any, args: Any, output: Any) -> None:
            if found:
                return
            bad = _first_nonfinite(output)
            if bad:
                where = "output"
                for p in module.parameters(recurse=False):
                    if _first_nonfinite(p):
                        where, bad = "weight", _first_nonfinite(p)
                        break
                found.append((name, module, where, bad))

        return hook

    try:
        for name, module in model.named_modules():
            handles.append(module.register_forward_hook(make_hook(name)))
        with no_grad():
            model(*inputs) if isinstance(inputs, tuple) else model(inputs)
    except Exception:
        pass
    finally:
        for h in handles:
            h.remove()
    return found[0] if found else None


class FunctionCallback(Callback):
    """A user function from ``hooks`` (``type: file.py:fn``), called as
    ``fn(trainer, **kwargs)`` at the end of every epoch."""

    def __init__(self, fn: Callable, **kwargs: Any) -> None:
        self.fn, self.kwargs = fn, kwargs

    def on_epoch_end(self, trainer: Trainer) -> None:
        self.fn(trainer, **self.kwargs)

    def __repr__(self) -> str:
        return f"FunctionCallback({getattr(self.fn, '__name__', self.fn)!r})"


BUILTIN_CALLBACKS: dict[str, type[Callback]] = {
    "EarlyStopping": EarlyStopping,
    "Checkpoint": Checkpoint,
    "LRLogger": LRLogger,
    "GradNormLogger": GradNormLogger,
    "NonFiniteGuard": NonFiniteGuard,
}


def callbacks_from_hooks(hooks: Any) -> tuple[list[Any], list[tuple[str, str, Callable]]]:
    """Turn ``Experiment.hooks`` (``HookSpec`` list) into ``(callbacks, module_hooks)``;
    ``module_hooks`` are ``(layer name, kind, fn)`` for ``Trainer(module_hooks=...)``."""
    callbacks: list[Any] = []
    module_hooks: list[tuple[str, str, Callable]] = []
    for spec in hooks:
        if spec.kind == "builtin":
            callbacks.append(BUILTIN_CALLBACKS[spec.target](**spec.kwargs))
        elif spec.kind == "callback":
            target = spec.target
            if isinstance(target, type):
                try:
                    callbacks.append(target(**spec.kwargs))
                except TypeError as err:
                    where = f"{spec.where}  " if spec.where else ""
                    raise TypeError(f"{where}{target.__name__}(...) failed: {err}") from err
            else:
                callbacks.append(FunctionCallback(target, **spec.kwargs))
        else:
            module_hooks.append((spec.layer, spec.kind, spec.target))
    return callbacks, module_hooks
