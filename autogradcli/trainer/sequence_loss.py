"""Per-position class targets: a model's (N, T, C) scores against (N, T) class indices.

A layer list ends in ``Linear``, so a sequence model scores the classes of every position in
its last dim, as Keras's sparse categorical cross-entropy reads them; PyTorch's
``CrossEntropyLoss``/``NLLLoss`` want the classes in dim 1, (N, C, T). ``compute_loss`` moves
the class dim there, here and only here, for every loss the trainer, evaluation and the config's
dry run compute; the metrics read the class dim from ``class_dim``. The losses themselves keep
PyTorch's semantics exactly.
"""

from __future__ import annotations

from typing import Any

from ..nn.loss import CrossEntropyLoss, NLLLoss
from ..tensor.tensor import Tensor

__all__ = ["class_dim", "classes_last", "compute_loss", "scores_classes_first"]


def classes_last(out: Any, y: Any) -> bool:
    """Whether ``out`` scores classes in its last dim for the per-position class indices ``y``:
    integer ``y`` with one dim fewer than ``out`` (at least one position dim), the positions
    matching (``out`` (N, T, C), ``y`` (N, T); the batch sizes may differ, so a whole data
    set's labels can be checked against a batch's scores). Where the classes could be in either
    dim (C == T) they are taken to be last, as a layer list produces them."""
    if not isinstance(out, Tensor) or not isinstance(y, Tensor):
        return False
    if y._data.dtype.kind not in "iu":
        return False
    return out.dim() >= 3 and y.dim() == out.dim() - 1 and out.shape[1:-1] == y.shape[1:]


def class_dim(out: Any, y: Any) -> int:
    """The dim of ``out`` that scores the classes of the targets ``y``: -1 for per-position
    targets with classes last (``classes_last``), else PyTorch's 1."""
    return -1 if classes_last(out, y) else 1


def scores_classes_first(out: Any, y: Any) -> Any:
    """``out`` in PyTorch's layout for ``y``: (N, T, C) scores become (N, C, T)."""
    if not classes_last(out, y):
        return out
    n = out.dim()
    return out.permute(0, n - 1, *range(1, n - 1))


def compute_loss(loss_fn: Any, out: Any, y: Any) -> Any:
    """``loss_fn(out, y)``; a ``CrossEntropyLoss``/``NLLLoss`` of per-position targets gets
    the scores with the classes in dim 1 (``scores_classes_first``)."""
    if isinstance(loss_fn, (CrossEntropyLoss, NLLLoss)):
        out = scores_classes_first(out, y)
    return loss_fn(out, y)
