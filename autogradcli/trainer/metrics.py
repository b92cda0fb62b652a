"""The one registry of metrics, and the per-epoch sums that compute them.

A metric (``metrics:`` in a config, ``Trainer(metrics=...)``) is a ``Metric``: its name, its
key in the logs (``train_<key>``/``val_<key>``: ``accuracy`` is ``acc``), whether lower or
higher is better, its task and how it is computed (``metric_functions``). ``METRICS`` is read by
the trainer, the config validator (accepted names, monitors, modes) and their messages, so one
``register_metric(Metric(...))`` makes a new metric usable everywhere. The loss is always
logged (``train_loss``/``val_loss``, lower is better).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..tensor.tensor import Tensor
from . import metric_functions as f
from .metric_functions import batch_size

__all__ = [
    "CLASSIFICATION_LOSSES",
    "DEFAULT_MONITOR",
    "METRICS",
    "MODE_VALUES",
    "NEXT_TOKEN",
    "EpochSums",
    "Metric",
    "batch_size",
    "default_metrics",
    "guess_task",
    "is_next_token",
    "logged_names",
    "metric_key",
    "metric_mode",
    "mode_problem",
    "monitors",
    "register_metric",
    "resolve_mode",
]

LOSS_KEY = "loss"  # always logged, minimised
# The task of a metric logged by default, beside classification's, when a classification
# run's targets are a class per sequence position (``is_next_token``): perplexity.
NEXT_TOKEN = "next_token"
SPLITS = ("train", "val")
DEFAULT_MONITOR = "val_loss"  # the metric of the best epoch unless one is chosen
MODE_VALUES = ("auto", "min", "max", "min!", "max!")

# Losses whose predictions are classes: the run's task is "classification".
CLASSIFICATION_LOSSES = frozenset(
    {
        "CrossEntropyLoss",
        "NLLLoss",
        "BCELoss",
        "BCEWithLogitsLoss",
        "MultiMarginLoss",
        "MultiLabelMarginLoss",
        "MultiLabelSoftMarginLoss",
        "SoftMarginLoss",
    }
)


@dataclass(frozen=True)
class Metric:
    """One metric. ``accumulate(sums, output, target, loss_fn)`` adds a batch to the epoch's
    ``sums`` (a dict of plain numbers/lists shared by all metrics, so name your keys);
    ``value(sums)`` is the epoch's value, or None when it cannot be computed. ``default``:
    logged for its ``task`` when a run names no metrics. ``from_loss(sums, loss_value, output,
    target, loss_fn)``, optional: the same sums from the batch's loss value when the loss
    allows (True), so the trainer need not recompute what its loss did; False: ``accumulate``
    runs."""

    name: str
    key: str
    mode: str  # "min" | "max": which is better
    task: str  # "classification" | "regression" | NEXT_TOKEN
    accumulate: Callable[[dict[str, Any], Any, Any, Any], None]
    value: Callable[[dict[str, Any]], float | None]
    default: bool = False
    from_loss: Callable[[dict[str, Any], float, Any, Any, Any], bool] | None = None


METRICS: dict[str, Metric] = {}


def register_metric(metric: Metric) -> Metric:
    """Add ``metric`` to ``METRICS`` (a name or key already taken is refused)."""
    if metric.mode not in ("min", "max"):
        raise ValueError(f"Metric.mode must be 'min' or 'max', got {metric.mode!r}")
    taken = {LOSS_KEY} | {m.name for m in METRICS.values()} | {m.key for m in METRICS.values()}
    if metric.name in taken or metric.key in taken - {metric.name}:
        raise ValueError(f"a metric named {metric.name!r} (key {metric.key!r}) exists already")
    METRICS[metric.name] = metric
    return metric


for _metric in (
    Metric("accuracy", "acc", "max", "classification", f.add_accuracy, f.accuracy_value, True),
    Metric("top5", "top5", "max", "classification", f.add_top5, f.top5_value),
    Metric("f1_macro", "f1_macro", "max", "classification", f.add_f1, f.f1_value),
    Metric("mae", "mae", "min", "regression", f.add_regression, f.mae_value, True),
    Metric("rmse", "rmse", "min", "regression", f.add_regression, f.rmse_value),
    Metric("r2", "r2", "max", "regression", f.add_regression, f.r2_value),
    Metric(
        "perplexity",
        "perplexity",
        "min",
        NEXT_TOKEN,
        f.add_perplexity,
        f.perplexity_value,
        True,
        f.perplexity_from_loss,
    ),
):
    register_metric(_metric)


def guess_task(loss_fn: Any) -> str:
    """``classification`` for a class loss (``CLASSIFICATION_LOSSES``), else ``regression``."""
    return "classification" if type(loss_fn).__name__ in CLASSIFICATION_LOSSES else "regression"


def default_metrics(task: str, next_token: bool = False) -> list[str]:
    """The metrics logged for ``task`` when none are named (accuracy; mae for regression);
    ``next_token`` (``is_next_token``) adds the next-token ones (perplexity)."""
    tasks = {task, NEXT_TOKEN} if next_token and task == "classification" else {task}
    return [m.name for m in METRICS.values() if m.default and m.task in tasks]


def is_next_token(out: Any, y: Any) -> bool:
    """Whether the model's output ``out`` and the targets ``y`` of a batch are a next-token
    task's: integer targets (N, T), a class per position, against scores (N, T, C)."""
    return (
        isinstance(out, Tensor)
        and isinstance(y, Tensor)
        and y.dim() == 2
        and out.dim() == 3
        and y._data.dtype.kind in "iu"
    )


