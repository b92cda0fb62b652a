"""Regression losses (``mse_loss``, ``l1_loss``, ``smooth_l1_loss``, ``huber_loss``), built from
differentiable ops so every order of gradient works."""

from __future__ import annotations

from collections.abc import Callable

from ...ops.clamp_where import where
from ...tensor.tensor import Tensor
from .loss_reduction import check_same_size, check_weight, reduce_loss, resolve_reduction
from .mse_function import MseLoss

__all__ = ["huber_loss", "l1_loss", "mse_loss", "smooth_l1_loss"]


def _weighted_pointwise_loss(
    name: str,
    of_difference: Callable[[Tensor], Tensor],
    input: Tensor,
    target: Tensor,
    size_average: bool | None,
    reduce: bool | None,
    reduction: str,
    weight: Tensor | None,
) -> Tensor:
    """``of_difference(input - target)``, scaled by ``weight`` and reduced (the weighted mean
    divides by the summed weights): the shape shared by mse_loss and l1_loss."""
    check_same_size(name, input, target)
    reduction = resolve_reduction(reduction, size_average, reduce)
    check_weight(input, weight)
    loss = of_difference(input - target)
    return reduce_loss(loss if weight is None else loss * weight, reduction, weight)


def _squared(d: Tensor) -> Tensor:
    return d * d


def _absolute(d: Tensor) -> Tensor:
    return d.abs()


def mse_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """Mean squared error ``(input - target)**2``, reduced; ``weight`` scales each element."""
    if weight is None and isinstance(target, Tensor) and input.shape == target.shape:
        # one MseLossBackward0 node, as PyTorch records
        return MseLoss.apply(input, target, resolve_reduction(reduction, size_average, reduce))
    return _weighted_pointwise_loss(
        "mse_loss", _squared, input, target, size_average, reduce, reduction, weight
    )


def l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """Mean absolute error ``|input - target|``, reduced; ``weight`` scales each element."""
    return _weighted_pointwise_loss(
        "l1_loss", _absolute, input, target, size_average, reduce, reduction, weight
    )


def smooth_l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    beta: float = 1.0,
) -> Tensor:
    """``0.5 * d**2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 * beta`` (L1 when beta is 0)."""
    check_same_size("smooth_l1_loss", input, target)
    reduction = resolve_reduction(reduction, size_average, reduce)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    d = (input - target).abs()
    if beta == 0:
        return reduce_loss(d, reduction)
    return reduce_loss(where(d < beta, d * d * (0.5 / beta), d - 0.5 * beta), reduction)


def huber_loss(
    input: Tensor,
    target: Tensor,
    reduction: str = "mean",
    delta: float = 1.0,
    weight: Tensor | None = None,
) -> Tensor:
    """``0.5 * d**2`` where ``|d| < delta``, else ``delta * (|d| - 0.5 * delta)``."""
    check_same_size("huber_loss", input, target)
    reduction = resolve_reduction(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    check_weight(input, weight)
    d = (input - target).abs()
    loss = where(d < delta, d * d * 0.5, (d - 0.5 * delta) * delta)
    # unlike mse/l1, torch's weighted huber mean is the plain mean of the weighted losses
    return reduce_loss(loss if weight is None else loss * weight, reduction)
