"""Loss functions (``torch.nn.functional``'s): regression losses built from differentiable ops, and
cross-entropy, NLL and binary cross-entropy as fused Functions whose backwards use Tensor ops (so
``create_graph=True`` gives second derivatives)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...autograd.function import Function
from ...autograd.grad_mode import STATE
from ...backend import array_module
from ...ops.reduction_extra import logsumexp
from ...ops.unary import clamp, exp, log, relu, sigmoid, where
from ...tensor.tensor import Tensor, _make

__all__ = [
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "cross_entropy",
    "huber_loss",
    "l1_loss",
    "mse_loss",
    "nll_loss",
    "smooth_l1_loss",
]

_REDUCTIONS = ("mean", "sum", "none")


# --------------------------------------------------------------------------- helpers
def _legacy_reduction(size_average: bool | None, reduce: bool | None) -> str:
    """PyTorch's mapping of the deprecated ``size_average``/``reduce`` flags to a reduction."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        return "mean"
    return "sum" if reduce else "none"


def _reduction(reduction: str, size_average: bool | None = None, reduce: bool | None = None) -> str:
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduce(loss: Tensor, reduction: str, weight: Tensor | None = None) -> Tensor:
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / weight.sum() if weight is not None else loss.mean()


def _check_same_size(name: str, input: Tensor, target: Any) -> None:
    if not isinstance(target, Tensor):
        raise TypeError(f"{name}: target must be a Tensor, got {type(target).__name__}")
    if input.shape != target.shape:
        raise ValueError(
            f"{name}: the target size {tuple(target.shape)} is different from the input size "
            f"{tuple(input.shape)}; broadcasting them would likely give wrong results. Please "
            "ensure they have the same size."
        )


def _check_weight(input: Tensor, weight: Tensor | None) -> None:
    if weight is not None and weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")


def _upstream(g: Tensor, reduction: str, denom: Any, cdim: int | None = None) -> Tensor:
    """The upstream gradient per element of the unreduced loss (a scalar for mean/sum)."""
    if reduction == "none":
        return g.unsqueeze(cdim) if cdim is not None else g
    if reduction == "mean":
        return g / denom
    return g


def _finish(xp: Any, loss: Any, reduction: str, denom: Any) -> Any:
    if reduction == "none":
        return loss
    total = loss.sum()
    if reduction == "mean":
        with np.errstate(invalid="ignore", divide="ignore"):  # all-ignored batches give nan
            total = total / denom
    return xp.asarray(total)


# --------------------------------------------------------------------------- regression
def mse_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """Mean squared error ``(input - target)**2``, reduced; ``weight`` scales each element."""
    _check_same_size("mse_loss", input, target)
    reduction = _reduction(reduction, size_average, reduce)
    _check_weight(input, weight)
    diff = input - target
    loss = diff * diff
    return _reduce(loss if weight is None else loss * weight, reduction, weight)


def l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """Mean absolute error ``|input - target|``, reduced; ``weight`` scales each element."""
    _check_same_size("l1_loss", input, target)
    reduction = _reduction(reduction, size_average, reduce)
    _check_weight(input, weight)
    loss = (input - target).abs()
    return _reduce(loss if weight is None else loss * weight, reduction, weight)


def smooth_l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    beta: float = 1.0,
) -> Tensor:
    """``0.5 * d**2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 * beta`` (L1 when beta is 0)."""
    _check_same_size("smooth_l1_loss", input, target)
    reduction = _reduction(reduction, size_average, reduce)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    d = (input - target).abs()
    if beta == 0:
        return _reduce(d, reduction)
    return _reduce(where(d < beta, d * d * (0.5 / beta), d - 0.5 * beta), reduction)


