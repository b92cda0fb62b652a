"""More reductions: max/min (with indices), amax/amin, argmax/argmin, var/std, prod, logsumexp,
norm, all/any and cumsum, each a Function whose backward uses Tensor ops (double backward works).

Gradients follow PyTorch: a full ``max()``/``amax`` splits the gradient evenly among ties, while
``max(dim)`` sends it to the selected index; ``prod`` stays exact when the input holds zeros.
"""

from __future__ import annotations

import builtins
import math
import warnings
from collections import namedtuple
from typing import Any

import numpy as np

from ..autograd.function import Function
from ..tensor.tensor import Tensor, _make
from ._util import array_module, normalize_dims, wrap, wrap_dim
from .reduction import _kept_shape, _sum_dtype
from .reduction import mean as _mean
from .shape import expand, reshape, transpose

_INF = float("inf")
MaxResult = namedtuple("max", ["values", "indices"])
MinResult = namedtuple("min", ["values", "indices"])


def _spread(g: Tensor, ctx: Any) -> Tensor:
    """The upstream gradient reshaped to the keepdim shape and expanded to the input's shape."""
    if g._data.shape != ctx.kept:
        g = reshape(g, ctx.kept)
    return expand(g, ctx.in_shape)


def _kept(t: Tensor, ctx: Any) -> Tensor:
    return t if t._data.shape == ctx.kept else reshape(t, ctx.kept)


def _count(shape: tuple[int, ...], dims: tuple[int, ...] | None) -> int:
    return math.prod(shape) if dims is None else math.prod(shape[d] for d in dims)


def _variant(base: type, name: str, backward_name: str) -> Any:
    """A Function sharing ``base``'s forward/backward under PyTorch's other grad_fn name."""
    return type(name, (base,), {"_backward_name": backward_name, "__module__": __name__})


def _even_split(x: Any, ref: Any, dims: Any) -> Tensor:
    """Weights 1/count on the entries equal to the reduced extreme ``ref`` (NaNs included)."""
    xp = array_module(x)
    mask = (x == ref) | (xp.isnan(x) & xp.isnan(ref))
    return wrap((mask / mask.sum(axis=dims, keepdims=True)).astype(x.dtype))


def _check_nonempty(arr: Any, dims: tuple[int, ...] | None, name: str) -> None:
    if arr.size:
        return
    if dims is None:
        raise RuntimeError(
            f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
            "Specify the reduction dim with the 'dim' argument."
        )
    for d in dims:
        if arr.shape[d] == 0:
            raise RuntimeError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


# --------------------------------------------------------------------------- max / min
class Amax(Function):
    """amax/amin over ``dims``: the gradient is split evenly among the tied extreme values."""

    _backward_name = "AmaxBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, dims: Any, keepdim: bool, largest: bool, name: str) -> Any:
        arr = x._data
        _check_nonempty(arr, dims, name)
        xp = array_module(arr)
        ctx.in_shape, ctx.kept, ctx.dims = arr.shape, _kept_shape(arr.shape, dims), dims
        out = wrap((xp.max if largest else xp.min)(arr, axis=dims, keepdims=keepdim))
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None, None, None, None]:
        x, out = ctx.saved_tensors
        weight = _even_split(x._data, out._data.reshape(ctx.kept), ctx.dims)
        return _spread(g, ctx) * weight, None, None, None, None


Amin = _variant(Amax, "Amin", "AminBackward0")
MaxAll = _variant(Amax, "MaxAll", "MaxBackward1")
MinAll = _variant(Amax, "MinAll", "MinBackward1")


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
            ctx.kept, ctx.mask = (), None
            return arr.copy(), xp.zeros((), dtype="int64")
        _check_nonempty(arr, (dim,), name)
        idx = (xp.argmax if largest else xp.argmin)(arr, axis=dim, keepdims=True)
        values = xp.take_along_axis(arr, idx, axis=dim)
        ctx.kept = values.shape
        if x._requires_grad:
            shape = [1] * arr.ndim
            shape[dim] = arr.shape[dim]
            ctx.mask = (xp.arange(arr.shape[dim]).reshape(shape) == idx).astype(arr.dtype)
        if not keepdim:
            values, idx = values.squeeze(dim), idx.squeeze(dim)
        return values, idx.astype("int64")

    @staticmethod
    def backward(ctx: Any, g: Tensor, _g_idx: Any) -> tuple[Any, None, None, None, None]:
        if ctx.mask is None or g is None:
            return g, None, None, None, None
        return _spread(g, ctx) * _make(ctx.mask), None, None, None, None


MinDim = _variant(MaxDim, "MinDim", "MinBackward0")


def _max_min(x: Tensor, dim: Any, keepdim: bool, largest: bool) -> Any:
    from .arithmetic import maximum, minimum

    name = "max" if largest else "min"
    if isinstance(dim, Tensor):
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
    return Amax.apply(x, normalize_dims(dim, x._data.ndim), keepdim, True, "amax")


