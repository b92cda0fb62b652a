"""PyTorch's fused forms, composed of the basic ops (so every gradient comes with them):
``addmm``, ``addcmul``, ``addcdiv``."""

from __future__ import annotations

from typing import Any

from ..tensor.tensor import Tensor
from .linalg import mm

__all__ = ["addcdiv", "addcmul", "addmm"]


def addmm(
    input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1, out: Any = None
) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)`` (``input`` broadcast to the product's shape)."""
    product = mm(mat1, mat2)
    if alpha != 1:
        product = product * alpha
    if beta == 0:
        return product
    return (input if beta == 1 else input * beta) + product


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """``input + value * tensor1 * tensor2``."""
    return input + (tensor1 * tensor2 if value == 1 else tensor1 * tensor2 * value)


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """``input + value * tensor1 / tensor2``."""
    return input + (tensor1 / tensor2 if value == 1 else tensor1 / tensor2 * value)


TENSOR_METHODS: dict[str, Any] = {name: globals()[name] for name in __all__}
