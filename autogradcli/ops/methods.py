"""Binds the built-in ops to Tensor as methods and operators: the Tensor API in one table."""

from __future__ import annotations

from typing import Any

from ..autograd.function import fixed_apply
from ..tensor.tensor import Tensor
from . import activation, closeness, indexing_extra, join, legacy, reduction_extra, sorting
from . import arithmetic as A
from . import comparison as C
from . import conversion as V
from . import indexing as I
from . import inplace as P
from . import linalg as L
from . import reduction as R
from . import shape as S
from . import unary as U

_OPERANDS = (Tensor, int, float)


def _binary(fn: Any) -> Any:
    """An operator method; NotImplemented for operands we don't take, so Python tries the other side."""

    def method(self: Tensor, other: Any) -> Any:
        if isinstance(other, _OPERANDS):
            return fn(self, other)
        return NotImplemented

    return method


def _operator(cls: Any, reflected: bool = False) -> Any:
    """A built-in op's operator method: ``cls.apply(self, other)`` through its two-argument apply
    (``cls.apply(other, self)`` when ``reflected``); NotImplemented for operands we don't take."""
    if not reflected:
        return fixed_apply(cls, 2, _OPERANDS)  # the apply itself, checking ``other``
    apply2 = fixed_apply(cls, 2)

    def method(self: Tensor, other: Any) -> Any:
        t = type(other)
        if t is float or t is int or isinstance(other, _OPERANDS):
            return apply2(other, self)
        return NotImplemented

    return method


def _iter(self: Tensor) -> Any:
    if self._data.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    return (I.getitem(self, i) for i in range(self._data.shape[0]))


METHODS: dict[str, Any] = {
    # arithmetic operators
    "__add__": _operator(A.Add),
    "__radd__": _operator(A.Add),
    "__sub__": _operator(A.Sub),
    "__rsub__": _operator(A.Sub, reflected=True),
    "__mul__": _operator(A.Mul),
    "__rmul__": _operator(A.Mul),
    "__truediv__": _operator(A.Div),
    "__rtruediv__": _operator(A.Div, reflected=True),
    "__pow__": _operator(A.Pow),
    "__rpow__": _operator(A.Pow, reflected=True),
    "__matmul__": _binary(L.matmul),
    "__rmatmul__": _binary(lambda s, o: L.matmul(o, s)),
    "__floordiv__": _binary(C.floor_divide),
    "__rfloordiv__": _binary(lambda s, o: C.floor_divide(o, s)),
    "__mod__": _binary(C.remainder),
    "__rmod__": _binary(lambda s, o: C.remainder(o, s)),
    "__neg__": U.neg,
    "__pos__": lambda self: self,
    "__abs__": U.abs,
    "__eq__": _binary(C.eq),
    "__ne__": _binary(C.ne),
    "__lt__": _binary(C.lt),
    "__le__": _binary(C.le),
    "__gt__": _binary(C.gt),
    "__ge__": _binary(C.ge),
    "__and__": _binary(C.bitwise_and),
    "__rand__": _binary(C.bitwise_and),
    "__or__": _binary(C.bitwise_or),
    "__ror__": _binary(C.bitwise_or),
    "__xor__": _binary(C.bitwise_xor),
    "__invert__": C.bitwise_not,
    "__iadd__": P.add_,
    "__isub__": P.sub_,
    "__imul__": P.mul_,
    "__itruediv__": P.div_,
    "__getitem__": I.getitem,
    "__setitem__": P.setitem,
    "__iter__": _iter,
    # named arithmetic
    "add": A.add,
    "sub": A.sub,
    "subtract": A.sub,
    "mul": A.mul,
    "multiply": A.mul,
    "div": A.div,
    "divide": A.div,
    "true_divide": A.div,
    "pow": A.pow,
    "maximum": A.maximum,
    "minimum": A.minimum,
    "eq": C.eq,
    "ne": C.ne,
    "lt": C.lt,
    "le": C.le,
    "gt": C.gt,
    "ge": C.ge,
    "logical_not": C.logical_not,
    "floor_divide": C.floor_divide,
    "remainder": C.remainder,
    # unary
    "neg": U.neg,
    "negative": U.neg,
    "exp": U.exp,
    "log": U.log,
    "sqrt": U.sqrt,
    "rsqrt": U.rsqrt,
    "sin": U.sin,
    "cos": U.cos,
    "tanh": U.tanh,
    "sigmoid": U.sigmoid,
    "relu": U.relu,
    "abs": U.abs,
    "sign": U.sign,
    "trunc": U.trunc,
    "clamp": U.clamp,
    "clip": U.clamp,
    # reductions
    "sum": R.sum,
    "mean": R.mean,
    # linear algebra
    "matmul": L.matmul,
    "mm": L.mm,
    "bmm": L.bmm,
    # shape
    "reshape": S.reshape,
    "view": S.view,
    "view_as": S.view_as,
    "reshape_as": S.reshape_as,
    "flatten": S.flatten,
    "unflatten": S.unflatten,
    "permute": S.permute,
    "transpose": S.transpose,
    "t": S.t,
    "T": property(lambda self: S.permute(self, *reversed(range(self._data.ndim)))),
    "mT": property(lambda self: S.transpose(self, -2, -1)),
    "squeeze": S.squeeze,
    "unsqueeze": S.unsqueeze,
    "expand": S.expand,
    "expand_as": S.expand_as,
    "broadcast_to": S.broadcast_to,
    # conversion
    "to": V.to,
    "clone": V.clone,
    "contiguous": V.contiguous,
    "cpu": V.cpu,
    "cuda": V.cuda,
    "float": V.float_,
    "double": V.double,
    "long": V.long,
    "int": V.int_,
    "bool": V.bool_,
    "half": V.half,
    "type_as": V.type_as,
    # in place
    "add_": P.add_,
    "sub_": P.sub_,
    "mul_": P.mul_,
    "div_": P.div_,
    "addcmul_": P.addcmul_,
    "addcdiv_": P.addcdiv_,
    "clamp_": P.clamp_,
    "clip_": P.clamp_,
    "zero_": P.zero_,
    "fill_": P.fill_,
    "copy_": P.copy_,
    "uniform_": P.uniform_,
    "normal_": P.normal_,
}


def bind(methods: dict[str, Any]) -> None:
    """Attach ``methods`` to Tensor."""
    for name, fn in methods.items():
        setattr(Tensor, name, fn)


bind(METHODS)
# Op modules added later keep their own ``TENSOR_METHODS`` table beside their Functions.
for _module in (activation, join, reduction_extra, indexing_extra, legacy, closeness, sorting):
    bind(_module.TENSOR_METHODS)
