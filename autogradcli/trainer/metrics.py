"""Per-epoch sums of the loss and the chosen metrics, and what a batch's predictions count as
correct.

Metrics (``metrics:`` in a config, ``Trainer(metrics=...)``), each logged as ``train_<key>`` and
``val_<key>``: ``accuracy`` (key ``acc``), ``top5`` (the target among the 5 highest scores),
``f1_macro`` (the mean over classes seen in the targets or predictions of 2TP/(2TP+FP+FN)),
``mae``, ``rmse`` and ``r2`` (1 - SS_res/SS_tot per output column, averaged). Everything is
summed over the epoch's batches, so the values are those of the whole epoch, not batch means.
"""

from __future__ import annotations

import time
from typing import Any

from ..backend import array_module
from ..config.registry import METRICS, default_metrics, metric_key
from ..tensor.tensor import Tensor

__all__ = [
    "CLASSIFICATION_METRICS",
    "METRICS",
    "EpochSums",
    "batch_size",
    "count_correct",
    "default_metrics",
    "guess_task",
]

CLASSIFICATION_METRICS = ("accuracy", "top5", "f1_macro")
REGRESSION_METRICS = ("mae", "rmse", "r2")


def guess_task(loss_fn: Any) -> str:
    """``classification`` for a class loss (``config.registry.CLASSIFICATION_LOSSES``)."""
    from ..config.registry import CLASSIFICATION_LOSSES

    name = type(loss_fn).__name__
    return "classification" if name in CLASSIFICATION_LOSSES else "regression"


def batch_size(x: Any) -> int:
    if isinstance(x, Tensor):
        return int(x.shape[0]) if x.dim() else 1
    if isinstance(x, (list, tuple)) and x:
        return batch_size(x[0])
    return 1


def count_correct(out: Any, y: Any, loss_fn: Any) -> tuple[int, int]:
    """(correct predictions, predictions) for a batch; (0, 0) when it cannot tell."""
    if not isinstance(out, Tensor) or not isinstance(y, Tensor):
        return 0, 0
    o, t = out._data, y._data
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


