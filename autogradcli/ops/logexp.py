"""``log1p`` and ``expm1``: log(1 + x) and exp(x) - 1, accurate where x is near zero."""

from __future__ import annotations

from typing import Any

from ..autograd.fixed_arity import unary_apply
from ..autograd.function import Function
from ..tensor.tensor import Tensor, wrap
from .unary import _float_operand

__all__ = ["expm1", "log1p"]


class Log1p(Function):
    """log(1 + x); its derivative is 1 / (1 + x)."""

    _backward_name = "Log1PBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Any:
        ctx.save_for_backward(x)
        xp, arr = _float_operand(x)
        return xp.log1p(arr)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        (x,) = ctx.saved_tensors
        return g / (x + 1.0)


class Expm1(Function):
    """exp(x) - 1; its derivative is exp(x) = result + 1."""

    _backward_name = "Expm1Backward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Any:
        xp, arr = _float_operand(x)
        out = wrap(xp.expm1(arr))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        (out,) = ctx.saved_tensors
        return g * (out + 1.0)


log1p = unary_apply(Log1p)
expm1 = unary_apply(Expm1)
log1p.__name__ = log1p.__qualname__ = "log1p"
expm1.__name__ = expm1.__qualname__ = "expm1"

TENSOR_METHODS: dict[str, Any] = {"log1p": log1p, "expm1": expm1}
