"""Trigonometric and hyperbolic functions and their inverses, ``log2``/``log10``,
``reciprocal`` and ``square``: elementwise Functions whose derivatives are written with Tensor
ops, so grad-of-grad works."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..autograd.fixed_arity import unary_apply
from ..autograd.function import Function
from ..tensor.tensor import Tensor
from .arithmetic import pow
from .unary import _float_operand

__all__ = ["acosh", "arccosh", "arcsinh", "arctanh", "asinh", "atanh", "cosh", "log2", "log10"]
__all__ += ["acos", "arccos", "arcsin", "arctan", "asin", "atan", "reciprocal", "sinh", "square"]
__all__ += ["tan"]


def _elementwise(
    name: str, backward_name: str, derivative: Callable[[Tensor], Tensor]
) -> Callable[[Tensor], Tensor]:
    """The op ``xp.<name>`` on float arrays as a one-argument entry point; its gradient is
    ``g * derivative(x)``."""

    def forward(ctx: Any, x: Tensor) -> Any:
        ctx.save_for_backward(x)
        xp, arr = _float_operand(x)
        with np.errstate(all="ignore"):  # out of the domain gives nan/inf silently, as in torch
            return getattr(xp, f"arc{name[1:]}" if name.startswith("a") else name)(arr)

    def backward(ctx: Any, g: Tensor) -> Tensor:
        (x,) = ctx.saved_tensors
        return g * derivative(x)

    cls = type(
        name.capitalize(),
        (Function,),
        {
            "__doc__": f"Elementwise {name}.",
            "_backward_name": backward_name,
            "forward": staticmethod(forward),
            "backward": staticmethod(backward),
        },
    )
    fn = unary_apply(cls)
    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = __name__
    return fn


sinh = _elementwise("sinh", "SinhBackward0", lambda x: x.cosh())
cosh = _elementwise("cosh", "CoshBackward0", lambda x: x.sinh())
asinh = _elementwise("asinh", "AsinhBackward0", lambda x: (x * x + 1.0).rsqrt())
acosh = _elementwise("acosh", "AcoshBackward0", lambda x: ((x - 1.0) * (x + 1.0)).rsqrt())
atanh = _elementwise("atanh", "AtanhBackward0", lambda x: 1.0 / (1.0 - x * x))
log2 = _elementwise("log2", "Log2Backward0", lambda x: 1.0 / (x * math.log(2.0)))
log10 = _elementwise("log10", "Log10Backward0", lambda x: 1.0 / (x * math.log(10.0)))
tan = _elementwise("tan", "TanBackward0", lambda x: 1.0 + x.tan() ** 2)
asin = _elementwise("asin", "AsinBackward0", lambda x: (1.0 - x * x).rsqrt())
acos = _elementwise("acos", "AcosBackward0", lambda x: -((1.0 - x * x).rsqrt()))
atan = _elementwise("atan", "AtanBackward0", lambda x: 1.0 / (x * x + 1.0))
reciprocal = _elementwise("reciprocal", "ReciprocalBackward0", lambda x: -1.0 / (x * x))
arcsinh, arccosh, arctanh = asinh, acosh, atanh
arcsin, arccos, arctan = asin, acos, atan


def square(input: Tensor) -> Tensor:
    """``input * input`` (as ``pow(input, 2)``: integers stay integers, bool becomes int64)."""
    if input._data.dtype.kind == "b":
        input = input.long()
    return pow(input, 2)


TENSOR_METHODS: dict[str, Any] = {name: globals()[name] for name in __all__}
