"""Products and running sums: ``prod`` (exact gradient even when the input holds zeros) and
``cumsum``, each a Function whose backward uses Tensor ops (double backward works)."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from ..autograd.function import Function
from ..tensor.tensor import Tensor
from ._util import array_module, wrap, wrap_dim
from .reduction import _kept_shape, _sum_dtype
from .reduction_common import as_kept, spread, variant
from .shape import expand, reshape, transpose

__all__ = ["cummax", "cummin", "cumsum", "logcumsumexp", "prod"]

CummaxResult = namedtuple("cummax", ["values", "indices"])
CumminResult = namedtuple("cummin", ["values", "indices"])


# --------------------------------------------------------------------------- prod
class ExclusiveProd(Function):
    """Along the last dim, each element's product of all the *other* elements (zero-safe)."""

    _backward_name = "ExclusiveProdBackward"

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Any:
        arr = x._data
        xp = array_module(arr)
        ctx.save_for_backward(x)
        ones = xp.ones(arr.shape[:-1] + (1,), dtype=arr.dtype)
        left = xp.cumprod(xp.concatenate([ones, arr[..., :-1]], axis=-1), axis=-1)
        right = xp.cumprod(xp.concatenate([ones, arr[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
        return left * right

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        # d out_i / d x_k (k != i) is the product of all but x_i and x_k: row i of Y is x with
        # x_i set to 1, so ExclusiveProd(Y)[i, k] is that product off the diagonal.
        from .clamp_where import where

        (x,) = ctx.saved_tensors
        xp = array_module(x._data)
        n = x._data.shape[-1]
        eye = xp.eye(n, dtype=bool)
        rows = expand(x.unsqueeze(-2), x._data.shape[:-1] + (n, n))
        pair = ExclusiveProd.apply(where(wrap(eye), 1.0, rows))
        off = wrap((~eye).astype(x._data.dtype))
        return (g.unsqueeze(-1) * pair * off).sum(-2)


class Prod(Function):
    """Product over all elements (dim None) or one dim; the gradient is exact with zeros."""

    _backward_name = "ProdBackward1"

    @staticmethod
    def forward(ctx: Any, x: Tensor, dim: Any, keepdim: bool) -> Any:
        arr = x._data
        dims = None if dim is None else (dim,)
        ctx.in_shape, ctx.kept, ctx.dim = arr.shape, _kept_shape(arr.shape, dims), dim
        out = wrap(arr.prod(axis=dim, keepdims=keepdim, dtype=_sum_dtype(arr)))
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None, None]:
        x, out = ctx.saved_tensors
        if x._data.ndim == 0:
            return reshape(g, ()), None, None
        if not array_module(x._data).any(x._data == 0):
            return spread(g, ctx) * (as_kept(out, ctx) / x), None, None
        if ctx.dim is None:
            others = reshape(ExclusiveProd.apply(reshape(x, (-1,))), ctx.in_shape)
        else:
            others = transpose(ExclusiveProd.apply(transpose(x, ctx.dim, -1)), ctx.dim, -1)
        return spread(g, ctx) * others, None, None


ProdAll = variant(Prod, "ProdAll", "ProdBackward0")


def prod(x: Tensor, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    """The product of all elements, or along ``dim``."""
    if dtype is not None:
        x = x.to(dtype)
    if dim is None:
        return ProdAll.apply(x, None, False)
    d = wrap_dim(int(dim), x._data.ndim)
    return Prod.apply(x, None if x._data.ndim == 0 else d, keepdim)


# --------------------------------------------------------------------------- cumsum
def _cumsum(arr: Any, dim: int, reverse: bool) -> Any:
    """The running sum of ``arr`` along ``dim``, from the end when ``reverse``."""
    xp = array_module(arr)
    if arr.ndim == 0:
        return arr.astype(_sum_dtype(arr) or arr.dtype)
    if not reverse:
        return xp.cumsum(arr, axis=dim, dtype=_sum_dtype(arr))
    rev = tuple(slice(None, None, -1) if i == dim else slice(None) for i in range(arr.ndim))
    return xp.ascontiguousarray(xp.cumsum(arr[rev], axis=dim)[rev])


class Cumsum(Function):
    """Running sum along ``dim``; the reversed running sum is its adjoint (and vice versa)."""

    _backward_name = "CumsumBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, dim: int, reverse: bool) -> Any:
        ctx.dim, ctx.reverse = dim, reverse
        return _cumsum(x._data, dim, reverse)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None, None]:
        return Cumsum.apply(g, ctx.dim, not ctx.reverse), None, None


def cumsum(x: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """The running sum along ``dim``."""
    if dtype is not None:
        x = x.to(dtype)
    return Cumsum.apply(x, 0 if x._data.ndim == 0 else wrap_dim(int(dim), x._data.ndim), False)


def _accumulate(xp: Any, ufunc: Any, arr: Any, axis: int) -> Any:
    """``ufunc.accumulate(arr, axis)``; cupy accumulates add and multiply only, so other array
    modules get a log-step scan (each pass combines every element with the one ``shift`` back)."""
    if xp.__name__ == "numpy":
        return ufunc.accumulate(arr, axis=axis)
    out = xp.moveaxis(arr, axis, 0).copy()
    shift = 1
    while shift < out.shape[0]:
        out[shift:] = ufunc(out[shift:], out[:-shift])
        shift *= 2
    return xp.moveaxis(out, 0, axis)


def _running_extreme(x: Tensor, dim: int, largest: bool) -> tuple[Tensor, Tensor]:
    """The running max (min) along ``dim`` and where it was last reached (ties: the later)."""
    arr = x._data
    xp = array_module(arr)
    if arr.ndim == 0:
        return x * 1, wrap(xp.asarray(0, dtype="int64"))
    d = wrap_dim(int(dim), arr.ndim)
    running = _accumulate(xp, xp.maximum if largest else xp.minimum, arr, d)
    shape = [1] * arr.ndim
    shape[d] = arr.shape[d]
    position = xp.arange(arr.shape[d]).reshape(shape)
    hit = xp.where(arr == running, position, 0)
    index = wrap(_accumulate(xp, xp.maximum, hit, d).astype("int64"))
    return x.gather(d, index), index


def cummax(input: Tensor, dim: int) -> Any:
    """The running maximum along ``dim`` and its indices."""
    return CummaxResult(*_running_extreme(input, dim, True))


def cummin(input: Tensor, dim: int) -> Any:
    """The running minimum along ``dim`` and its indices."""
    return CumminResult(*_running_extreme(input, dim, False))


def logcumsumexp(input: Tensor, dim: int) -> Tensor:
    """log(cumsum(exp(input))) along ``dim``, without overflow or underflow: a running
    ``logaddexp``, one step per position."""
    from .binary_math import logaddexp
    from .join import stack

    if input._data.ndim == 0:
        return input * 1
    d = wrap_dim(int(dim), input._data.ndim)
    steps = list(input.unbind(d))
    for i in range(1, len(steps)):
        steps[i] = logaddexp(steps[i - 1], steps[i])
    return stack(steps, d) if steps else input * 1


TENSOR_METHODS: dict[str, Any] = {name: globals()[name] for name in __all__}
