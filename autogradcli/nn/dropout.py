"""``Dropout``: random zeroing while training, identity in eval mode."""

from __future__ import annotations

from ..tensor.tensor import Tensor
from . import functional as F
from .functional.linear import check_dropout_p
from .module import Module

__all__ = ["Dropout"]


class _DropoutNd(Module):
    """``p`` and ``inplace``, checked and shown as torch's ``_DropoutNd`` does: the base of
    ``Dropout`` and of the channel dropouts (``Dropout1d/2d/3d``, which are not ``Dropout``s)."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        check_dropout_p(p)
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Zero each element with probability ``p`` in training, scaling the rest by ``1 / (1 - p)``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout(input, self.p, self.training, self.inplace)
