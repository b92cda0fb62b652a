"""Functional activations (``torch.nn.functional``): thin wrappers over ``autogradcli.ops``."""

from __future__ import annotations

import warnings
from typing import Any

from ... import ops
from ...ops import activation_piecewise as piecewise
from ...tensor.tensor import Tensor

__all__ = [
    "elu",
    "gelu",
    "glu",
    "hardsigmoid",
    "hardswish",
    "hardtanh",
    "leaky_relu",
    "log_softmax",
    "logsigmoid",
    "mish",
    "prelu",
    "relu",
    "sigmoid",
    "silu",
    "softmax",
    "softplus",
    "softsign",
    "tanh",
    "tanhshrink",
    "threshold",
    "threshold_",
]


def _maybe_inplace(input: Tensor, inplace: bool, name: str, op: Any) -> Tensor:
    if not inplace:
        return op(input)
    from ...ops.inplace import apply_inplace

    return apply_inplace(input, name, op)


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, inplace, "relu_", ops.relu)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    return _maybe_inplace(
        input, inplace, "leaky_relu_", lambda t: ops.leaky_relu(t, negative_slope)
    )


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, inplace, "elu_", lambda t: ops.elu(t, alpha))


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    return ops.gelu(input, approximate=approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, inplace, "silu_", ops.silu)


def tanh(input: Tensor) -> Tensor:
    return ops.tanh(input)


def sigmoid(input: Tensor) -> Tensor:
    return ops.sigmoid(input)


def logsigmoid(input: Tensor) -> Tensor:
    return ops.logsigmoid(input)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    return ops.softplus(input, beta, threshold)


def hardtanh(
    input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
) -> Tensor:
    return _maybe_inplace(input, inplace, "hardtanh_", lambda t: ops.hardtanh(t, min_val, max_val))


def _softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include "
        "dim=X as an argument.",
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmax(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None
) -> Tensor:
    """exp(x) / sum(exp(x)) along ``dim`` (computed in ``dtype`` when given)."""
    if dim is None:
        dim = _softmax_dim("softmax", input.dim(), _stacklevel)
    if dtype is not None:
        input = input.to(dtype)
    return ops.softmax(input, dim)


def log_softmax(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None
) -> Tensor:
    """log(softmax(x)) along ``dim``, computed stably."""
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim(), _stacklevel)
    if dtype is not None:
        input = input.to(dtype)
    return ops.log_softmax(input, dim)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """relu6(x + 3) / 6."""
    return _maybe_inplace(input, inplace, "hardsigmoid_", piecewise.hardsigmoid)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * relu6(x + 3) / 6."""
    return _maybe_inplace(input, inplace, "hardswish_", piecewise.hardswish)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * tanh(softplus(x))."""
    return _maybe_inplace(input, inplace, "mish_", piecewise.mish)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``input`` where it is above ``threshold``, else ``value``."""
    return _maybe_inplace(
        input, inplace, "threshold_", lambda t: piecewise.threshold(t, threshold, value)
    )


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """In-place :func:`threshold`."""
    return globals()["threshold"](input, threshold, value, inplace=True)


def softsign(input: Tensor) -> Tensor:
    """x / (1 + |x|)."""
    return piecewise.softsign(input)


def tanhshrink(input: Tensor) -> Tensor:
    """x - tanh(x)."""
    return piecewise.tanhshrink(input)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """a * sigmoid(b) of the two halves of ``input`` along ``dim``."""
    return piecewise.glu(input, dim)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """max(0, x) + weight * min(0, x), ``weight`` shared or per channel (dim 1)."""
    return piecewise.prelu(input, weight)