def metric_key(name: str) -> str:
    """The logged name of a metric (``accuracy`` -> ``acc``)."""
    metric = METRICS.get(name)
    return metric.key if metric is not None else name


def logged_names() -> tuple[str, ...]:
    """What a run may log after ``train_``/``val_``: the loss and every metric's key."""
    return (LOSS_KEY, *(m.key for m in METRICS.values()))


def monitors() -> tuple[str, ...]:
    """Every metric a callback may monitor: ``train_loss``, ``val_acc``..."""
    return tuple(f"{split}_{key}" for split in SPLITS for key in logged_names())


def metric_mode(monitor: str) -> str | None:
    """``"min"``/``"max"`` for a known metric (``val_acc`` -> max), else None."""
    name = monitor
    for prefix in SPLITS:
        if monitor.startswith(prefix + "_"):
            name = monitor[len(prefix) + 1 :]
    if name == LOSS_KEY:
        return "min"
    for m in METRICS.values():
        if name in (m.key, m.name):
            return m.mode
    return None


def mode_problem(monitor: str, mode: str) -> str | None:
    """Why ``mode`` cannot be used for ``monitor``, or None. A mode contradicting a known
    metric's direction is refused unless written with ``!`` (``min!``)."""
    if mode not in MODE_VALUES:
        return f"mode must be one of {', '.join(MODE_VALUES)}, got {mode!r}"
    known = metric_mode(monitor)
    if mode in ("min", "max") and known is not None and known != mode:
        better = "higher" if known == "max" else "lower"
        return (
            f"mode {mode!r} contradicts {monitor} ({better} is better, so the best epoch would "
            f"be the worst): leave mode out (auto: {known}), or write '{mode}!' to insist"
        )
    return None


def resolve_mode(monitor: str, mode: str = "auto") -> str:
    """The direction to use: ``auto`` follows the metric (Keras's ``mode='auto'``; an unknown
    metric is minimised); a refused mode raises ValueError (see ``mode_problem``)."""
    problem = mode_problem(monitor, mode)
    if problem:
        raise ValueError(problem)
    if mode == "auto":
        return metric_mode(monitor) or "min"
    return mode.rstrip("!")


class EpochSums:
    """The running sums of one epoch (training or validation): the sample-weighted loss, what
    ``metrics`` need, the lr of the last step and the epoch's elapsed time."""

    def __init__(self, task: str, loss_fn: Any, metrics: Any = None) -> None:
        self.task, self.loss_fn = task, loss_fn
        self.names = list(default_metrics(task) if metrics is None else metrics)
        unknown = [m for m in self.names if m not in METRICS]
        if unknown:
            raise ValueError(f"unknown metric {unknown[0]!r}; known: {', '.join(METRICS)}")
        # one call per batch for each accumulator, even when several metrics share it
        self._accumulators = list(
            dict.fromkeys((METRICS[m].accumulate, METRICS[m].from_loss) for m in self.names)
        )
        self.reset()

    def reset(self) -> None:
        self.loss_sum, self.n = 0.0, 0
        self.sums: dict[str, Any] = {}  # the metrics' sums (plain numbers and lists)
        self.lr: float | None = None
        self._before = 0.0  # seconds spent on this epoch in an earlier session
        self._t0: float | None = None

    def start_clock(self) -> None:
        self._t0 = time.perf_counter()

    def elapsed(self) -> float:
        return self._before + (time.perf_counter() - self._t0 if self._t0 is not None else 0.0)

    def add(self, value: float, out: Any, x: Any, y: Any, *, value_is_loss: bool = False) -> None:
        """Add a batch: its loss ``value``, output ``out``, inputs ``x`` and targets ``y``.
        ``value_is_loss``: ``value`` is exactly ``compute_loss(loss_fn, out, y)`` (the trainer's
        and evaluation's own), so metrics with ``from_loss`` may take their sums from it."""
        n = batch_size(x)
        self.loss_sum += value * n
        self.n += n
        for accumulate, from_loss in self._accumulators:
            shortcut = value_is_loss and from_loss is not None
            if shortcut and from_loss(self.sums, value, out, y, self.loss_fn):
                continue
            accumulate(self.sums, out, y, self.loss_fn)

    def settle(self) -> None:
        """Make the sums plain numbers: counts kept on the device during the epoch (0-d device
        arrays, so no step waits for the device) are read back here, once."""
        for key, value in self.sums.items():
            if not isinstance(value, (int, float, list)):
                self.sums[key] = value.item()

    def metrics(self, prefix: str) -> dict[str, Any]:
        """``{prefix_loss, prefix_<key>...}`` for the metrics that could be computed."""
        self.settle()
        out: dict[str, Any] = {f"{prefix}_loss": self.loss_sum / self.n if self.n else None}
        for name in self.names:
            value = METRICS[name].value(self.sums)
            if value is not None:
                out[f"{prefix}_{metric_key(name)}"] = value
        return out

    def state_dict(self) -> dict[str, Any]:
        self.settle()
        return {
            "loss_sum": self.loss_sum,
            "n": self.n,
            "sums": self.sums,
            "lr": self.lr,
            "time": self.elapsed(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.loss_sum, self.n = float(state["loss_sum"]), int(state["n"])
        self.sums = dict(state.get("sums") or {})
        if "n_acc" in state:  # a checkpoint from before accuracy kept its counts in ``sums``
            self.sums.update(correct=int(state["correct"]), n_acc=int(state["n_acc"]))
        self.lr = state.get("lr")
        self._before, self._t0 = float(state.get("time", 0.0)), None
