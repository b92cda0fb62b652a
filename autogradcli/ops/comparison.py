"""Comparisons and logical ops (results are bool tensors, so they never require grad),
plus floor division and remainder."""

from __future__ import annotations

import operator
from typing import Any

from ..autograd.function import Function
from ..autograd.gradient_ops import sum_to
from ..tensor.tensor import Tensor
from ._util import array_module, binary_operands, operator_method
from .complex_numbers import refuse_complex


class Compare(Function):
    """``a <op> b`` elementwise; ``op`` is a Python operator function."""

    _backward_name = "CompareBackward"

    @staticmethod
    def forward(ctx: Any, a: Any, b: Any, op: Any) -> Any:
        if op in _ORDERING:
            refuse_complex(a, _ORDERING[op]), refuse_complex(b, _ORDERING[op])
        x, y, _ = binary_operands(a, b)
        return op(x, y)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[None, None, None]:
        return None, None, None


_ORDERING = {
    op: f"\"{op.__name__}_cpu\" not implemented for '{{dtype}}'"
    for op in (operator.lt, operator.le, operator.gt, operator.ge)
}


def _compare(op: Any) -> Any:
    def compare(a: Any, b: Any) -> Tensor:
        return Compare.apply(a, b, op)

    compare.__name__ = op.__name__
    return compare


eq = _compare(operator.eq)
ne = _compare(operator.ne)
lt = _compare(operator.lt)
le = _compare(operator.le)
gt = _compare(operator.gt)
ge = _compare(operator.ge)


def _logical(op: Any, name: str) -> Any:
    def logical(a: Any, b: Any) -> Tensor:
        x = a._data if isinstance(a, Tensor) else a
        if x.dtype.kind not in "biu":
            raise TypeError(f"{name} is only supported for integer and bool tensors, got {a.dtype}")
        return Compare.apply(a, b, op)

    logical.__name__ = name
    return logical


bitwise_and = _logical(operator.and_, "bitwise_and")
bitwise_or = _logical(operator.or_, "bitwise_or")
bitwise_xor = _logical(operator.xor, "bitwise_xor")


class LogicalNot(Function):
    _backward_name = "LogicalNotBackward"

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Any:
        arr = x._data
        if arr.dtype.kind == "b":
            return ~arr
        if arr.dtype.kind in "iu":
            return ~arr
        raise TypeError("~ (bitwise_not) is only supported for integer and bool tensors")

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> None:
        return None


def bitwise_not(x: Tensor) -> Tensor:
    return LogicalNot.apply(x)


def logical_not(x: Tensor) -> Tensor:
    return Compare.apply(x, 0, operator.eq)


class FloorDivide(Function):
    _backward_name = "FloorDivideBackward"

    @staticmethod
    def forward(ctx: Any, a: Any, b: Any) -> Any:
        x, y, dt = binary_operands(a, b)
        out = x // y
        return out if dt is None or out.dtype == dt else out.astype(dt)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, Any]:
        return g * 0.0, None


class Remainder(Function):
    _backward_name = "RemainderBackward0"

    @staticmethod
    def forward(ctx: Any, a: Any, b: Any) -> Any:
        x, y, dt = binary_operands(a, b)
        ctx.shape = x.shape if hasattr(x, "shape") else ()
        xp = array_module(x if hasattr(x, "dtype") else y)
        out = xp.remainder(x, y)
        return out if dt is None or out.dtype == dt else out.astype(dt)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None]:
        return sum_to(g, ctx.shape), None


def floor_divide(a: Any, b: Any) -> Tensor:
    return FloorDivide.apply(a, b)


def remainder(a: Any, b: Any) -> Tensor:
    return Remainder.apply(a, b)


TENSOR_METHODS: dict[str, Any] = {
    "__eq__": operator_method(eq),
    "__ne__": operator_method(ne),
    "__lt__": operator_method(lt),
    "__le__": operator_method(le),
    "__gt__": operator_method(gt),
    "__ge__": operator_method(ge),
    "__and__": operator_method(bitwise_and),
    "__rand__": operator_method(bitwise_and),
    "__or__": operator_method(bitwise_or),
    "__ror__": operator_method(bitwise_or),
    "__xor__": operator_method(bitwise_xor),
    "__invert__": bitwise_not,
    "__floordiv__": operator_method(floor_divide),
    "__rfloordiv__": operator_method(floor_divide, reflected=True),
    "__mod__": operator_method(remainder),
    "__rmod__": operator_method(remainder, reflected=True),
    "eq": eq,
    "ne": ne,
    "lt": lt,
    "le": le,
    "gt": gt,
    "ge": ge,
    "logical_not": logical_not,
    "floor_divide": floor_divide,
    "remainder": remainder,
}
