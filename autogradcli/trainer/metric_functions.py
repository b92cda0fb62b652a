"""How the built-in metrics count a batch and read an epoch's counts (``metrics.METRICS``
names them). Each ``add_*`` adds one batch to an epoch's ``sums`` (plain numbers and lists, so
checkpoints can hold them); each ``*_values`` reads the metric values from the sums.
Everything is summed over the epoch's batches: the values are those of the whole epoch, not
batch means."""

from __future__ import annotations

from typing import Any

from ..backend import array_module, is_cpu_array
from ..tensor.tensor import Tensor
from .sequence_loss import class_dim

__all__ = [
    "accuracy_value",
    "add_accuracy",
    "add_f1",
    "add_perplexity",
    "add_regression",
    "add_top5",
    "batch_size",
    "count_correct",
    "f1_value",
    "mae_value",
    "perplexity_from_loss",
    "perplexity_value",
    "r2_value",
    "rmse_value",
    "top5_value",
]


def batch_size(x: Any) -> int:
    """The number of samples in a batch's inputs (the first tensor's first dim)."""
    if isinstance(x, Tensor):
        return int(x.shape[0]) if x.dim() else 1
    if isinstance(x, (list, tuple)) and x:
        return batch_size(x[0])
    return 1


def _count(mask: Any) -> Any:
    """How many values of ``mask`` are true: an int for a host array; for a device array a 0-d
    device array, not waited for (``EpochSums`` reads the epoch's counts back once)."""
    total = mask.sum()
    return int(total) if is_cpu_array(mask) else total


def count_correct(out: Any, y: Any, loss_fn: Any) -> tuple[Any, int]:
    """(correct predictions, predictions) for a batch; (0, 0) when it cannot tell. On a device
    the counts may be 0-d device arrays (``_count``)."""
    if not isinstance(out, Tensor) or not isinstance(y, Tensor):
        return 0, 0
    o, t = out._data, y._data
    xp = array_module(o)
    name = type(loss_fn).__name__
    if t.dtype.kind in "iu" and o.ndim == t.ndim + 1 and o.ndim >= 1:
        pred = xp.argmax(o, axis=class_dim(out, y) if o.ndim > 1 else 0)
        ignore = getattr(loss_fn, "ignore_index", None)
        if isinstance(ignore, int):  # positions the loss leaves out (padding) are not counted
            keep = t != ignore
            return _count(keep & (pred == t)), _count(keep)
        return _count(pred == t), int(t.size)
    if o.shape == t.shape:
        if name.startswith("BCE") or o.ndim < 2 or o.shape[1] == 1:
            threshold = 0.0 if name == "BCEWithLogitsLoss" else 0.5
            pred = o > threshold
            return _count(pred == (t > 0.5)), int(t.size)
        if o.ndim >= 2:  # class probabilities as targets
            ok = xp.argmax(o, axis=1) == xp.argmax(t, axis=1)
            return _count(ok), int(ok.size)
    return 0, 0


def add_accuracy(sums: dict[str, Any], out: Any, y: Any, loss_fn: Any) -> None:
    """Correct predictions and predictions (``count_correct``)."""
    correct, count = count_correct(out, y, loss_fn)
    sums["correct"] = sums.get("correct", 0) + correct
    sums["n_acc"] = sums.get("n_acc", 0) + count


def accuracy_value(sums: dict[str, Any]) -> float | None:
    return sums["correct"] / sums["n_acc"] if sums.get("n_acc") else None


def add_regression(sums: dict[str, Any], out: Any, y: Any, loss_fn: Any) -> None:
    """Per output column: sums of |error|, error², y and y², and the rows."""
    if isinstance(out, Tensor) and isinstance(y, Tensor) and out.numel() == y.numel():
        _add_regression(sums, out.detach()._data, y._data)


def _host(arr: Any) -> Any:
    """A numpy copy of a (possibly cupy) array, for the small per-batch sums."""
    import numpy as np

    get = getattr(arr, "get", None)
    return np.asarray(get() if callable(get) and not isinstance(arr, np.ndarray) else arr)


def _class_scores(out: Any, y: Any) -> tuple[Any, Any] | None:
    """(scores (N, C), int64 targets (N,)) as numpy arrays for class-index targets, else None."""
    import numpy as np

    if not isinstance(out, Tensor) or not isinstance(y, Tensor):
        return None
    o, t = out.detach()._data, y._data
    if o.ndim != 2 or t.ndim != 1 or t.dtype.kind not in "iu" or o.shape[0] != t.shape[0]:
        return None
    return _host(o), _host(t).astype(np.int64)


def add_top5(sums: dict[str, Any], out: Any, y: Any, loss_fn: Any) -> None:
    """Samples whose target is among the 5 highest scores, and samples."""
    import numpy as np

    pair = _class_scores(out, y)
    if pair is None:
        return
    scores, target = pair
    k = min(5, scores.shape[1])
    top = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    sums["top5_hit"] = sums.get("top5_hit", 0) + int((top == target[:, None]).any(1).sum())
    sums["top5_n"] = sums.get("top5_n", 0) + int(target.size)


def top5_value(sums: dict[str, Any]) -> float | None:
    return sums["top5_hit"] / sums["top5_n"] if sums.get("top5_n") else None


