"""Per-epoch sums of the loss and accuracy, and what a batch's predictions count as correct."""

from __future__ import annotations

import time
from typing import Any

from ..backend import array_module
from ..tensor.tensor import Tensor

__all__ = ["EpochSums", "batch_size", "count_correct", "guess_task"]


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
    """The running sums of one epoch (training or validation): sample-weighted loss, correct
    predictions (classification), the lr of the last step and the epoch's elapsed time."""

    def __init__(self, task: str, loss_fn: Any) -> None:
        self.task, self.loss_fn = task, loss_fn
        self.reset()

    def reset(self) -> None:
        self.loss_sum, self.n, self.correct, self.n_acc = 0.0, 0, 0, 0
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
        if self.task == "classification":
            correct, count = count_correct(out, y, self.loss_fn)
            self.correct += correct
            self.n_acc += count

    def metrics(self, prefix: str) -> dict[str, Any]:
        """``{prefix_loss, prefix_acc}`` (acc for classification, when it could be counted)."""
        out: dict[str, Any] = {f"{prefix}_loss": self.loss_sum / self.n if self.n else None}
        if self.task == "classification" and self.n_acc:
            out[f"{prefix}_acc"] = self.correct / self.n_acc
        return out

    def state_dict(self) -> dict[str, Any]:
        return {
            "loss_sum": self.loss_sum,
            "n": self.n,
            "correct": self.correct,
            "n_acc": self.n_acc,
            "lr": self.lr,
            "time": self.elapsed(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.loss_sum, self.n = float(state["loss_sum"]), int(state["n"])
        self.correct, self.n_acc = int(state["correct"]), int(state["n_acc"])
        self.lr = state.get("lr")
        self._before, self._t0 = float(state.get("time", 0.0)), None
