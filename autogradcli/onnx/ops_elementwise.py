"""ONNX converters of the elementwise ops: arithmetic, unary functions, activations, comparisons,
casts. Operands are cast to the traced output's dtype, as the engine promotes them."""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from ..autograd.gradient_ops import AddGrads, ToCopy
from ..ops import activation as act
from ..ops import arithmetic as ar
from ..ops import clamp_where, logexp, masking
from ..ops import comparison as cmp
from ..ops import unary as un
from ..ops.conversion import Clone
from .convert import Node
from .graph import GraphContext
from .registry import converter
from .trace import Alias


def _out_dtype(node: Node, i: int = 0) -> Any:
    return node.out(i).dtype


_BINARY = {
    ar.Add: "Add", ar.Sub: "Sub", ar.Mul: "Mul", ar.Div: "Div", ar.Maximum: "Max",
    ar.Minimum: "Min", AddGrads: "Add",
}  # fmt: skip


@converter(*_BINARY)
def _binary(g: GraphContext, node: Node) -> Any:
    dt = _out_dtype(node)
    a, b = node.args[:2]
    return g.op(_BINARY[node.op.cls], g.cast(a, dt), g.cast(b, dt))


@converter(ar.Pow)
def _pow(g: GraphContext, node: Node) -> Any:
    dt = _out_dtype(node)
    a, b = node.args
    if not isinstance(b, str) and b == 2:
        a = g.cast(a, dt)
        return g.op("Mul", a, a)
    return g.op("Pow", g.cast(a, dt), g.cast(b, dt))


_UNARY = {
    un.Neg: "Neg", un.Exp: "Exp", un.Log: "Log", un.Sqrt: "Sqrt", un.Sin: "Sin", un.Cos: "Cos",
    un.Tanh: "Tanh", un.Sigmoid: "Sigmoid", un.Relu: "Relu", un.Abs: "Abs", un.Sign: "Sign",
    act.Erf: "Erf", Clone: "Identity",
}  # fmt: skip


@converter(*_UNARY)
def _unary(g: GraphContext, node: Node) -> Any:
    return g.op(_UNARY[node.op.cls], node.args[0])


@converter(Alias)
def _alias(g: GraphContext, node: Node) -> Any:
    return node.args[0]


@converter(un.Rsqrt)
def _rsqrt(g: GraphContext, node: Node) -> Any:
    return g.op("Reciprocal", g.op("Sqrt", node.args[0]))


@converter(un.Trunc)
def _trunc(g: GraphContext, node: Node) -> Any:
    x = node.args[0]
    return g.op("Mul", g.op("Sign", x), g.op("Floor", g.op("Abs", x)))


@converter(logexp.Log1p)
def _log1p(g: GraphContext, node: Node) -> Any:
    x = node.args[0]
    return g.op("Log", g.op("Add", x, g.const(1, x.dtype)))


@converter(logexp.Expm1)
def _expm1(g: GraphContext, node: Node) -> Any:
    x = node.args[0]
    return g.op("Sub", g.op("Exp", x), g.const(1, x.dtype))


@converter(clamp_where.Clamp)
def _clamp(g: GraphContext, node: Node) -> Any:
    x, lo, hi = node.args
    dt = _out_dtype(node)
    out = g.cast(x, dt)
    if lo is not None:
        out = g.op("Max", out, g.cast(lo, dt))
    if hi is not None:
        out = g.op("Min", out, g.cast(hi, dt))
    return out


@converter(act.Hardtanh)
def _hardtanh(g: GraphContext, node: Node) -> Any:
    x, lo, hi = node.args
    return g.op("Clip", x, g.const(lo, x.dtype), g.const(hi, x.dtype))


@converter(clamp_where.Where)
def _where(g: GraphContext, node: Node) -> Any:
    cond, a, b = node.args
    dt = _out_dtype(node)
    return g.op("Where", g.cast(cond, np.bool_), g.cast(a, dt), g.cast(b, dt))


@converter(masking.MaskedFill)
def _masked_fill(g: GraphContext, node: Node) -> Any:
    x, mask, value = node.args
    return g.op("Where", g.cast(mask, np.bool_), g.cast(value, x.dtype), x)


@converter(masking.Tril, masking.Triu)
def _trilu(g: GraphContext, node: Node) -> Any:
    x, diagonal, upper = node.args
    return g.op("Trilu", x, g.const(diagonal), upper=int(upper))