def huber_loss(
    input: Tensor,
    target: Tensor,
    reduction: str = "mean",
    delta: float = 1.0,
    weight: Tensor | None = None,
) -> Tensor:
    """``0.5 * d**2`` where ``|d| < delta``, else ``delta * (|d| - 0.5 * delta)``."""
    _check_same_size("huber_loss", input, target)
    reduction = _reduction(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    _check_weight(input, weight)
    d = (input - target).abs()
    loss = where(d < delta, d * d * 0.5, (d - 0.5 * delta) * delta)
    # unlike mse/l1, torch's weighted huber mean is the plain mean of the weighted losses
    return _reduce(loss if weight is None else loss * weight, reduction)


# --------------------------------------------------------------------------- classification
def _class_dim(input: Tensor) -> int:
    if input.ndim == 0:
        raise ValueError("Expected 1 or more dimensions (got 0)")
    return 0 if input.ndim == 1 else 1


def _check_class_target(input: Tensor, target: Tensor, cdim: int) -> None:
    if target._data.dtype.kind not in "iu":
        raise RuntimeError(
            f"expected target dtype to be Long or Byte, but got {target.dtype.name.capitalize()}"
        )
    shape, tshape = tuple(input.shape), tuple(target.shape)
    expected = shape[:cdim] + shape[cdim + 1 :]
    if input.ndim == 2 and target.ndim >= 1 and shape[0] != tshape[0]:
        raise ValueError(
            f"Expected input batch_size ({shape[0]}) to match target batch_size ({tshape[0]})."
        )
    if tshape != expected:
        raise RuntimeError(
            f"Expected target size {list(expected)}, got {list(tshape)} (input of shape "
            f"{list(shape)})"
        )


def _class_weight(input: Tensor, weight: Tensor | None, cdim: int) -> Any:
    """The class weights as an array of the input's dtype, or None."""
    if weight is None:
        return None
    n = input.shape[cdim]
    if weight.shape != (n,):
        raise RuntimeError(
            f"weight tensor should be defined either for all {n} classes or no classes but got "
            f"weight tensor of shape: {list(weight.shape)}"
        )
    return weight._data.astype(input._data.dtype, copy=False)


def _along(arr: Any, cdim: int, ndim: int) -> Any:
    """A (C,) array shaped to broadcast along the class dim of an ``ndim`` array."""
    return arr.reshape((1,) * cdim + (-1,) + (1,) * (ndim - cdim - 1))


class _Targets:
    """Class-index targets resolved against the input: valid mask, safe indices, weights."""

    def __init__(self, xp: Any, t: Any, w: Any, ignore_index: int, n: int, dtype: Any) -> None:
        valid = t != ignore_index
        tc = xp.where(valid, t, 0)
        bad = (tc < 0) | (tc >= n)
        if bool(bad.any()):
            raise IndexError(f"Target {int(tc[bad].ravel()[0])} is out of bounds.")
        self.valid, self.tc = valid, tc
        self.wy = (w[tc] * valid) if w is not None else valid.astype(dtype)

    def onehot(self, xp: Any, n: int, cdim: int, ndim: int) -> Any:
        idx = xp.expand_dims(self.tc, cdim)
        return _along(xp.arange(n), cdim, ndim) == idx


class NllLoss(Function):
    """``-weight[t] * input[t]`` per sample, reduced (mean divides by the summed weights)."""

    _backward_name = "NllLossBackward0"

    @staticmethod
    def forward(
        ctx: Any, x: Tensor, target: Tensor, w: Any, ignore_index: int, reduction: str
    ) -> Any:
        arr = x._data
        xp = array_module(arr)
        cdim = 0 if arr.ndim == 1 else 1
        n = arr.shape[cdim]
        tg = _Targets(xp, target._data, w, ignore_index, n, arr.dtype)
        picked = xp.take_along_axis(arr, xp.expand_dims(tg.tc, cdim), axis=cdim)
        loss = -(tg.wy * picked.squeeze(cdim))
        denom = tg.wy.sum()
        ctx.cdim, ctx.n, ctx.ndim, ctx.targets = cdim, n, arr.ndim, tg
        ctx.reduction, ctx.denom = reduction, denom
        return _finish(xp, loss, reduction, denom)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, ...]:
        xp = array_module(g._data)
        tg, cdim = ctx.targets, ctx.cdim
        coef = -(tg.onehot(xp, ctx.n, cdim, ctx.ndim) * xp.expand_dims(tg.wy, cdim))
        gx = _make(coef.astype(g._data.dtype, copy=False)) * _upstream(
            g, ctx.reduction, _py(ctx.denom), cdim
        )
        return gx, None, None, None, None


def _py(value: Any) -> float:
    return float(value)


