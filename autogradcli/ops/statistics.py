"""Statistical reductions: var/std (with ``correction``), logsumexp and the vector p-norm, each
a Function whose backward uses Tensor ops (double backward works)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..autograd.function import Function
from ..tensor.tensor import Tensor
from ._util import array_module, normalize_dims, wrap, wrap_dim
from .reduction import _kept_shape
from .reduction import mean as _mean
from .reduction_common import (
    INF,
    as_kept,
    check_nonempty,
    even_split,
    reduced_count,
    reduced_shape,
    spread,
    variant,
)
from .unary import _float_operand

__all__ = ["cdist", "count_nonzero", "logsumexp", "nanmean", "nansum", "norm", "std", "std_mean"]
__all__ += ["corrcoef", "cov", "trapezoid", "trapz", "var", "var_mean"]


# --------------------------------------------------------------------------- var / std
class Var(Function):
    """Variance with ``correction`` (1: unbiased); Std reuses it and takes the square root."""

    _backward_name = "VarBackward0"

    @staticmethod
    def forward(
        ctx: Any, x: Tensor, dims: Any, correction: float, keepdim: bool, root: bool
    ) -> Any:
        arr = x._data
        if arr.dtype.kind not in "fV":
            raise RuntimeError("std and var only support floating point and complex dtypes")
        xp = array_module(arr)
        n = reduced_count(arr.shape, dims)
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
            out = (dev * dev).sum(axis=dims, keepdims=keepdim) / max(ctx.denom, 0)
            if ctx.sqrt:
                out = xp.sqrt(out)
        out = wrap(out)
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None, None, None, None]:
        from .clamp_where import where

        x, out = ctx.saved_tensors
        centered = x - _mean(x, ctx.dims, keepdim=True)
        gk = as_kept(g, ctx)
        if ctx.sqrt:  # d std = d var / (2 std), zero where std == 0
            o = as_kept(out, ctx)
            zero = o == 0
            gk = where(zero, 0.0, gk / where(zero, 1.0, o)) * 0.5
        scale = 2.0 / ctx.denom if ctx.denom != 0 else INF
        return gk * centered * scale, None, None, None, None


Std = variant(Var, "Std", "StdBackward0")


def _var_std(fn: Any, root: bool) -> Any:
    """The public ``var``/``std``: PyTorch's ``(dim, unbiased, keepdim, *, correction)`` forms."""

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
        dims = normalize_dims(dim, x._data.ndim)
        if x._data.dtype.kind == "c":  # the variance of |z - mean|: the parts' variances summed
            total = Var.apply(x.real, dims, correction, keepdim, False)
            total = total + Var.apply(x.imag, dims, correction, keepdim, False)
            return total.sqrt() if root else total
        return fn.apply(x, dims, correction, keepdim, root)

    reduce.__name__ = reduce.__qualname__ = "std" if root else "var"
    reduce.__doc__ = (
        f"The {reduce.__name__} over ``dim`` with ``correction`` (default 1, unbiased)."
    )
    return reduce


var = _var_std(Var, False)
std = _var_std(Std, True)


# --------------------------------------------------------------------------- logsumexp
class Logsumexp(Function):
    """log(sum(exp(x))) shifted by the max, so large inputs neither overflow nor underflow."""

    _backward_name = "LogsumexpBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, dims: Any, keepdim: bool) -> Any:
        xp, arr = _float_operand(x)
        ctx.in_shape, ctx.kept = arr.shape, _kept_shape(arr.shape, dims)
        if arr.size:
            m = xp.max(arr, axis=dims, keepdims=True)
            m = xp.where(xp.isinf(m), 0.0, m).astype(arr.dtype)
        else:
            m = xp.zeros(ctx.kept, dtype=arr.dtype)
        with np.errstate(divide="ignore"):
            out = xp.log(xp.exp(arr - m).sum(axis=dims, keepdims=True)) + m
        out = wrap(out if keepdim else out.reshape(reduced_shape(arr.shape, dims)))
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None, None]:
        x, out = ctx.saved_tensors
        return spread(g, ctx) * (x - as_kept(out, ctx)).exp(), None, None


