"""Channel-wise dropout layers ``Dropout1d``, ``Dropout2d``, ``Dropout3d`` (``torch.nn``)."""

from __future__ import annotations

from ..tensor.tensor import Tensor
from .dropout import _DropoutNd
from .functional.channel_dropout import dropout1d, dropout2d, dropout3d

__all__ = ["Dropout1d", "Dropout2d", "Dropout3d"]


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