class CrossEntropy(Function):
    """``log_softmax`` and the (label-smoothed, weighted) negative log-likelihood in one pass.

    The loss is ``-sum_c A[i, c] * log_softmax(x)[i, c]`` per sample for a coefficient matrix
    ``A`` (one-hot targets, smoothing and class weights, or probability targets), so the input
    gradient is ``softmax(x) * A.sum(c) - A``. Backward recomputes softmax with Tensor ops when a
    graph is being built (double backward), and uses the saved softmax otherwise.
    """

    _backward_name = "NllLossBackward0"

    @staticmethod
    def forward(
        ctx: Any,
        x: Tensor,
        target: Tensor,
        w: Any,
        ignore_index: int,
        reduction: str,
        smoothing: float,
    ) -> Any:
        arr = x._data
        xp = array_module(arr)
        cdim = 0 if arr.ndim == 1 else 1
        n = arr.shape[cdim]
        z = arr - arr.max(axis=cdim, keepdims=True)
        e = xp.exp(z)
        s = e.sum(axis=cdim, keepdims=True)
        logp = z
        logp -= xp.log(s)
        ctx.cdim, ctx.n, ctx.ndim, ctx.w = cdim, n, arr.ndim, w
        ctx.reduction, ctx.smoothing = reduction, smoothing
        ctx.probs = target._data.dtype.kind == "f"
        if ctx.probs:
            t = target._data
            if smoothing > 0:
                t = t * (1 - smoothing) + smoothing / n
            a = t if w is None else t * _along(w, cdim, arr.ndim)
            loss = -(logp * a).sum(axis=cdim)
            denom = arr.size // n
            ctx.save_for_backward(x, target)
            ctx.logp = logp if ctx.needs_input_grad[1] else None
        else:
            tg = _Targets(xp, target._data, w, ignore_index, n, arr.dtype)
            picked = xp.take_along_axis(logp, xp.expand_dims(tg.tc, cdim), axis=cdim)
            loss = -(tg.wy * picked.squeeze(cdim))
            if smoothing > 0:
                lw = logp if w is None else logp * _along(w, cdim, arr.ndim)
                smooth = -(lw.sum(axis=cdim) * tg.valid)
                loss = loss * (1 - smoothing) + smooth * (smoothing / n)
            denom = tg.wy.sum()
            ctx.targets = tg
            ctx.save_for_backward(x, None)
        ctx.denom = denom
        if ctx.needs_input_grad[0]:
            e /= s
            ctx.softmax = e
        return _finish(xp, loss, reduction, denom)

    @staticmethod
    def _coefficients(ctx: Any, xp: Any, dtype: Any) -> Any:
        """The constant coefficient matrix ``A`` of class-index targets."""
        tg, cdim, n, ndim = ctx.targets, ctx.cdim, ctx.n, ctx.ndim
        eps = ctx.smoothing
        a = tg.onehot(xp, n, cdim, ndim) * xp.expand_dims(tg.wy * (1 - eps), cdim)
        if eps > 0:
            wc = xp.ones(n, dtype=dtype) if ctx.w is None else ctx.w
            a = a + _along(wc, cdim, ndim) * xp.expand_dims(tg.valid * (eps / n), cdim)
        return a.astype(dtype, copy=False)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, ...]:
        x, target = ctx.saved_tensors
        cdim, w = ctx.cdim, ctx.w
        xp = array_module(x._data)
        dtype = x._data.dtype
        up = _upstream(g, ctx.reduction, _py(ctx.denom), cdim)
        need_x, need_t = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        wt = None if w is None else _make(_along(w, cdim, ctx.ndim))
        graph = STATE.enabled
        if ctx.probs:
            a = target
            if ctx.smoothing > 0:
                a = a * (1 - ctx.smoothing) + ctx.smoothing / ctx.n
            if wt is not None:
                a = a * wt
        else:
            a = _make(CrossEntropy._coefficients(ctx, xp, dtype))
        gx = gt = None
        if need_x:
            if graph:
                p = exp(x - logsumexp(x, cdim, keepdim=True))
            else:
                p = _make(ctx.softmax)
            gx = (p * a.sum(cdim, keepdim=True) - a) * up
        if need_t:
            if graph or ctx.logp is None:
                logp = x - logsumexp(x, cdim, keepdim=True)
            else:
                logp = _make(ctx.logp)
            gt = -(logp if wt is None else logp * wt) * (up * (1 - ctx.smoothing))
        return gx, gt, None, None, None, None


def _index_args(
    name: str, input: Tensor, target: Tensor, weight: Tensor | None, reduction: str
) -> tuple[int, Any]:
    cdim = _class_dim(input)
    if not isinstance(target, Tensor):
        raise TypeError(f"{name}: target must be a Tensor, got {type(target).__name__}")
    return cdim, _class_weight(input, weight, cdim)


