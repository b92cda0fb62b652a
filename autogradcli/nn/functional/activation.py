"""Functional activations (``torch.nn.functional``): thin wrappers over ``autogradcli.ops``."""

from __future__ import annotations

import warnings
from typing import Any

from ... import ops
from ...tensor.tensor import Tensor

__all__ = [
    "elu",
    "gelu",
    "hardtanh",
    "leaky_relu",
    "log_softmax",
    "logsigmoid",
    "relu",
    "sigmoid",
    "silu",
    "softmax",
    "softplus",
    "tanh",
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
