"""Channel-wise dropout layers ``Dropout1d``, ``Dropout2d``, ``Dropout3d`` (``torch.nn``)."""

from __future__ import annotations

from ..tensor.tensor import Tensor
from .functional.channel_dropout import dropout1d, dropout2d, dropout3d
from .module import Module

__all__ = ["Dropout1d", "Dropout2d", "Dropout3d"]


class _DropoutNd(Module):
    """``p`` and ``inplace``, checked and shown as torch's ``_DropoutNd`` does (not a ``Dropout``)."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(_DropoutNd):
    """Zero whole channels of (N, C, L) or (C, L) input with probability ``p`` in training."""

    def forward(self, input: Tensor) -> Tensor:
        return dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Zero whole channels of (N, C, H, W) input with probability ``p`` in training."""

    def forward(self, input: Tensor) -> Tensor:
        return dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) input with probability ``p``."""

    def forward(self, input: Tensor) -> Tensor:
        return dropout3d(input, self.p, self.training, self.inplace)
