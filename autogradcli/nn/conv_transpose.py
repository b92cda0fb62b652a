"""Transposed convolution layers (``torch.nn.ConvTranspose1d``, ``torch.nn.ConvTranspose2d``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..ops.conv_transpose import conv_transpose1d, conv_transpose2d
from ..ops.volumetric import conv_transpose3d
from ..tensor.factory import empty
from ..tensor.tensor import Tensor
from . import init
from .conv import _ConvNd, _ntuple
from .linear import _init_bias
from .module import Module
from .parameter import Parameter

__all__ = ["ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]


class _ConvTransposeNd(_ConvNd):
    """The convolution layers' state with torch's transposed weight, (C_in, C_out / groups, *k)."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        output_padding: Any = 0,
        groups: int = 1,
        bias: bool = True,
        dilation: Any = 1,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        name = type(self).__name__
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {name}')
        if isinstance(padding, str):
            raise ValueError(f"{name}: padding={padding!r} is not supported; give a number")
        Module.__init__(self)
        n = self._dims
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride = _ntuple(stride, n)
        self.padding = _ntuple(padding, n)
        self.dilation = _ntuple(dilation, n)
        self.transposed = True
        self.output_padding = _ntuple(output_padding, n)
        self.groups = groups
        self.padding_mode = padding_mode
        shape = (in_channels, out_channels // groups, *self.kernel_size)
        self.weight = Parameter(empty(*shape, dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(empty(out_channels, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """As torch: kaiming_uniform_(a=sqrt(5)) on the (C_in, C_out / groups, *k) weight."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        _init_bias(self.bias, self.weight)

    _conv: Any  # the functional form: conv_transpose1d, 2d or 3d

    def forward(self, input: Tensor, output_size: Sequence[int] | None = None) -> Tensor:
        op = self._output_padding(input, output_size)
        return type(self)._conv(
            input,
            self.weight,
            self.bias,
            self.stride,
            self.padding,
            op,
            self.groups,
            self.dilation,
        )

    def _output_padding(self, input: Tensor, output_size: Sequence[int] | None) -> tuple:
        """The output_padding that gives ``output_size`` (torch's rule), else the layer's own."""
        if output_size is None:
            return self.output_padding
        n = self._dims
        has_batch = input.ndim == n + 2
        leading = 2 if has_batch else 1
        size = [int(s) for s in output_size]
        if len(size) == leading + n:
            size = size[leading:]
        if len(size) != n:
            raise ValueError(
                f"ConvTranspose{n}D: for {input.ndim}D input, output_size must have {n} "
                f"or {leading + n} elements (got {len(output_size)})"
            )
        spatial = list(input.shape[input.ndim - n :])
        lows = [
            (spatial[d] - 1) * self.stride[d]
            - 2 * self.padding[d]
            + self.dilation[d] * (self.kernel_size[d] - 1)
            + 1
            for d in range(n)
        ]
        highs = [lo + s - 1 for lo, s in zip(lows, self.stride)]
        if any(not lo <= s <= hi for s, lo, hi in zip(size, lows, highs)):
            raise ValueError(
                f"requested an output size of {size}, but valid sizes range from {lows} to "
                f"{highs} (for an input of {type(input.shape)(spatial)})"
            )
        return tuple(s - lo for s, lo in zip(size, lows))


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution over (N, C_in, L) or (C_in, L) input."""

    _dims = 1
    _conv = staticmethod(conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution over (N, C_in, H, W) or (C_in, H, W) input."""

    _dims = 2
    _conv = staticmethod(conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution over (N, C_in, D, H, W) or (C_in, D, H, W) input."""

    _dims = 3
    _conv = staticmethod(conv_transpose3d)
