"""The differentiable extreme-value reductions: max/min (whole tensor, or along a dim with
indices) and amax/amin.

Gradients follow PyTorch: a full ``max()``/``amax`` splits the gradient evenly among ties, while
``max(dim)`` sends it to the selected index.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from ..autograd.function import Function
from ..tensor.tensor import Tensor
from ._util import array_module, normalize_dims, wrap, wrap_dim
from .complex_numbers import refuse_complex
from .reduction import _kept_shape
from .reduction_common import check_nonempty, even_split, spread, variant

__all__ = ["amax", "amin", "max", "min"]

MaxResult = namedtuple("max", ["values", "indices"])
MinResult = namedtuple("min", ["values", "indices"])


class Amax(Function):
    """amax/amin over ``dims``: the gradient is split evenly among the tied extreme values."""

    _backward_name = "AmaxBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, dims: Any, keepdim: bool, largest: bool, name: str) -> Any:
        arr = x._data
        check_nonempty(arr, dims, name)
        xp = array_module(arr)
        ctx.in_shape, ctx.kept, ctx.dims = arr.shape, _kept_shape(arr.shape, dims), dims
        out = wrap((xp.max if largest else xp.min)(arr, axis=dims, keepdims=keepdim))
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None, None, None, None]:
        x, out = ctx.saved_tensors
        weight = even_split(x._data, out._data.reshape(ctx.kept), ctx.dims)
        return spread(g, ctx) * weight, None, None, None, None


Amin = variant(Amax, "Amin", "AminBackward0")
MaxAll = variant(Amax, "MaxAll", "MaxBackward1")
MinAll = variant(Amax, "MinAll", "MinBackward1")


class MaxDim(Function):
    """max/min along one dim: (values, int64 indices); the gradient goes to the selected index."""

    _backward_name = "MaxBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, dim: int, keepdim: bool, largest: bool, name: str) -> Any:
        arr = x._data
        xp = array_module(arr)
        ctx.in_shape = arr.shape
        ctx.set_materialize_grads(False)  # the indices never get a gradient
        if arr.ndim == 0:
            ctx.kept, ctx.idx = (), None
            return arr.copy(), xp.zeros((), dtype="int64")
        check_nonempty(arr, (dim,), name)
        idx = (
            arr.argmax(axis=dim, keepdims=True) if largest else arr.argmin(axis=dim, keepdims=True)
        )
        values = xp.take_along_axis(arr, idx, axis=dim)
        # the indices, not the input-sized mask: backward makes that, when one runs
        ctx.kept, ctx.dim, ctx.idx, ctx.dtype = values.shape, dim, idx, arr.dtype
        if not keepdim:
            values, idx = values.squeeze(dim), idx.squeeze(dim)
        return values, idx.astype("int64")

    @staticmethod
    def backward(ctx: Any, g: Tensor, _g_idx: Any) -> tuple[Any, None, None, None, None]:
        if ctx.idx is None or g is None:
            return g, None, None, None, None
        xp = array_module(ctx.idx)
        n = ctx.in_shape[ctx.dim]
        along = xp.arange(n).reshape(
            (1,) * ctx.dim + (n,) + (1,) * (len(ctx.in_shape) - ctx.dim - 1)
        )
        mask = (along == ctx.idx).astype(ctx.dtype)
        return spread(g, ctx) * wrap(mask), None, None, None, None


MinDim = variant(MaxDim, "MinDim", "MinBackward0")


def _max_min(x: Tensor, dim: Any, keepdim: bool, largest: bool) -> Any:
    """``max``/``min`` for every form of ``dim``: None, an int, or another tensor."""
    name = "max" if largest else "min"
    if dim is None or isinstance(dim, Tensor):
        refuse_complex(x, f"\"{name}_all\" not implemented for '{{dtype}}'")
    refuse_complex(x, f"{name}(): does not support complex input", RuntimeError)
    if isinstance(dim, Tensor):
        from .arithmetic import maximum, minimum

        return (maximum if largest else minimum)(x, dim)
    if dim is None:
        return (MaxAll if largest else MinAll).apply(x, None, False, largest, name)
    d = wrap_dim(int(dim), x._data.ndim)
    values, indices = (MaxDim if largest else MinDim).apply(x, d, keepdim, largest, name)
    return (MaxResult if largest else MinResult)(values, indices)


def max(x: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    """``max()``: 0-d maximum; ``max(dim)``: (values, indices); ``max(other)``: ``maximum``."""
    return _max_min(x, dim, keepdim, True)


def min(x: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    """``min()``: 0-d minimum; ``min(dim)``: (values, indices); ``min(other)``: ``minimum``."""
    return _max_min(x, dim, keepdim, False)


def amax(x: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    """The maximum over ``dim`` (all dims by default); ties share the gradient evenly."""
    refuse_complex(x, "\"max_values_cpu\" not implemented for '{dtype}'")
    return Amax.apply(x, normalize_dims(dim, x._data.ndim), keepdim, True, "amax")


def amin(x: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    """The minimum over ``dim`` (all dims by default); ties share the gradient evenly."""
    refuse_complex(x, "\"min_values_cpu\" not implemented for '{dtype}'")
    return Amin.apply(x, normalize_dims(dim, x._data.ndim), keepdim, False, "amin")


TENSOR_METHODS: dict[str, Any] = {name: globals()[name] for name in __all__}