def add_f1(sums: dict[str, Any], out: Any, y: Any, loss_fn: Any) -> None:
    """Per-class true positives, false positives and false negatives of the argmax."""
    import numpy as np

    pair = _class_scores(out, y)
    if pair is None:
        return
    scores, target = pair
    pred = scores.argmax(1)
    size = max(scores.shape[1], int(target.max(initial=0)) + 1)
    for key, counts in (
        ("tp", np.bincount(target[pred == target], minlength=size)),
        ("fp", np.bincount(pred[pred != target], minlength=size)),
        ("fn", np.bincount(target[pred != target], minlength=size)),
    ):
        old = sums.get(key, [])
        old = old + [0] * (size - len(old))
        sums[key] = [int(a) + int(b) for a, b in zip(old, counts.tolist())]


def f1_value(sums: dict[str, Any]) -> float | None:
    """The mean over classes seen in the targets or predictions of 2TP/(2TP+FP+FN)."""
    if "tp" not in sums:
        return None
    n = max(len(sums["tp"]), len(sums["fp"]), len(sums["fn"]))
    tp, fp, fn = ((sums[k] + [0] * n)[:n] for k in ("tp", "fp", "fn"))
    f1 = [2 * a / (2 * a + b + c) for a, b, c in zip(tp, fp, fn) if 2 * a + b + c]
    return sum(f1) / len(f1) if f1 else None


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


def mae_value(sums: dict[str, Any]) -> float | None:
    rows = sums.get("rows", 0)
    return sum(sums["abs"]) / (rows * len(sums["abs"])) if rows else None


def rmse_value(sums: dict[str, Any]) -> float | None:
    import math

    rows = sums.get("rows", 0)
    return math.sqrt(sum(sums["sq"]) / (rows * len(sums["sq"]))) if rows else None


def r2_value(sums: dict[str, Any]) -> float | None:
    """1 - SS_res/SS_tot per output column (columns with variance), averaged."""
    rows = sums.get("rows", 0)
    r2 = []
    for sq, y, y2 in zip(sums.get("sq", []), sums.get("y", []), sums.get("y2", [])):
        total = y2 - y * y / rows
        if total > 0:
            r2.append(1.0 - sq / total)
    return sum(r2) / len(r2) if r2 else None


def add_perplexity(sums: dict[str, Any], out: Any, y: Any, loss_fn: Any) -> None:
    """The summed cross-entropy (natural log) of each class-index target under the softmax of
    its scores, per position for sequence targets, and the number of targets (the loss's
    ``ignore_index`` left out). NLLLoss's log-probabilities are their own log-softmax, so this
    is the same for both losses, and unweighted and unsmoothed whatever the loss's settings."""
    if not isinstance(out, Tensor) or not isinstance(y, Tensor):
        return
    o, t = out.detach()._data, y._data
    if t.dtype.kind not in "iu" or o.ndim != t.ndim + 1 or o.ndim < 2:
        return
    xp = array_module(o)  # on the device: only the two sums come back
    scores = xp.moveaxis(o.astype(xp.float64), class_dim(out, y), -1)
    if scores.shape[:-1] != t.shape:
        return
    keep = (t >= 0) & (t < scores.shape[-1])
    ignore = getattr(loss_fn, "ignore_index", None)
    if isinstance(ignore, int):
        keep &= t != ignore
    top = scores.max(-1, keepdims=True)
    index = xp.where(keep, t, 0).astype(xp.int64)[..., None]
    picked = xp.take_along_axis(scores, index, -1)[..., 0]
    # shift and exp in place on the float64 copy (astype copies): the same values without two
    # fresh (N, T, C) buffers a batch, whose page faults cost more than the arithmetic
    scores -= top
    xp.exp(scores, out=scores)
    log_z = top[..., 0] + xp.log(scores.sum(-1))
    nll = xp.where(keep, log_z - picked, 0.0).sum()
    sums["nll_sum"] = sums.get("nll_sum", 0.0) + (float(nll) if is_cpu_array(o) else nll)
    sums["nll_n"] = sums.get("nll_n", 0) + _count(keep)


def perplexity_from_loss(
    sums: dict[str, Any], value: float, out: Any, y: Any, loss_fn: Any
) -> bool:
    """``add_perplexity`` from the batch's loss ``value`` = ``loss_fn(out, y)`` when that loss
    is already the mean cross-entropy of the counted targets (a plain ``CrossEntropyLoss``: mean
    reduction, no class weights, no smoothing): ``value`` times the targets the loss kept, with
    no second log-softmax. False (nothing added) for any other loss or a non-finite value."""
    import math

    from ..nn.loss import CrossEntropyLoss

    if (
        type(loss_fn) is not CrossEntropyLoss
        or loss_fn.reduction != "mean"
        or loss_fn.weight is not None
        or loss_fn.label_smoothing != 0.0
        or not math.isfinite(value)
        or not isinstance(out, Tensor)
        or not isinstance(y, Tensor)
    ):
        return False
    t = y._data
    if t.dtype.kind not in "iu" or out.dim() != t.ndim + 1 or t.ndim < 1:
        return False
    # the loss ran, so every target it did not ignore is a class of ``out``; and some were
    # kept, or the mean would be nan (0/0), not finite
    n = _count(t != loss_fn.ignore_index)
    sums["nll_sum"] = sums.get("nll_sum", 0.0) + value * n
    sums["nll_n"] = sums.get("nll_n", 0) + n
    return True


def perplexity_value(sums: dict[str, Any]) -> float | None:
    """exp of the epoch's mean per-target cross-entropy (not the mean of per-batch exps)."""
    import math

    n = sums.get("nll_n", 0)
    if not n:
        return None
    mean = sums["nll_sum"] / n
    return math.exp(mean) if mean < 709.0 else math.inf
