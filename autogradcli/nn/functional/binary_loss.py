"""Binary cross-entropy on probabilities and on logits, as fused Functions whose backwards use
Tensor ops (so ``create_graph=True`` gives second derivatives)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...autograd.function import Function
from ...backend import array_module
from ...ops.clamp_where import clamp
from ...ops.unary import exp, log, relu, sigmoid
from ...tensor.tensor import Tensor
from .loss_reduction import check_same_size, finish_reduction, resolve_reduction, upstream_grad

__all__ = ["binary_cross_entropy", "binary_cross_entropy_with_logits"]


def _weighted_upstream(g: Tensor, reduction: str, count: int, w: Tensor | None) -> Tensor:
    """The upstream gradient per element, times the element weights ``w`` when given."""
    up = upstream_grad(g, reduction, count)
    return up if w is None else up * w


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
        return finish_reduction(xp, loss, reduction, xa.size)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, ...]:
        x, t, w = ctx.saved_tensors
        up = _weighted_upstream(g, ctx.reduction, ctx.count, w)
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
    reduction = resolve_reduction(reduction, size_average, reduce)
    check_same_size("binary_cross_entropy", input, target)
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
        return finish_reduction(xp, loss, reduction, xa.size)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, ...]:
        x, t, w, pw = ctx.saved_tensors
        up = _weighted_upstream(g, ctx.reduction, ctx.count, w)
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
    reduction = resolve_reduction(reduction, size_average, reduce)
    if not isinstance(target, Tensor):
        raise TypeError(f"target must be a Tensor, got {type(target).__name__}")
    if target.shape != input.shape:
        raise ValueError(
            f"Target size ({target.shape}) must be the same as input size ({input.shape})"
        )
    return BinaryCrossEntropyWithLogits.apply(input, target, weight, pos_weight, reduction)