class EpochSums:
    """The running sums of one epoch (training or validation): the sample-weighted loss, what
    ``metrics`` need, the lr of the last step and the epoch's elapsed time."""

    def __init__(self, task: str, loss_fn: Any, metrics: Any = None) -> None:
        self.task, self.loss_fn = task, loss_fn
        self.names = list(default_metrics(task) if metrics is None else metrics)
        unknown = [m for m in self.names if m not in METRICS]
        if unknown:
            raise ValueError(f"unknown metric {unknown[0]!r}; known: {', '.join(METRICS)}")
        self.reset()

    def reset(self) -> None:
        self.loss_sum, self.n, self.correct, self.n_acc = 0.0, 0, 0, 0
        self.sums: dict[str, Any] = {}  # per-metric sums (plain numbers and lists)
        self.lr: float | None = None
        self._before = 0.0  # seconds spent on this epoch in an earlier session
        self._t0: float | None = None

    def start_clock(self) -> None:
        self._t0 = time.perf_counter()

    def elapsed(self) -> float:
        return self._before + (time.perf_counter() - self._t0 if self._t0 is not None else 0.0)

    def add(self, value: float, out: Any, x: Any, y: Any) -> None:
        n = batch_size(x)
        self.loss_sum += value * n
        self.n += n
        if "accuracy" in self.names:
            correct, count = count_correct(out, y, self.loss_fn)
            self.correct += correct
            self.n_acc += count
        if not isinstance(out, Tensor) or not isinstance(y, Tensor):
            return
        o, t = out.detach()._data, y._data
        if "top5" in self.names or "f1_macro" in self.names:
            _add_classes(self.sums, o, t, "top5" in self.names, "f1_macro" in self.names)
        if any(m in self.names for m in REGRESSION_METRICS) and o.size == t.size:
            _add_regression(self.sums, o, t)

    def metrics(self, prefix: str) -> dict[str, Any]:
        """``{prefix_loss, prefix_<metric>...}`` for the metrics that could be computed."""
        out: dict[str, Any] = {f"{prefix}_loss": self.loss_sum / self.n if self.n else None}
        values = {"accuracy": self.correct / self.n_acc if self.n_acc else None}
        values.update(_class_values(self.sums))
        values.update(_regression_values(self.sums))
        for name in self.names:
            if values.get(name) is not None:
                out[f"{prefix}_{metric_key(name)}"] = values[name]
        return out

    def state_dict(self) -> dict[str, Any]:
        return {
            "loss_sum": self.loss_sum,
            "n": self.n,
            "correct": self.correct,
            "n_acc": self.n_acc,
            "sums": self.sums,
            "lr": self.lr,
            "time": self.elapsed(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.loss_sum, self.n = float(state["loss_sum"]), int(state["n"])
        self.correct, self.n_acc = int(state["correct"]), int(state["n_acc"])
        self.sums = dict(state.get("sums") or {})
        self.lr = state.get("lr")
        self._before, self._t0 = float(state.get("time", 0.0)), None


def _host(arr: Any) -> Any:
    """A numpy copy of a (possibly cupy) array, for the small per-batch sums."""
    import numpy as np

    get = getattr(arr, "get", None)
    return np.asarray(get() if callable(get) and not isinstance(arr, np.ndarray) else arr)


def _add_classes(sums: dict[str, Any], o: Any, t: Any, top5: bool, f1: bool) -> None:
    """Class-index targets ``t`` (N,) against scores ``o`` (N, C)."""
    import numpy as np

    if o.ndim != 2 or t.ndim != 1 or t.dtype.kind not in "iu" or o.shape[0] != t.shape[0]:
        return
    scores, target = _host(o), _host(t).astype(np.int64)
    classes = scores.shape[1]
    if top5:
        k = min(5, classes)
        top = np.argpartition(-scores, k - 1, axis=1)[:, :k]
        sums["top5_hit"] = sums.get("top5_hit", 0) + int((top == target[:, None]).any(1).sum())
        sums["top5_n"] = sums.get("top5_n", 0) + int(target.size)
    if f1:
        pred = scores.argmax(1)
        size = max(classes, int(target.max(initial=0)) + 1)
        for key, counts in (
            ("tp", np.bincount(target[pred == target], minlength=size)),
            ("fp", np.bincount(pred[pred != target], minlength=size)),
            ("fn", np.bincount(target[pred != target], minlength=size)),
        ):
            old = sums.get(key, [])
            old = old + [0] * (size - len(old))
            sums[key] = [int(a) + int(b) for a, b in zip(old, counts.tolist())]


def _class_values(sums: dict[str, Any]) -> dict[str, float]:
    out = {}
    if sums.get("top5_n"):
        out["top5"] = sums["top5_hit"] / sums["top5_n"]
    if "tp" in sums:
        n = max(len(sums["tp"]), len(sums["fp"]), len(sums["fn"]))
        tp, fp, fn = ((sums[k] + [0] * n)[:n] for k in ("tp", "fp", "fn"))
        f1 = [2 * a / (2 * a + b + c) for a, b, c in zip(tp, fp, fn) if 2 * a + b + c]
        if f1:
            out["f1_macro"] = sum(f1) / len(f1)
    return out


def _add_regression(sums: dict[str, Any], o: Any, t: Any) -> None:
    import numpy as np

    pred = _host(o).astype(np.float64).reshape(o.shape[0] if o.ndim else 1, -1)
    target = _host(t).astype(np.float64).reshape(pred.shape)
    err = pred - target
    for key, value in (
        ("abs", np.abs(err).sum(0)),
        ("sq", (err * err).sum(0)),
        ("y", target.sum(0)),
        ("y2", (target * target).sum(0)),
    ):
        old = sums.get(key)
        sums[key] = (value if old is None else np.asarray(old) + value).tolist()
    sums["rows"] = sums.get("rows", 0) + pred.shape[0]


def _regression_values(sums: dict[str, Any]) -> dict[str, float]:
    import math

    rows = sums.get("rows", 0)
    if not rows:
        return {}
    cols = len(sums["abs"])
    out = {
        "mae": sum(sums["abs"]) / (rows * cols),
        "rmse": math.sqrt(sum(sums["sq"]) / (rows * cols)),
    }
    r2 = []
    for sq, y, y2 in zip(sums["sq"], sums["y"], sums["y2"]):
        total = y2 - y * y / rows
        if total > 0:
            r2.append(1.0 - sq / total)
    if r2:
        out["r2"] = sum(r2) / len(r2)
    return out
