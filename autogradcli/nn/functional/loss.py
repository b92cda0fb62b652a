"""Loss functions (``torch.nn.functional``'s), gathered from ``regression_loss``,
``classification_loss`` (nll, cross-entropy), ``binary_loss`` (binary cross-entropy) and
``divergence_loss`` (kl_div); the
shared reduction logic is in ``loss_reduction``. Every name stays importable from here."""

from __future__ import annotations

from .binary_loss import (  # noqa: F401
    BinaryCrossEntropy,
    BinaryCrossEntropyWithLogits,
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
)
from .classification_loss import CrossEntropy, NllLoss, cross_entropy, nll_loss  # noqa: F401
from .divergence_loss import kl_div
from .regression_loss import huber_loss, l1_loss, mse_loss, smooth_l1_loss

__all__ = [
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "cross_entropy",
    "huber_loss",
    "kl_div",
    "l1_loss",
    "mse_loss",
    "nll_loss",
    "smooth_l1_loss",
]