@converter(ToCopy)
def _to_copy(g: GraphContext, node: Node) -> Any:
    return g.op("Cast", node.args[0], to=_onnx_type(_out_dtype(node)))


def _onnx_type(dtype: Any) -> int:
    from onnx import helper

    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


_COMPARE = {
    operator.lt: ("Less", False), operator.le: ("LessOrEqual", False),
    operator.gt: ("Greater", False), operator.ge: ("GreaterOrEqual", False),
    operator.eq: ("Equal", False), operator.ne: ("Equal", True),
}  # fmt: skip


@converter(cmp.Compare)
def _compare(g: GraphContext, node: Node) -> Any:
    a, b, op = node.args
    name, negate = _COMPARE[op]
    dt = np.result_type(*[v.dtype if isinstance(v, str) else np.min_scalar_type(v) for v in (a, b)])
    out = g.op(name, g.cast(a, dt), g.cast(b, dt))
    return g.op("Not", out) if negate else out


@converter(cmp.LogicalNot)
def _not(g: GraphContext, node: Node) -> Any:
    return g.op("Not", g.cast(node.args[0], np.bool_))


@converter(act.Softmax, act.LogSoftmax)
def _softmax(g: GraphContext, node: Node) -> Any:
    x, dim = node.args
    return g.op("Softmax" if node.op.cls is act.Softmax else "LogSoftmax", x, axis=int(dim))


@converter(act.LeakyRelu)
def _leaky_relu(g: GraphContext, node: Node) -> Any:
    return g.op("LeakyRelu", node.args[0], alpha=float(node.args[1]))


@converter(act.Elu)
def _elu(g: GraphContext, node: Node) -> Any:
    return g.op("Elu", node.args[0], alpha=float(node.args[1]))


@converter(act.Silu)
def _silu(g: GraphContext, node: Node) -> Any:
    x = node.args[0]
    return g.op("Mul", x, g.op("Sigmoid", x))


@converter(act.LogSigmoid)
def _log_sigmoid(g: GraphContext, node: Node) -> Any:
    x = node.args[0]
    return g.op("Neg", g.op("Softplus", g.op("Neg", x)))


@converter(act.Softplus)
def _softplus(g: GraphContext, node: Node) -> Any:
    x, beta, threshold = node.args
    bx = x if beta == 1 else g.op("Mul", x, g.const(beta, x.dtype))
    soft = g.op("Softplus", bx)
    if beta != 1:
        soft = g.op("Div", soft, g.const(beta, x.dtype))
    return g.op("Where", g.op("Greater", bx, g.const(threshold, x.dtype)), x, soft)


@converter(act.Gelu)
def _gelu(g: GraphContext, node: Node) -> Any:
    x, approximate = node.args
    half, one = g.const(0.5, x.dtype), g.const(1.0, x.dtype)
    if approximate == "tanh":
        cube = g.op("Mul", g.op("Mul", x, x), x)
        inner = g.op("Add", x, g.op("Mul", cube, g.const(0.044715, x.dtype)))
        t = g.op("Tanh", g.op("Mul", inner, g.const(math.sqrt(2.0 / math.pi), x.dtype)))
    else:
        t = g.op("Erf", g.op("Mul", x, g.const(1.0 / math.sqrt(2.0), x.dtype)))
    return g.op("Mul", g.op("Mul", x, half), g.op("Add", t, one))


@converter(cmp.FloorDivide)
def _floor_divide(g: GraphContext, node: Node) -> Any:
    """floor(a / b), computed in floating point (float64 for integers: exact below 2**53)."""
    a, b = node.args
    dt = _out_dtype(node)
    work = dt if dt.kind == "f" else np.dtype(np.float64)
    out = g.op("Floor", g.op("Div", g.cast(a, work), g.cast(b, work)))
    return g.cast(out, dt)


@converter(cmp.Remainder)
def _remainder(g: GraphContext, node: Node) -> Any:
    """Python's modulo (the divisor's sign): ONNX Mod for integers, a - b floor(a / b) else."""
    a, b = node.args
    dt = _out_dtype(node)
    a, b = g.cast(a, dt), g.cast(b, dt)
    if dt.kind != "f":
        return g.op("Mod", a, b, fmod=0)
    return g.op("Sub", a, g.op("Mul", b, g.op("Floor", g.op("Div", a, b))))
