"""Checks that the targets suit the loss, beyond what the loss itself refuses.

``CrossEntropyLoss`` accepts float targets of the output's shape as class probabilities, so a
regression data set given to it trains "successfully" on nonsense (with one output column its
loss is exactly 0). A config run says so before training.
"""

from __future__ import annotations

from typing import Any

from ..tensor.tensor import Tensor
from ..trainer.sequence_loss import class_dim

__all__ = ["class_target_problem", "label_range_problem", "shape_mismatch_problem"]

_CLASS_INDEX_LOSSES = ("CrossEntropyLoss", "NLLLoss")
# losses comparing output and target element by element: PyTorch broadcasts (N, 1) against
# (N,) to (N, N) with only a warning, so such a run trains on the wrong loss
_ELEMENTWISE_LOSSES = (
    "MSELoss",
    "L1Loss",
    "SmoothL1Loss",
    "HuberLoss",
    "BCELoss",
    "BCEWithLogitsLoss",
    "SoftMarginLoss",
)


def shape_mismatch_problem(kind: str, out: Any, y: Any) -> str | None:
    """Why an element-wise loss ``kind`` must not compare ``out`` with ``y``, with the exact
    fix, for output (N, 1) against targets (N,) (and the reverse); None otherwise."""
    if kind not in _ELEMENTWISE_LOSSES or not isinstance(out, Tensor) or not isinstance(y, Tensor):
        return None
    o, t = tuple(out.shape), tuple(y.shape)
    if o == t:
        return None
    head = f"{kind} compares the model's output {o} with the targets {t} element by element"
    if o == t + (1,):
        return (
            f"{head}; they would broadcast to {t + t[-1:]} and train on the wrong loss: "
            "add `- Squeeze` (removes the last dim) at the end of the model, or give targets "
            f"of shape {o}"
        )
    if t == o + (1,):
        return (
            f"{head}: add `- Unsqueeze` (a last dim of size 1) at the end of the model, or give "
            f"targets of shape {o}"
        )
    return None  # other mismatches: the loss's own error, reported by build_loss


def class_target_problem(kind: str, out: Any, y: Any) -> str | None:
    """Why the targets ``y`` cannot be meant for the classification loss ``kind`` given the
    model's output ``out`` (None when they can): float targets that are not class
    probabilities."""
    if kind not in _CLASS_INDEX_LOSSES or not isinstance(y, Tensor) or not y.is_floating_point():
        return None
    values = y.detach().cpu().numpy()
    probabilities = (
        isinstance(out, Tensor)
        and kind == "CrossEntropyLoss"
        and tuple(y.shape) == tuple(out.shape)
        and out.dim() >= 2
        and out.shape[1] >= 2
        and bool((values >= 0).all())
        and bool(abs(values.sum(axis=1) - 1).max() < 1e-3)
    )
    if probabilities:
        return None
    sample = ", ".join(f"{v:g}" for v in values.reshape(-1)[:3])
    return (
        f"{kind} needs class indices (integers 0..C-1) as targets, or class probabilities "
        f"of the output's shape, but the targets are floats ({sample}, ...): for regression "
        "targets use MSELoss or L1Loss"
    )


def label_range_problem(kind: str, out: Any, labels: Any, what: str, ignore: Any) -> str | None:
    """Why the class-index ``labels`` (the whole ``what`` set, an integer Tensor) do not fit
    the ``C`` scores of the model's output ``out`` (N, C, ...), or (N, T, C) for per-position
    labels (``sequence_loss.class_dim``), for ``kind``: a label outside
    0..C-1 (``ignore``, the loss's ``ignore_index``, aside). PyTorch fails mid-run instead."""
    if kind not in _CLASS_INDEX_LOSSES or not isinstance(out, Tensor) or out.dim() < 2:
        return None
    if not isinstance(labels, Tensor) or labels.dtype.is_floating_point or labels.numel() == 0:
        return None
    values = labels.detach().cpu().numpy().reshape(-1)
    if isinstance(ignore, int):
        values = values[values != ignore]
    if values.size == 0:
        return None
    classes = int(out.shape[class_dim(out, labels)])
    low, high = int(values.min()), int(values.max())
    if low >= 0 and high < classes:
        return None
    bad = high if high >= classes else low
    return (
        f"{what} has label {bad} but the model gives {classes} class scores (labels "
        f"0..{classes - 1}): {kind} needs every label in that range; make the last layer "
        f"give {max(high + 1, classes)} outputs, or fix the labels"
    )
