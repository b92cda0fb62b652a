"""ONNX converters of shape, indexing and joining ops. Sizes computed in Python from a
dynamic axis (``x.view(x.size(0), -1)``) are rebuilt from the graph (``Node.size_list``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autograd.gradient_ops import Expand, SumTo
from ..backend.registry import to_numpy
from ..ops import indexing as ix
from ..ops import join, linalg, reorder, shape
from ..ops.einstein import Einsum
from ..ops.gather_scatter import IndexSelect
from ..ops.padding import ConstantPad
from .convert import Node
from .errors import OnnxExporterError
from .graph import GraphContext
from .registry import converter

_BIG = np.iinfo(np.int64).max


@converter(shape.Reshape, dynamic_args=(1,))
def _reshape(g: GraphContext, node: Node) -> Any:
    return g.op("Reshape", node.args[0], node.size_list(1))


@converter(shape.Permute)
def _permute(g: GraphContext, node: Node) -> Any:
    x, dims = node.args
    return g.op("Transpose", x, perm=[d % x.dim() for d in dims])


@converter(Expand, dynamic_args=(1,))
def _expand(g: GraphContext, node: Node) -> Any:
    x, sizes = node.args
    ones = [1 if s == -1 else s for s in sizes]
    if 1 in node.changing:
        first, second = node.changing[1]
        node.changing[1] = (
            [1 if s == -1 else s for s in first],
            [1 if s == -1 else s for s in second],
        )
    return g.op("Expand", x, node.size_list(1, ones))


@converter(SumTo, dynamic_args=(1,))
def _sum_to(g: GraphContext, node: Node) -> Any:
    x, target = node.args
    lead = x.dim() - len(target)
    axes = list(range(lead)) + [
        lead + i for i, s in enumerate(target) if s == 1 and x.shape[lead + i] != 1
    ]
    out = g.reduce("ReduceSum", x, axes, True) if axes else x
    return g.squeeze(out, list(range(lead))) if lead else out


@converter(join.Cat)
def _cat(g: GraphContext, node: Node) -> Any:
    dim, *xs = node.args
    dt = node.out().dtype
    parts = [g.cast(x, dt) for x in xs if 0 not in x.shape or x.dim() != 1]
    return g.op("Concat", *parts, axis=int(dim))


@converter(join.Stack)
def _stack(g: GraphContext, node: Node) -> Any:
    dim, *xs = node.args
    dim = dim % (xs[0].dim() + 1)
    dt = node.out().dtype
    return g.op("Concat", *[g.unsqueeze(g.cast(x, dt), [dim]) for x in xs], axis=dim)


@converter(join.Split, join.SplitWithSizes)
def _split(g: GraphContext, node: Node) -> Any:
    x, sizes, dim = node.args
    sizes = [node.out(i).shape[dim] for i in range(len(node.outputs))]
    if len(sizes) == 1:
        return (g.op("Identity", x),)
    return g.op("Split", x, g.ints(sizes), axis=int(dim), outputs=len(sizes))


@converter(join.Unbind)
def _unbind(g: GraphContext, node: Node) -> Any:
    x, dim = node.args
    n = len(node.outputs)
    parts = g.op("Split", x, g.ints([1] * n), axis=int(dim), outputs=n) if n > 1 else (x,)
    return tuple(g.squeeze(p, [dim]) for p in parts)


@converter(ix.GetItem, ix._Select, ix._Slice, ix._Unsqueeze, ix._Alias)
def _getitem(g: GraphContext, node: Node) -> Any:
    x, key, basic = node.args
    parts = key if isinstance(key, tuple) else (key,)
    if type(key) is ix.Staged:
        raise OnnxExporterError("indexing that mixes integers with index arrays is not exported")
    if not basic:
        return _gather(g, x, parts)
    consumed = sum(1 for p in parts if p is not None and p is not Ellipsis)
    axes, starts, ends, steps, drop, new = [], [], [], [], [], []
    d = out = 0
    for p in parts:
        if p is Ellipsis:
            skip = x.dim() - consumed
            d, out = d + skip, out + skip
        elif p is None:
            new.append(out)
            out += 1
        elif isinstance(p, slice):
            step = 1 if p.step is None else p.step
            if p != slice(None):
                start = p.start if p.start is not None else (0 if step > 0 else -1)
                stop = p.stop if p.stop is not None else (_BIG if step > 0 else -_BIG)
                axes.append(d), starts.append(start), ends.append(stop), steps.append(step)
            d, out = d + 1, out + 1
        else:  # an integer: a one-wide slice, then that axis dropped
            i = int(p)
            axes.append(d), starts.append(i), ends.append(i + 1 if i != -1 else _BIG)
            steps.append(1), drop.append(d)
            d += 1
    if axes:
        x = g.op("Slice", x, g.ints(starts), g.ints(ends), g.ints(axes), g.ints(steps))
    if drop:
        x = g.squeeze(x, drop)
    if new:
        x = g.unsqueeze(x, new)
    return x if axes or drop or new else g.op("Identity", x)


def _gather(g: GraphContext, x: Any, parts: tuple[Any, ...]) -> Any:
    """``x[..., index_array, ...]`` with one integer index array (a constant) and full slices."""
    arrays = [i for i, p in enumerate(parts) if hasattr(p, "dtype")]
    rest_ok = all(p == slice(None) or p is Ellipsis for i, p in enumerate(parts) if i not in arrays)
    if len(arrays) != 1 or not rest_ok or parts[arrays[0]].dtype.kind not in "iu":
        raise OnnxExporterError(
            "indexing with a boolean mask or several index arrays is not exported (a mask gives "
            "a shape that depends on the data); only x[..., index_array, ...] with full slices"
        )
    at = arrays[0]
    axis = at if Ellipsis not in parts[:at] else x.dim() - (len(parts) - at)
    return g.op("Gather", x, g.const(to_numpy(parts[at]), np.int64), axis=axis)


@converter(IndexSelect)
def _index_select(g: GraphContext, node: Node) -> Any:
    x, _dim, key = node.args
    return _gather(g, x, key if isinstance(key, tuple) else (key,))


@converter(Einsum)
def _einsum(g: GraphContext, node: Node) -> Any:
    (subs, out), *operands = node.args
    return g.op("Einsum", *operands, equation=",".join(subs) + "->" + out)


@converter(linalg.MatMul, linalg.MatVec, linalg.Dot, linalg.BatchedMatMul)
def _matmul(g: GraphContext, node: Node) -> Any:
    return g.op("MatMul", *node.args[:2])


@converter(reorder.Repeat)
def _repeat(g: GraphContext, node: Node) -> Any:
    x, sizes = node.args
    if len(sizes) > x.dim():
        x = g.unsqueeze(x, list(range(len(sizes) - x.dim())))
    return g.op("Tile", x, g.ints(sizes))


@converter(reorder.Flip)
def _flip(g: GraphContext, node: Node) -> Any:
    x, dims = node.args
    n = len(dims)
    return g.op("Slice", x, g.ints([-1] * n), g.ints([-_BIG] * n), g.ints(dims), g.ints([-1] * n))


@converter(ConstantPad)
def _pad(g: GraphContext, node: Node) -> Any:
    x, pads, value = node.args
    flat = [a for a, _ in pads] + [b for _, b in pads]
    return g.op("Pad", x, g.ints(flat), g.const(value, x.dtype))