def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Negative log-likelihood of class indices ``target`` under log-probabilities ``input``
    (classes on dim 1, or dim 0 unbatched); ``mean`` divides by the summed target weights."""
    reduction = _reduction(reduction, size_average, reduce)
    cdim, w = _index_args("nll_loss", input, target, weight, reduction)
    _check_class_target(input, target, cdim)
    return NllLoss.apply(input, target, w, ignore_index, reduction)


def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """Cross-entropy between logits ``input`` and class indices or class probabilities."""
    reduction = _reduction(reduction, size_average, reduce)
    cdim, w = _index_args("cross_entropy", input, target, weight, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if target._data.dtype.kind == "f":
        if target.shape != input.shape:
            raise RuntimeError(
                f"cross_entropy: probability targets must have the input's shape "
                f"{list(input.shape)}, got {list(target.shape)}"
            )
        if target._data.dtype != input._data.dtype:
            raise RuntimeError(
                f"expected scalar type {input.dtype.name.capitalize()} but found "
                f"{target.dtype.name.capitalize()}"
            )
    else:
        _check_class_target(input, target, cdim)
    return CrossEntropy.apply(input, target, w, ignore_index, reduction, float(label_smoothing))


class BinaryCrossEntropy(Function):
    """``-w * (t * log(x) + (1 - t) * log(1 - x))`` with the logs clamped at -100, as PyTorch."""

    _backward_name = "BinaryCrossEntropyBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, t: Tensor, w: Tensor | None, reduction: str) -> Any:
        xa, ta = x._data, t._data
        xp = array_module(xa)
        if bool(((xa < 0) | (xa > 1)).any()):
            raise RuntimeError("all elements of input should be between 0 and 1")
        with np.errstate(divide="ignore"):  # log(0) = -inf, clamped to -100 as in PyTorch
            log_x = xp.maximum(xp.log(xa), -100.0)
            log_1mx = xp.maximum(xp.log1p(-xa), -100.0)
        loss = (ta - 1) * log_1mx - ta * log_x
        if w is not None:
            loss = loss * w._data
        ctx.save_for_backward(x, t, w)
        ctx.reduction, ctx.count = reduction, xa.size
        return _finish(xp, loss, reduction, xa.size)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, ...]:
        x, t, w = ctx.saved_tensors
        up = _upstream(g, ctx.reduction, ctx.count)
        if w is not None:
            up = up * w
        gx = gt = None
        if ctx.needs_input_grad[0]:
            gx = (x - t) / clamp((1.0 - x) * x, 1e-12) * up
        if ctx.needs_input_grad[1]:
            gt = (clamp(log(1.0 - x), -100.0) - clamp(log(x), -100.0)) * up
        return gx, gt, None, None


def binary_cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Binary cross-entropy between probabilities ``input`` and ``target`` (same shapes)."""
    reduction = _reduction(reduction, size_average, reduce)
    _check_same_size("binary_cross_entropy", input, target)
    if weight is not None:
        weight = weight.expand(*input.shape) if weight.shape != input.shape else weight
    return BinaryCrossEntropy.apply(input, target, weight, reduction)


def _softplus(x: Tensor) -> Tensor:
    """``log(1 + exp(x))`` without overflow, from differentiable ops."""
    return relu(x) + log(1.0 + exp(-x.abs()))


class BinaryCrossEntropyWithLogits(Function):
    """Sigmoid + binary cross-entropy in the stable form
    ``(1 - t) * x + lw * (log1p(exp(-|x|)) + max(-x, 0))``, ``lw = 1 + (pos_weight - 1) * t``."""

    _backward_name = "BinaryCrossEntropyWithLogitsBackward0"

    @staticmethod
    def forward(
        ctx: Any, x: Tensor, t: Tensor, w: Tensor | None, pw: Tensor | None, reduction: str
    ) -> Any:
        xa, ta = x._data, t._data
        xp = array_module(xa)
        soft = xp.log1p(xp.exp(-xp.abs(xa))) + xp.maximum(-xa, 0)
        if pw is not None:
            soft = soft * ((pw._data - 1) * ta + 1)
        loss = (1 - ta) * xa + soft
        if w is not None:
            loss = loss * w._data
        ctx.save_for_backward(x, t, w, pw)
        ctx.reduction, ctx.count = reduction, xa.size
        return _finish(xp, loss, reduction, xa.size)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, ...]:
        x, t, w, pw = ctx.saved_tensors
        up = _upstream(g, ctx.reduction, ctx.count)
        if w is not None:
            up = up * w
        gx = gt = None
        if ctx.needs_input_grad[0]:
            s = sigmoid(x)
            gx = (s - t if pw is None else s * (pw * t + 1.0 - t) - pw * t) * up
        if ctx.needs_input_grad[1]:
            if pw is None:
                gt = -x * up
            else:  # log(1 - sigmoid(x)) - pos_weight * log(sigmoid(x)), stably
                gt = (pw * _softplus(-x) - _softplus(x)) * up
        return gx, gt, None, None, None


def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """Binary cross-entropy on logits (numerically stable); ``pos_weight`` weighs positives."""
    reduction = _reduction(reduction, size_average, reduce)
    if not isinstance(target, Tensor):
        raise TypeError(f"target must be a Tensor, got {type(target).__name__}")
    if target.shape != input.shape:
        raise ValueError(
            f"Target size ({target.shape}) must be the same as input size ({input.shape})"
        )
    return BinaryCrossEntropyWithLogits.apply(input, target, weight, pos_weight, reduction)
