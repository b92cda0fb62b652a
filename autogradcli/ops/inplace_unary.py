"""In-place forms (``x.sqrt_()``, ``x.sigmoid_()``...) of out-of-place elementwise ops that
have none yet: each is the out-of-place op recorded in place (``inplace.apply_inplace``)."""

from __future__ import annotations

from typing import Any

from ..tensor.tensor import Tensor
from .inplace import apply_inplace

__all__: list[str] = []

_OPS = [
    "abs",
    "acos",
    "asin",
    "atan",
    "acosh",
    "asinh",
    "atanh",
    "cos",
    "cosh",
    "exp",
    "expm1",
    "log",
    "log10",
    "log1p",
    "log2",
    "neg",
    "reciprocal",
    "relu",
    "rsqrt",
    "sigmoid",
    "sign",
    "sin",
    "sinh",
    "sqrt",
    "square",
    "tan",
    "tanh",
]


def _in_place(name: str) -> Any:
    def method(self: Tensor, *args: Any) -> Tensor:
        return apply_inplace(self, f"{name}_", lambda s: getattr(s, name)(*args), *args)

    method.__name__ = method.__qualname__ = f"{name}_"
    method.__doc__ = f"In-place ``{name}``."
    return method


TENSOR_METHODS: dict[str, Any] = {f"{name}_": _in_place(name) for name in _OPS}
