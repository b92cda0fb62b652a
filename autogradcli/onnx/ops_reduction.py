"""ONNX converters of the reductions: sums, means, max/min, variance, norms, logsumexp,
argmax/argmin, all/any."""

from __future__ import annotations

import inspect
import math
from typing import Any

import numpy as np

from ..ops import discrete_reduction, minmax, reduction, statistics
from .convert import Node
from .graph import GraphContext
from .registry import converter
from .trace import unsupported


def _axes(x: Any, dims: Any) -> list[int] | None:
    """``dims`` (None, an int or a sequence; empty: all) as non-negative axes, None for all."""
    if dims is None or dims == ():
        return None
    dims = (dims,) if isinstance(dims, int) else dims
    return [d % max(x.dim(), 1) for d in dims]


_REDUCE = {
    reduction.Sum: "ReduceSum",
    reduction.Mean: "ReduceMean",
    reduction.MeanAll: "ReduceMean",
}


@converter(*_REDUCE)
def _reduce(g: GraphContext, node: Node) -> Any:
    x, dims, keepdim = node.args
    dt = node.out().dtype
    axes = _axes(x, dims)
    return g.reduce(_REDUCE[node.op.cls], g.cast(x, dt), axes, bool(keepdim))


@converter(reduction.SumAll)
def _sum_all(g: GraphContext, node: Node) -> Any:
    x = node.args[0]
    keepdim = bool(node.args[1]) if len(node.args) > 1 else False
    return g.reduce("ReduceSum", g.cast(x, node.out().dtype), None, keepdim)


@converter(minmax.Amax, minmax.Amin, minmax.MaxAll, minmax.MinAll)
def _amax(g: GraphContext, node: Node) -> Any:
    x, dims, keepdim, largest = node.args[:4]
    axes = _axes(x, dims)
    return g.reduce("ReduceMax" if largest else "ReduceMin", x, axes, bool(keepdim))


@converter(minmax.MaxDim, minmax.MinDim)
def _max_dim(g: GraphContext, node: Node) -> Any:
    x, dim, keepdim, largest = node.args[:4]
    values = g.reduce("ReduceMax" if largest else "ReduceMin", x, [dim % x.dim()], bool(keepdim))
    arg = "ArgMax" if largest else "ArgMin"
    return values, g.op(arg, x, axis=dim % x.dim(), keepdims=int(keepdim), select_last_index=0)


def _denominator(g: GraphContext, x: Any, axes: list[int] | None, correction: float) -> Any:
    """``n - correction`` for the elements each output reduces, from ``Shape`` when a dynamic
    axis is among them (a constant otherwise)."""
    axes = list(range(x.dim())) if axes is None else axes
    if not any(a in x.dynamic for a in axes):
        return g.const(max(math.prod(x.shape[a] for a in axes) - correction, 0), x.dtype)
    sizes = g.op("Gather", g.op("Shape", x), g.ints(axes), axis=0)
    n = g.cast(g.reduce("ReduceProd", sizes, None, False), x.dtype)
    return g.op("Relu", g.op("Sub", n, g.const(correction, x.dtype)))


@converter(statistics.Var, statistics.Std)
def _var(g: GraphContext, node: Node) -> Any:
    x, dims, correction, keepdim, root = node.args
    axes = _axes(x, dims)
    dev = g.op("Sub", x, g.reduce("ReduceMean", x, axes, True))
    out = g.reduce("ReduceSum", g.op("Mul", dev, dev), axes, bool(keepdim))
    out = g.op("Div", out, _denominator(g, x, axes, correction))
    return g.op("Sqrt", out) if root else out


@converter(statistics.Norm)
def _norm(g: GraphContext, node: Node) -> Any:
    x, p, dims, keepdim = node.args
    axes, keep = _axes(x, dims), bool(keepdim)
    a = g.op("Abs", x)
    if p == 2:
        return g.op("Sqrt", g.reduce("ReduceSum", g.op("Mul", a, a), axes, keep))
    if p == 1:
        return g.reduce("ReduceSum", a, axes, keep)
    if p in (math.inf, -math.inf):
        return g.reduce("ReduceMax" if p > 0 else "ReduceMin", a, axes, keep)
    if p == 0:
        return g.reduce(
            "ReduceSum",
            g.cast(g.op("Not", g.op("Equal", a, g.const(0, x.dtype))), x.dtype),
            axes,
            keep,
        )
    powered = g.reduce("ReduceSum", g.op("Pow", a, g.const(p, x.dtype)), axes, keep)
    return g.op("Pow", powered, g.const(1.0 / p, x.dtype))


@converter(statistics.Logsumexp)
def _logsumexp(g: GraphContext, node: Node) -> Any:
    x, dims, keepdim = node.args
    axes, keep = _axes(x, dims), bool(keepdim)
    top = g.reduce("ReduceMax", x, axes, True)
    top = g.op("Where", g.op("IsInf", top), g.const(0, x.dtype), top)  # all -inf: no nan
    sums = g.reduce("ReduceSum", g.op("Exp", g.op("Sub", x, top)), axes, keep)
    shift = (
        top
        if keep
        else (g.squeeze(top, axes) if axes is not None else g.op("Reshape", top, g.ints([])))
    )
    return g.op("Add", g.op("Log", sums), shift)


@converter(discrete_reduction._Discrete)
def _discrete(g: GraphContext, node: Node) -> Any:
    """argmax/argmin/all/any: one Function running an array function, read from its closure
    (the reduction's dims, keepdim and kind); another function is refused."""
    x, fn = node.args
    kind = fn.__qualname__.split(".<locals>")[0]
    found = inspect.getclosurevars(fn).nonlocals
    if kind == "_arg" and {"dim", "keepdim", "largest"} <= found.keys():
        return _argmax(g, x, found["dim"], bool(found["keepdim"]), bool(found["largest"]))
    if kind in ("all", "any") and {"dims", "keepdim"} <= found.keys():
        ints = g.cast(g.cast(x, np.bool_), np.int32)
        op = "ReduceMin" if kind == "all" else "ReduceMax"
        return g.cast(g.reduce(op, ints, found["dims"], bool(found["keepdim"])), np.bool_)
    raise unsupported(discrete_reduction._Discrete)


def _argmax(g: GraphContext, x: Any, dim: Any, keepdim: bool, largest: bool) -> Any:
    op = "ArgMax" if largest else "ArgMin"
    if dim is None:  # the index into the flattened tensor
        flat = g.op(op, g.op("Reshape", x, g.ints([-1])), axis=0, keepdims=0)
        return g.op("Reshape", flat, g.ints([1] * x.dim())) if keepdim else flat
    return g.op(op, x, axis=int(dim) % max(x.dim(), 1), keepdims=int(keepdim))
