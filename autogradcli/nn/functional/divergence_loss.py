"""``kl_div``: the Kullback-Leibler divergence loss between log-probabilities and a target
distribution (probabilities, or log-probabilities with ``log_target``)."""

from __future__ import annotations

import warnings

from ...ops.clamp_where import where
from ...tensor.tensor import Tensor
from .loss_reduction import legacy_reduction

__all__ = ["kl_div"]

_MEAN_WARNING = (
    "reduction: 'mean' divides the total loss by both the batch size and the support size."
    "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
    "'mean' will be changed to behave the same as 'batchmean' in the next major release."
)


def kl_div(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    log_target: bool = False,
) -> Tensor:
    """Pointwise ``target * (log(target) - input)`` (0 where target is 0), reduced;
    ``'batchmean'`` divides the sum by the batch size, as the KL divergence's definition does."""
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    elif reduction == "mean":
        warnings.warn(_MEAN_WARNING, UserWarning, stacklevel=2)
    if reduction not in ("mean", "sum", "none", "batchmean"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if log_target:
        loss = target.exp() * (target - input)
    else:
        positive = target > 0
        loss = target * where(positive, target, 1.0).log() - target * input
    if reduction == "none":
        return loss
    if reduction == "batchmean":
        total = loss.sum()
        return total / input.shape[0] if input.ndim else total
    return loss.sum() if reduction == "sum" else loss.mean()