def amin(x: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    return Amin.apply(x, normalize_dims(dim, x._data.ndim), keepdim, False, "amin")


# --------------------------------------------------------------------------- non-differentiable
class _Discrete(Function):
    """Reductions with integer or bool results (argmax, all...): no gradient flows."""

    _backward_name = "NotDifferentiable"

    @staticmethod
    def forward(ctx: Any, x: Tensor, fn: Any) -> Any:
        return fn(x._data)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[None, None]:
        return None, None


def _arg(x: Tensor, dim: Any, keepdim: bool, largest: bool) -> Tensor:
    name = "argmax" if largest else "argmin"

    def fn(arr: Any) -> Any:
        xp = array_module(arr)
        find = xp.argmax if largest else xp.argmin
        if dim is None:
            if arr.size == 0:
                raise RuntimeError(
                    f"{name}(): Expected reduction dim to be specified for input.numel() == 0."
                )
            out = find(arr.reshape(-1))
            return out.astype("int64").reshape((1,) * arr.ndim if keepdim else ())
        if arr.ndim == 0:
            wrap_dim(int(dim), 0)
            return xp.zeros((), dtype="int64")
        d = wrap_dim(int(dim), arr.ndim)
        _check_nonempty(arr, (d,), name)
        return find(arr, axis=d, keepdims=keepdim).astype("int64")

    return _Discrete.apply(x, fn)


def argmax(x: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    return _arg(x, dim, keepdim, True)


def argmin(x: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    return _arg(x, dim, keepdim, False)


def all(x: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    dims = normalize_dims(dim, x._data.ndim)
    return _Discrete.apply(x, lambda a: array_module(a).all(a, axis=dims, keepdims=keepdim))


def any(x: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    dims = normalize_dims(dim, x._data.ndim)
    return _Discrete.apply(x, lambda a: array_module(a).any(a, axis=dims, keepdims=keepdim))


# --------------------------------------------------------------------------- var / std
class Var(Function):
    """Variance with ``correction`` (1: unbiased); Std reuses it and takes the square root."""

    _backward_name = "VarBackward0"

    @staticmethod
    def forward(
        ctx: Any, x: Tensor, dims: Any, correction: float, keepdim: bool, root: bool
    ) -> Any:
        arr = x._data
        if arr.dtype.kind != "f":
            raise RuntimeError("std and var only support floating point and complex dtypes")
        xp = array_module(arr)
        n = _count(arr.shape, dims)
        ctx.in_shape, ctx.kept, ctx.dims = arr.shape, _kept_shape(arr.shape, dims), dims
        ctx.denom, ctx.sqrt = n - correction, root
        if ctx.denom <= 0:
            warnings.warn(
                "var(): degrees of freedom is <= 0. Correction should be strictly less than the "
                "reduction factor (input numel divided by output numel).",
                stacklevel=4,
            )
        dev = arr - arr.mean(axis=dims, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = (dev * dev).sum(axis=dims, keepdims=keepdim) / builtins.max(ctx.denom, 0)
            if ctx.sqrt:
                out = xp.sqrt(out)
        out = wrap(out)
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None, None, None, None]:
        from .unary import where

        x, out = ctx.saved_tensors
        centered = x - _mean(x, ctx.dims, keepdim=True)
        gk = _kept(g, ctx)
        if ctx.sqrt:  # d std = d var / (2 std), zero where std == 0
            o = _kept(out, ctx)
            zero = o == 0
            gk = where(zero, 0.0, gk / where(zero, 1.0, o)) * 0.5
        scale = 2.0 / ctx.denom if ctx.denom != 0 else _INF
        return gk * centered * scale, None, None, None, None


Std = _variant(Var, "Std", "StdBackward0")


def _var_std(fn: Any, root: bool) -> Any:
    def reduce(
        x: Tensor,
        dim: Any = None,
        unbiased: Any = None,
        keepdim: bool = False,
        *,
        correction: Any = None,
    ) -> Tensor:
        if isinstance(dim, bool):  # var(unbiased)
            dim, unbiased = None, dim
        if correction is None:
            correction = 0 if unbiased is False else 1
        return fn.apply(x, normalize_dims(dim, x._data.ndim), correction, keepdim, root)

    reduce.__name__ = reduce.__qualname__ = "std" if root else "var"
    reduce.__doc__ = (
        f"The {reduce.__name__} over ``dim`` with ``correction`` (default 1, unbiased)."
    )
    return reduce


var = _var_std(Var, False)
std = _var_std(Std, True)


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
        from .unary import where

        (x,) = ctx.saved_tensors
        xp = array_module(x._data)
        n = x._data.shape[-1]
        eye = xp.eye(n, dtype=bool)
        rows = expand(x.unsqueeze(-2), x._data.shape[:-1] + (n, n))
        pair = ExclusiveProd.apply(where(_make(eye), 1.0, rows))
        off = _make((~eye).astype(x._data.dtype))
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
            return _spread(g, ctx) * (_kept(out, ctx) / x), None, None
        if ctx.dim is None:
            others = reshape(ExclusiveProd.apply(reshape(x, (-1,))), ctx.in_shape)
        else:
            others = transpose(ExclusiveProd.apply(transpose(x, ctx.dim, -1)), ctx.dim, -1)
        return _spread(g, ctx) * others, None, None


ProdAll = _variant(Prod, "ProdAll", "ProdBackward0")


def prod(x: Tensor, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    if dtype is not None:
        x = x.to(dtype)
    if dim is None:
        return ProdAll.apply(x, None, False)
    d = wrap_dim(int(dim), x._data.ndim)
    return Prod.apply(x, None if x._data.ndim == 0 else d, keepdim)


# --------------------------------------------------------------------------- logsumexp / norm
class Logsumexp(Function):
    """log(sum(exp(x))) shifted by the max, so large inputs neither overflow nor underflow."""

    _backward_name = "LogsumexpBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, dims: Any, keepdim: bool) -> Any:
        from .unary import _float_array

        arr = _float_array(x._data)
        xp = array_module(arr)
        ctx.in_shape, ctx.kept = arr.shape, _kept_shape(arr.shape, dims)
        if arr.size:
            m = xp.max(arr, axis=dims, keepdims=True)
            m = xp.where(xp.isinf(m), 0.0, m).astype(arr.dtype)
        else:
            m = xp.zeros(ctx.kept, dtype=arr.dtype)
        with np.errstate(divide="ignore"):
            out = xp.log(xp.exp(arr - m).sum(axis=dims, keepdims=True)) + m
        out = wrap(out if keepdim else out.reshape(_reduced_shape(arr.shape, dims)))
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None, None]:
        x, out = ctx.saved_tensors
        return _spread(g, ctx) * (x - _kept(out, ctx)).exp(), None, None


def _reduced_shape(shape: tuple[int, ...], dims: Any) -> tuple[int, ...]:
    if dims is None:
        return ()
    return tuple(s for i, s in enumerate(shape) if i not in dims)


def logsumexp(x: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    return Logsumexp.apply(x, normalize_dims(dim, x._data.ndim), keepdim)


class Norm(Function):
    """Vector p-norm over ``dims`` (p = 2, 1, inf, -inf, 0 or any other number)."""

    _backward_name = "LinalgVectorNormBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, p: float, dims: Any, keepdim: bool) -> Any:
        arr = x._data
        if arr.dtype.kind != "f":
            raise RuntimeError(
                "linalg.vector_norm: Expected a floating point or complex tensor as input. "
                f"Got {x.dtype.name.capitalize() if x.dtype.name != 'int64' else 'Long'}"
            )
        xp = array_module(arr)
        ctx.in_shape, ctx.kept, ctx.dims, ctx.p = arr.shape, _kept_shape(arr.shape, dims), dims, p
        a = xp.abs(arr)
        red = {"axis": dims, "keepdims": keepdim}
        if p == 2:
            out = xp.sqrt((a * a).sum(**red))
        elif p == 1:
            out = a.sum(**red)
        elif p == _INF or p == -_INF:
            _check_nonempty(arr, dims, "linalg.vector_norm")
            out = (xp.max if p > 0 else xp.min)(a, **red)
        elif p == 0:
            out = (a != 0).sum(**red).astype(arr.dtype)
        else:
            out = (a**p).sum(**red) ** (1.0 / p)
        out = wrap(out)
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None, None, None]:
        from .unary import where

        x, out = ctx.saved_tensors
        p, gx, norm = ctx.p, _spread(g, ctx), _kept(out, ctx)
        if p == 0:
            return gx * 0.0, None, None, None
        if p == 1:
            return gx * x.sign(), None, None, None
        zero = norm == 0
        if p == 2:
            return gx * x / where(zero, 1.0, norm), None, None, None
        if p == _INF or p == -_INF:
            weight = _even_split(array_module(x._data).abs(x._data), norm._data, ctx.dims)
            return gx * x.sign() * weight, None, None, None
        scaled = x.sign() * x.abs() ** (p - 1.0)
        if p < 1:
            scaled = where(x == 0, 0.0, scaled)
            return scaled * gx * norm ** (1.0 - p), None, None, None
        return scaled * where(zero, 0.0, gx / norm ** (p - 1.0)), None, None, None


def norm(
    x: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False, dtype: Any = None
) -> Tensor:
    if dtype is not None:
        x = x.to(dtype)
    if p is None or p == "fro":
        p = 2.0
    elif isinstance(p, str):
        raise RuntimeError(f"norm(): p={p!r} is not supported (only 'fro' and numbers)")
    return Norm.apply(x, float(p), normalize_dims(dim, x._data.ndim), keepdim)


# --------------------------------------------------------------------------- cumsum
def _cumsum(arr: Any, dim: int, reverse: bool) -> Any:
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
    if dtype is not None:
        x = x.to(dtype)
    return Cumsum.apply(x, 0 if x._data.ndim == 0 else wrap_dim(int(dim), x._data.ndim), False)


_NAMES = "max min amax amin argmax argmin all any var std prod logsumexp norm cumsum"
TENSOR_METHODS: dict[str, Any] = {name: globals()[name] for name in _NAMES.split()}
__all__: list[str] = list(TENSOR_METHODS)