def logsumexp(x: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    """``log(sum(exp(x), dim))``, computed stably."""
    return Logsumexp.apply(x, normalize_dims(dim, x._data.ndim), keepdim)


# --------------------------------------------------------------------------- norm
class Norm(Function):
    """Vector p-norm over ``dims`` (p = 2, 1, inf, -inf, 0 or any other number)."""

    _backward_name = "LinalgVectorNormBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, p: float, dims: Any, keepdim: bool) -> Any:
        arr = x._data
        if arr.dtype.kind not in "fV":
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
        elif p == INF or p == -INF:
            check_nonempty(arr, dims, "linalg.vector_norm")
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
        from .clamp_where import where

        x, out = ctx.saved_tensors
        p, gx, norm = ctx.p, spread(g, ctx), as_kept(out, ctx)
        if p == 0:
            return gx * 0.0, None, None, None
        if p == 1:
            return gx * x.sign(), None, None, None
        zero = norm == 0
        if p == 2:
            return gx * x / where(zero, 1.0, norm), None, None, None
        if p == INF or p == -INF:
            weight = even_split(array_module(x._data).abs(x._data), norm._data, ctx.dims)
            return gx * x.sign() * weight, None, None, None
        scaled = x.sign() * x.abs() ** (p - 1.0)
        if p < 1:
            scaled = where(x == 0, 0.0, scaled)
            return scaled * gx * norm ** (1.0 - p), None, None, None
        return scaled * where(zero, 0.0, gx / norm ** (p - 1.0)), None, None, None


def norm(
    x: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False, dtype: Any = None
) -> Tensor:
    """The vector p-norm over ``dim`` (all elements when None); ``'fro'`` is the 2-norm."""
    if dtype is not None:
        x = x.to(dtype)
    if p is None or p == "fro":
        p = 2.0
    elif isinstance(p, str):
        raise RuntimeError(f"norm(): p={p!r} is not supported (only 'fro' and numbers)")
    if x._data.dtype.kind == "c":  # every p-norm of z is that of |z|
        x = x.abs()
    return Norm.apply(x, float(p), normalize_dims(dim, x._data.ndim), keepdim)


def var_mean(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
             correction: Any = None) -> tuple[Tensor, Tensor]:  # fmt: skip
    """(var, mean) over ``dim`` in one call."""
    v = var(input, dim, unbiased, keepdim, correction=correction)
    return v, _mean(input, dim, keepdim)


def std_mean(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
             correction: Any = None) -> tuple[Tensor, Tensor]:  # fmt: skip
    """(std, mean) over ``dim`` in one call."""
    s = std(input, dim, unbiased, keepdim, correction=correction)
    return s, _mean(input, dim, keepdim)


def count_nonzero(input: Tensor, dim: Any = None) -> Tensor:
    """The number of non-zero entries (int64), over ``dim`` or all of them."""
    arr = input._data
    dims = normalize_dims(dim, arr.ndim)
    return wrap(array_module(arr).count_nonzero(arr, axis=dims).astype("int64"))


def nansum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """The sum over ``dim`` with NaNs counted as zero."""
    from .clamp_where import where

    clean = where(input.isnan(), 0.0, input) if input._data.dtype.kind == "f" else input
    return (
        clean.sum(dim, keepdim=keepdim, dtype=dtype) if dim is not None else clean.sum(dtype=dtype)
    )


def nanmean(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """The mean over ``dim`` of the entries that are not NaN."""
    if input._data.dtype.kind != "f":
        raise RuntimeError(
            "nanmean(): expected input to have floating point or complex dtype but got "
            f"{input.dtype.name.capitalize() if input.dtype.name != 'int64' else 'Long'}"
        )
    count = (
        (~input.isnan()).sum(dim, keepdim=keepdim) if dim is not None else (~input.isnan()).sum()
    )
    return nansum(input, dim, keepdim, dtype=dtype) / count


def cov(input: Tensor, *, correction: int = 1, fweights: Tensor | None = None,
        aweights: Tensor | None = None) -> Tensor:  # fmt: skip
    """The covariance matrix of the variables in the rows of ``input`` (observations in its
    columns), optionally weighted by frequency and importance weights."""
    if input._data.ndim > 2:
        raise ValueError(
            f"cov(): expected input to have two or fewer dimensions but got an input with {input._data.ndim} dimensions"
        )
    x = input.reshape(1, -1) if input._data.ndim < 2 else input
    if x._data.dtype.kind not in "fc":
        from ..tensor.dtype import get_default_dtype

        x = x.to(get_default_dtype())
    w = None
    for given in (fweights, aweights):
        if given is not None:
            w = given.to(x.dtype) if w is None else w * given.to(x.dtype)
    n = x._data.shape[1]
    if w is None:
        total = float(n)
        mean = x.mean(1, keepdim=True)
        norm = total - correction
    else:
        total_t = w.sum()
        mean = (x * w).sum(1, keepdim=True) / total_t
        if correction == 0:
            norm = total_t
        elif aweights is None:
            norm = total_t - correction
        else:
            norm = total_t - correction * (w * aweights.to(x.dtype)).sum() / total_t
    centred = x - mean
    weighted = centred if w is None else centred * w
    out = weighted.matmul(centred.t()) / norm
    return out.squeeze() if input._data.ndim < 2 else out


def corrcoef(input: Tensor) -> Tensor:
    """Pearson correlation coefficients of the variables in the rows of ``input``."""
    c = cov(input)
    if c._data.ndim == 0:
        return c / c
    d = c.diagonal()
    return (c / (d.unsqueeze(1) * d.unsqueeze(0)).sqrt()).clamp(-1.0, 1.0)


def trapezoid(
    y: Tensor, x: Tensor | None = None, *, dx: float | None = None, dim: int = -1
) -> Tensor:
    """The trapezoidal-rule integral of ``y`` along ``dim`` (sample points ``x``, or spacing
    ``dx``, default 1)."""
    d = wrap_dim(dim, y._data.ndim)
    n = y._data.shape[d]
    if n == 0:
        return y.sum(d)
    mid = (y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1)) / 2
    if x is None:
        return mid.sum(d) * (1.0 if dx is None else dx)
    spacing = x.narrow(-1 if x._data.ndim == 1 else d, 1, n - 1) - x.narrow(
        -1 if x._data.ndim == 1 else d, 0, n - 1
    )
    if x._data.ndim == 1 and d != y._data.ndim - 1:
        spacing = spacing.reshape([-1 if i == d else 1 for i in range(y._data.ndim)])
    return (mid * spacing).sum(d)


trapz = trapezoid


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str | None = None) -> Tensor:
    """The ``p``-norm distance between each row of ``x1`` (..., P, M) and of ``x2`` (..., R, M),
    as (..., P, R)."""
    if x1._data.ndim < 2 or x2._data.ndim < 2:
        raise RuntimeError(
            f"cdist only supports at least 2D tensors, X{1 if x1._data.ndim < 2 else 2} got: "
            f"{min(x1._data.ndim, x2._data.ndim)}D"
        )
    if x1._data.shape[-1] != x2._data.shape[-1]:
        raise RuntimeError(
            "X1 and X2 must have the same number of columns. X1: "
            f"{x1._data.shape[-1]} X2: {x2._data.shape[-1]}"
        )
    return norm(x1.unsqueeze(-2) - x2.unsqueeze(-3), p, dim=-1)


TENSOR_METHODS: dict[str, Any] = {
    name: globals()[name] for name in __all__ if name not in ("cdist", "trapezoid", "trapz")
}
