"""Pooling in torch.nn.functional: max/avg pooling (1-D and 2-D) and adaptive average pooling."""

from __future__ import annotations

from typing import Any

from ...ops.adaptive_max import adaptive_max_pool1d, adaptive_max_pool2d
from ...ops.convolution import _one
from ...ops.pooling import _pool_args, adaptive_avg_pool2d, avg_pool2d, max_pool2d
from ...ops.volumetric import adaptive_avg_pool3d, avg_pool3d, max_pool3d
from ...tensor.tensor import Tensor

__all__ = [
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "max_pool1d",
    "max_pool1d_with_indices",
    "max_pool2d",
    "max_pool2d_with_indices",
    "max_pool3d",
]


def _check_1d(input: Tensor, name: str) -> None:
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"{name}: Expected 2D or 3D (batch mode) tensor for input, but got: {list(input.shape)}"
        )


def _as_2d(kernel_size: Any, stride: Any, padding: Any, dilation: Any = 1) -> tuple[Any, ...]:
    """1-D pooling arguments as the pairs of the same pooling over the (N, C, 1, L) view."""
    k, s, p, d = _pool_args(kernel_size, stride, padding, dilation, _one)
    return (1, k), (1, s), (0, p), (1, d)


def max_pool2d_with_indices(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = True,
) -> Any:
    """max_pool2d returning (output, indices)."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool1d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """Max pooling over the last dim of (N, C, L) or (C, L) ``input``."""
    _check_1d(input, "max_pool1d")
    k, s, p, d = _as_2d(kernel_size, stride, padding, dilation)
    out = max_pool2d(input.unsqueeze(-2), k, s, p, d, ceil_mode, return_indices)
    if return_indices:
        return out[0].squeeze(-2), out[1].squeeze(-2)
    return out.squeeze(-2)


def max_pool1d_with_indices(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = True,
) -> Any:
    """max_pool1d returning (output, indices)."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def avg_pool1d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    """Average pooling over the last dim of (N, C, L) or (C, L) ``input``."""
    _check_1d(input, "avg_pool1d")
    k, s, p, _ = _as_2d(kernel_size, stride, padding)
    return avg_pool2d(input.unsqueeze(-2), k, s, p, ceil_mode, count_include_pad).squeeze(-2)


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    """Adaptive average pooling over the last dim of (N, C, L) or (C, L) ``input``."""
    _check_1d(input, "adaptive_avg_pool1d")
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, _one(output_size, "output_size"))).squeeze(
        -2
    )
