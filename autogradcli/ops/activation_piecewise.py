"""More activations: ``hardsigmoid``, ``hardswish``, ``mish``, ``threshold`` (Functions whose
backward is written with Tensor ops, so double backward works) and ``softsign``, ``tanhshrink``,
``glu``, ``prelu`` (compositions of existing ops, as PyTorch composes the first two)."""

from __future__ import annotations

from typing import Any

from ..autograd.function import Function
from ..backend.select import where as select_where
from ..tensor.tensor import Tensor
from ._util import array_module, wrap, wrap_dim
from .clamp_where import where
from .unary import _float_operand

__all__ = ["prelu", "threshold"]  # torch's names; the rest are nn.functional's only


def _mask(x: Tensor, arr: Any) -> Tensor:
    """A constant tensor of ``arr`` (a boolean mask) in ``x``'s dtype."""
    return wrap(arr.astype(x._data.dtype))


class Hardsigmoid(Function):
    """relu6(x + 3) / 6; the slope is 1/6 strictly inside (-3, 3)."""

    _backward_name = "HardsigmoidBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Any:
        ctx.save_for_backward(x)
        xp, arr = _float_operand(x)
        return (xp.clip(arr + 3.0, 0.0, 6.0) / 6.0).astype(arr.dtype)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        (x,) = ctx.saved_tensors
        return g * _mask(x, (x._data > -3.0) & (x._data < 3.0)) * (1.0 / 6.0)


class Hardswish(Function):
    """x * relu6(x + 3) / 6; slope 0 below -3, x/3 + 1/2 on [-3, 3], 1 above (as PyTorch)."""

    _backward_name = "HardswishBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Any:
        ctx.save_for_backward(x)
        xp, arr = _float_operand(x)
        return (arr * xp.clip(arr + 3.0, 0.0, 6.0) / 6.0).astype(arr.dtype)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        (x,) = ctx.saved_tensors
        arr = x._data
        middle = _mask(x, (arr >= -3.0) & (arr <= 3.0))
        return g * (middle * (x / 3.0 + 0.5) + _mask(x, arr > 3.0))


class Mish(Function):
    """x * tanh(softplus(x)); slope tanh(sp) + x * sigmoid(x) * (1 - tanh(sp)^2)."""

    _backward_name = "MishBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Any:
        ctx.save_for_backward(x)
        xp, arr = _float_operand(x)
        return (arr * xp.tanh(xp.logaddexp(arr, 0.0))).astype(arr.dtype)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        (x,) = ctx.saved_tensors
        t = (x.exp() + 1.0).log().tanh()
        return g * (t + x * x.sigmoid() * (1.0 - t * t))


class Threshold(Function):
    """value where x <= threshold, else x (NaN stays NaN, as in torch); the gradient passes
    where not x <= threshold."""

    _backward_name = "ThresholdBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, threshold: Any, value: Any) -> Any:
        ctx.save_for_backward(x)
        ctx.threshold = threshold
        arr = x._data
        xp = array_module(arr)
        return select_where(xp, arr <= threshold, xp.asarray(value, dtype=arr.dtype), arr)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None, None]:
        (x,) = ctx.saved_tensors
        return g * _mask(x, ~(x._data <= ctx.threshold)), None, None


def hardsigmoid(x: Tensor) -> Tensor:
    """relu6(x + 3) / 6."""
    return Hardsigmoid.apply(x)


def hardswish(x: Tensor) -> Tensor:
    """x * relu6(x + 3) / 6."""
    return Hardswish.apply(x)


def mish(x: Tensor) -> Tensor:
    """x * tanh(softplus(x))."""
    return Mish.apply(x)


def threshold(x: Tensor, threshold: float, value: float) -> Tensor:
    """``x`` where ``x > threshold``, else ``value``."""
    return Threshold.apply(x, threshold, value)


def softsign(x: Tensor) -> Tensor:
    """x / (1 + |x|)."""
    return x / (x.abs() + 1)


def tanhshrink(x: Tensor) -> Tensor:
    """x - tanh(x)."""
    return x - x.tanh()


def glu(x: Tensor, dim: int = -1) -> Tensor:
    """a * sigmoid(b), with ``a`` and ``b`` the two halves of ``x`` along ``dim``."""
    if x._data.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = wrap_dim(dim, x._data.ndim)
    n = x._data.shape[d]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {n}")
    a, b = x.split(n // 2, d)
    return a * b.sigmoid()


def prelu(x: Tensor, weight: Tensor) -> Tensor:
    """max(0, x) + weight * min(0, x), one weight for all channels or one per channel (dim 1)."""
    channels = x._data.shape[1] if x._data.ndim >= 2 else 1
    n = weight._data.size
    if n != 1:
        if x._data.ndim == 0 or n != channels:
            raise RuntimeError(
                "Mismatch of parameter numbers and input channel size. Found parameter numbers "
                f"= {n} and channel size = {channels}."
            )
        weight = weight.reshape(n, *([1] * (x._data.ndim - 2)))
    return where(x > 0, x, weight * x)


TENSOR_METHODS: dict[str, Any] = {"prelu": prelu}
