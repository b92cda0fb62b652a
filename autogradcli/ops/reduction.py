"""Reductions over one or several dims with ``keepdim``: sum and mean (the rest build on these)."""

from __future__ import annotations

from typing import Any

from ..autograd.fixed_arity import binary_apply
from ..autograd.function import Function
from ..autograd.gradient_ops import Expand
from ..tensor.tensor import Tensor
from ._util import normalize_dims
from .shape import reshape


def _kept_shape(shape: tuple[int, ...], dims: tuple[int, ...] | None) -> tuple[int, ...]:
    """``shape`` with reduced dims set to 1 (the keepdim=True shape)."""
    if dims is None:
        return (1,) * len(shape)
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


def _sum_dtype(arr: Any) -> Any:
    """PyTorch sums bools and integers as int64."""
    return "int64" if arr.dtype.kind in "biu" else None


class Sum(Function):
    _backward_name = "SumBackward1"

    @staticmethod
    def forward(ctx: Any, x: Tensor, dims: tuple[int, ...] | None, keepdim: bool) -> Any:
        arr = x._data
        ctx.in_shape = arr.shape
        ctx.kept = _kept_shape(arr.shape, dims)
        return arr.sum(axis=dims, keepdims=keepdim, dtype=_sum_dtype(arr))

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None, None]:
        return _expand_back(g, ctx), None, None


class Mean(Function):
    _backward_name = "MeanBackward1"

    @staticmethod
    def forward(ctx: Any, x: Tensor, dims: tuple[int, ...] | None, keepdim: bool) -> Any:
        arr = x._data
        if arr.dtype.kind not in "fcV":
            raise RuntimeError(
                "mean(): could not infer output dtype. Input dtype must be either a floating "
                f"point or complex dtype. Got: {x.dtype.name.capitalize()}"
            )
        ctx.in_shape = arr.shape
        ctx.kept = _kept_shape(arr.shape, dims)
        n = arr.size if dims is None else 1
        if dims is not None:
            for d in dims:
                n *= arr.shape[d]
        ctx.count = n
        return arr.mean(axis=dims, keepdims=keepdim)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None, None]:
        return _expand_back(g / ctx.count, ctx), None, None


def _expand_back(g: Tensor, ctx: Any) -> Tensor:
    """A reduction's gradient ``g`` broadcast back to the input's shape (a 0-d ``g``, from a
    full reduction, broadcasts as it is; otherwise the reduced dims come back as size 1)."""
    shape = g._data.shape
    if shape != ctx.kept and shape != ():
        g = reshape(g, ctx.kept)
    if g._data.shape == ctx.in_shape:
        return g
    return Expand.apply(g, ctx.in_shape)


def _dims(x: Tensor, dim: Any) -> tuple[int, ...] | None:
    """Reduced dims; a 0-d tensor accepts dim 0/-1 and reduces over nothing, as in PyTorch."""
    dims = normalize_dims(dim, x._data.ndim)
    return None if x._data.ndim == 0 else dims


class SumAll(Function):
    """``x.sum()`` over every element: PyTorch names its node SumBackward0."""

    _backward_name = "SumBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, keepdim: bool = False) -> Any:
        arr = x._data
        ctx.in_shape = arr.shape
        ctx.kept = (1,) * arr.ndim
        if not keepdim and ((k := arr.dtype.kind) == "f" or k == "V"):
            return arr.sum()
        return arr.sum(axis=None, keepdims=keepdim, dtype=_sum_dtype(arr))

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return (_expand_back(g, ctx), None)


_sum_all = binary_apply(SumAll)


class MeanAll(Mean):
    """``x.mean()`` over every element: PyTorch names its node MeanBackward0."""

    _backward_name = "MeanBackward0"


def sum(x: Tensor, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    if dim is None:
        out = _sum_all(x, keepdim)
    else:
        out = Sum.apply(x, _dims(x, dim), keepdim)
    return out if dtype is None else out.to(dtype)


def mean(x: Tensor, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    if dtype is not None:
        x = x.to(dtype)
    return (Mean if dim is not None else MeanAll).apply(x, _dims(x, dim), keepdim)


TENSOR_METHODS: dict[str, Any] = {"sum": sum, "mean": mean}
