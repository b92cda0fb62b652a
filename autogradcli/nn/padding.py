"""Padding layers (``torch.nn``): ConstantPad, ZeroPad, ReflectionPad, ReplicationPad and
CircularPad in 1, 2 and 3 dims, each ``F.pad`` with a fixed padding and mode."""

from __future__ import annotations

from collections.abc import Sequence

from ..ops.padding import pad
from ..tensor.tensor import Tensor
from .module import Module

__all__ = [
    "CircularPad1d",
    "CircularPad2d",
    "CircularPad3d",
    "ConstantPad1d",
    "ConstantPad2d",
    "ConstantPad3d",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReflectionPad3d",
    "ReplicationPad1d",
    "ReplicationPad2d",
    "ReplicationPad3d",
    "ZeroPad1d",
    "ZeroPad2d",
    "ZeroPad3d",
]


def _padding(padding: int | Sequence[int], n: int) -> tuple[int, ...]:
    if isinstance(padding, int):
        return (padding,) * (2 * n)
    return tuple(int(p) for p in padding)


class _PadNd(Module):
    """A fixed ``padding`` (an int, or (left, right, top, bottom, front, back) as F.pad)."""

    _dims = 1
    _mode = "constant"

    def __init__(self, padding: int | Sequence[int]) -> None:
        super().__init__()
        self.padding = _padding(padding, self._dims)

    def forward(self, input: Tensor) -> Tensor:
        return pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding: int | Sequence[int], value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding: int | Sequence[int]) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def forward(self, input: Tensor) -> Tensor:
        n = self._dims
        if input.ndim not in (n + 1, n + 2):
            raise ValueError(f"expected {n + 1}D or {n + 2}D input (got {input.ndim}D input)")
        return pad(input, self.padding, "circular")


class ConstantPad1d(_ConstantPadNd):
    """Pad the last 1 dim(s) with a constant value."""

    _dims = 1


class ZeroPad1d(_ZeroPadNd):
    """Pad the last 1 dim(s) with zeros."""

    _dims = 1


class ReflectionPad1d(_PadNd):
    """Pad the last 1 dim(s) with the reflection of the input (edge not repeated)."""

    _dims = 1
    _mode = "reflect"


class ReplicationPad1d(_PadNd):
    """Pad the last 1 dim(s) with copies of the edge value."""

    _dims = 1
    _mode = "replicate"


class CircularPad1d(_CircularPadNd):
    """Pad the last 1 dim(s) with the input wrapped around."""

    _dims = 1


class ConstantPad2d(_ConstantPadNd):
    """Pad the last 2 dim(s) with a constant value."""

    _dims = 2


class ZeroPad2d(_ZeroPadNd):
    """Pad the last 2 dim(s) with zeros."""

    _dims = 2


class ReflectionPad2d(_PadNd):
    """Pad the last 2 dim(s) with the reflection of the input (edge not repeated)."""

    _dims = 2
    _mode = "reflect"


class ReplicationPad2d(_PadNd):
    """Pad the last 2 dim(s) with copies of the edge value."""

    _dims = 2
    _mode = "replicate"


class CircularPad2d(_CircularPadNd):
    """Pad the last 2 dim(s) with the input wrapped around."""

    _dims = 2


class ConstantPad3d(_ConstantPadNd):
    """Pad the last 3 dim(s) with a constant value."""

    _dims = 3


class ZeroPad3d(_ZeroPadNd):
    """Pad the last 3 dim(s) with zeros."""

    _dims = 3


class ReflectionPad3d(_PadNd):
    """Pad the last 3 dim(s) with the reflection of the input (edge not repeated)."""

    _dims = 3
    _mode = "reflect"


class ReplicationPad3d(_PadNd):
    """Pad the last 3 dim(s) with copies of the edge value."""

    _dims = 3
    _mode = "replicate"


class CircularPad3d(_CircularPadNd):
    """Pad the last 3 dim(s) with the input wrapped around."""

    _dims = 3
