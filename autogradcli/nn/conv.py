"""Convolution layers (``torch.nn.Conv1d``, ``Conv2d``, ``Conv3d``)."""

from __future__ import annotations

import math
from typing import Any

from ..ops.padding import pad
from ..tensor.factory import empty
from ..tensor.tensor import Tensor
from . import init
from .functional.conv import conv1d, conv2d, conv3d
from .linear import _init_bias
from .module import Module
from .parameter import Parameter

__all__ = ["Conv1d", "Conv2d", "Conv3d"]

_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


def _ntuple(v: Any, n: int) -> tuple[int, ...]:
    if isinstance(v, (tuple, list)):
        return tuple(int(x) for x in v)
    return (int(v),) * n


class _ConvNd(Module):
    """Shared state of the convolution layers: arguments, weight/bias, default init, repr."""

    _dims = 2

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        dilation: Any = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        n = self._dims
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride = _ntuple(stride, n)
        self.dilation = _ntuple(dilation, n)
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(
                    f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}"
                )
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            self.padding: Any = padding
        else:
            self.padding = _ntuple(padding, n)
        if padding_mode not in _PADDING_MODES:
            raise ValueError(
                f"padding_mode must be one of {_PADDING_MODES}, but got "
                f"padding_mode='{padding_mode}'"
            )
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.transposed = False
        self.output_padding = (0,) * n
        self.groups = groups
        self.padding_mode = padding_mode
        shape = (out_channels, in_channels // groups, *self.kernel_size)
        self.weight = Parameter(empty(*shape, dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(empty(out_channels, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """kaiming_uniform_(a=sqrt(5)) weight, bias uniform in ±1/sqrt(fan_in), as PyTorch."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        _init_bias(self.bias, self.weight)

    @property
    def _reversed_padding_repeated_twice(self) -> Any:
        """F.pad's amounts for this padding (last dim first, each side), as PyTorch's attribute:
        a tuple for numeric padding, a list for 'same' and 'valid'."""
        if self.padding == "valid":
            return [0, 0] * len(self.kernel_size)
        out: list[int] = []
        for i in reversed(range(len(self.kernel_size))):
            if self.padding == "same":
                total = self.dilation[i] * (self.kernel_size[i] - 1)
                out += [total // 2, total - total // 2]
            else:
                out += [self.padding[i], self.padding[i]]
        return out if self.padding == "same" else tuple(out)

    def _padded(self, input: Tensor) -> tuple[Tensor, Any]:
        """The input and the padding left to the convolution: a ``padding_mode`` other than
        'zeros' pads here with F.pad's mode, and the convolution pads nothing (as PyTorch)."""
        if self.padding_mode == "zeros":
            return input, self.padding
        return pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode), 0

    def extra_repr(self) -> str:
        s = (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}"
        )
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv1d(_ConvNd):
    """1-D convolution over (N, C_in, L) or (C_in, L) input."""

    _dims = 1

    def forward(self, input: Tensor) -> Tensor:
        x, padding = self._padded(input)
        return conv1d(x, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)


class Conv2d(_ConvNd):
    """2-D convolution over (N, C_in, H, W) or (C_in, H, W) input."""

    _dims = 2

    def forward(self, input: Tensor) -> Tensor:
        x, padding = self._padded(input)
        return conv2d(x, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)


class Conv3d(_ConvNd):
    """3-D convolution over (N, C_in, D, H, W) or (C_in, D, H, W) input."""

    _dims = 3

    def forward(self, input: Tensor) -> Tensor:
        x, padding = self._padded(input)
        return conv3d(x, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)
