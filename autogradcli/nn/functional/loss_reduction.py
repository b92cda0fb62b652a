"""What every loss shares: PyTorch's ``reduction`` argument (with the legacy
``size_average``/``reduce`` flags), reducing an elementwise loss, the input/target/weight checks,
and the reduction's share of the upstream gradient for fused loss Functions."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...tensor.tensor import Tensor

__all__ = [
    "REDUCTIONS",
    "check_same_size",
    "check_weight",
    "finish_reduction",
    "legacy_reduction",
    "reduce_loss",
    "resolve_reduction",
    "upstream_grad",
]

REDUCTIONS = ("mean", "sum", "none")


def legacy_reduction(size_average: bool | None, reduce: bool | None) -> str:
    """PyTorch's mapping of the deprecated ``size_average``/``reduce`` flags to a reduction."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        return "mean"
    return "sum" if reduce else "none"


def resolve_reduction(
    reduction: str, size_average: bool | None = None, reduce: bool | None = None
) -> str:
    """The effective reduction: the legacy flags win when given; ValueError for unknown names."""
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    if reduction not in REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def reduce_loss(loss: Tensor, reduction: str, weight: Tensor | None = None) -> Tensor:
    """An elementwise ``loss`` reduced; a weighted mean divides by the summed ``weight``."""
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / weight.sum() if weight is not None else loss.mean()


def check_same_size(name: str, input: Tensor, target: Any) -> None:
    """PyTorch's errors for a non-Tensor target or one whose shape differs from the input's."""
    if not isinstance(target, Tensor):
        raise TypeError(f"{name}: target must be a Tensor, got {type(target).__name__}")
    if input.shape != target.shape:
        raise ValueError(
            f"{name}: the target size {tuple(target.shape)} is different from the input size "
            f"{tuple(input.shape)}; broadcasting them would likely give wrong results. Please "
            "ensure they have the same size."
        )


def check_weight(input: Tensor, weight: Tensor | None) -> None:
    """A per-element ``weight`` must have the input's shape."""
    if weight is not None and weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")


def upstream_grad(g: Tensor, reduction: str, denom: Any, cdim: int | None = None) -> Tensor:
    """The upstream gradient per element of the unreduced loss (a scalar for mean/sum)."""
    if reduction == "none":
        return g.unsqueeze(cdim) if cdim is not None else g
    if reduction == "mean":
        # every target ignored: no element has a share of the loss (torch's gradient is 0)
        return g * 0.0 if denom == 0 else g / denom
    return g


def finish_reduction(xp: Any, loss: Any, reduction: str, denom: Any) -> Any:
    """Forward of a fused loss: the per-sample ``loss`` array reduced (mean divides by
    ``denom``), as an array of ``xp``."""
    if reduction == "none":
        return loss
    total = loss.sum()
    if reduction == "mean":
        with np.errstate(invalid="ignore", divide="ignore"):  # all-ignored batches give nan
            total = total / denom
    return xp.asarray(total)
