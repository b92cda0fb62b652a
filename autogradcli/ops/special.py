"""Special functions: ``erfc``, ``erfinv``, ``lgamma``, ``digamma``, ``polygamma``, the modified
Bessel functions ``i0``/``i0e``/``i1``/``i1e`` and the normal ``ndtr``/``ndtri``/``log_ndtr``. float32
numpy arrays go through this package's float32 kernels (``backend/special.py``, ``gamma.py``,
``bessel.py``: vectorized passes, at or near torch's speed, where scipy's float32 loops are
scalar; polygamma(n >= 2) excepted); other dtypes and devices through ``scipy.special``
(``cupyx.scipy.special`` on CUDA), one
ufunc pass in the input's dtype (float64 exact for gradcheck). Backwards are Tensor ops, so double
backward works (erfinv's plain backward is one array kernel).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..autograd.function import Function
from ..autograd.grad_mode import STATE
from ..backend import gamma
from ..backend.bessel import bessel32
from ..backend.special import (
    erfc32,
    erfinv32,
    erfinv_backward,
    log_ndtr32,
    ndtr32,
    ndtri32,
    special_module,
)
from ..tensor.tensor import Tensor, wrap
from .clamp_where import where
from .unary import _float_operand

# i0 is also torch's top-level name; the others are torch.special's only (autogradcli.special)
__all__ = ["digamma", "erfc", "erfinv", "i0", "lgamma", "polygamma"]

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI_OVER_2 = math.sqrt(math.pi) / 2.0
_SQRT_2PI = math.sqrt(2.0 * math.pi)
_INV_SQRT_2PI = 1.0 / _SQRT_2PI


_FLOAT32_KERNELS = {
    "erfc": erfc32,
    "erfinv": erfinv32,
    "gammaln": gamma.lgamma32,
    "psi": gamma.digamma32,
    "trigamma": gamma.trigamma32,
    "ndtr": lambda arr: ndtr32(arr)[0],
    "log_ndtr": log_ndtr32,
    "ndtri": ndtri32,
    "i0": lambda arr: bessel32(arr, 0, scaled=False),
    "i0e": lambda arr: bessel32(arr, 0, scaled=True),
    "i1": lambda arr: bessel32(arr, 1, scaled=False),
    "i1e": lambda arr: bessel32(arr, 1, scaled=True),
}


def _special(x: Tensor, name: str, n: int | None = None) -> Any:
    """``scipy.special.<name>`` (``polygamma(n, .)`` with ``n``) of x's array in its dtype:
    integers as the default float, float16/bfloat16 computed in float32 and rounded back (as
    torch does), a float32 numpy array through the float32 kernel where there is one."""
    xp, arr = _float_operand(x)
    if arr.dtype.kind in "fV" and arr.dtype.itemsize < 4:
        return _special_array(xp, arr.astype(np.float32), name, n).astype(arr.dtype)
    return _special_array(xp, arr, name, n)


def _special_array(xp: Any, arr: Any, name: str, n: int | None) -> Any:
    if n == 1:
        name = "trigamma"
    if type(arr) is np.ndarray and arr.dtype == np.float32 and name in _FLOAT32_KERNELS:
        return _FLOAT32_KERNELS[name](arr)
    if n is not None:
        return special_module(xp).polygamma(xp.asarray(n), arr).astype(arr.dtype, copy=False)
    return getattr(special_module(xp), name)(arr)


class Erfc(Function):
    """1 - erf(x), accurate where erf(x) is near 1; its derivative is -2/sqrt(pi) exp(-x^2)."""

    _backward_name = "ErfcBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Any:
        ctx.save_for_backward(x)
        return _special(x, "erfc")

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        (x,) = ctx.saved_tensors
        return g * (-(x * x)).exp() * -_TWO_OVER_SQRT_PI


class Erfinv(Function):
    """The inverse of erf on (-1, 1); its derivative is sqrt(pi)/2 exp(erfinv(x)^2)."""

    _backward_name = "ErfinvBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Any:
        out = wrap(_special(x, "erfinv"))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        (y,) = ctx.saved_tensors
        ga, ya = g._data, y._data
        if not STATE.enabled and type(ga) is type(ya) is np.ndarray and ga.dtype == ya.dtype:
            return wrap(erfinv_backward(ga, ya))  # no create_graph: one array kernel
        return g * (y * y).exp() * _SQRT_PI_OVER_2


class Lgamma(Function):
    """log |Gamma(x)|; its derivative is digamma(x)."""

    _backward_name = "LgammaBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Any:
        ctx.save_for_backward(x)
        return _special(x, "gammaln")

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        (x,) = ctx.saved_tensors
        return g * digamma(x)


class Polygamma(Function):
    """The n-th derivative of digamma (n = 0: digamma itself); its derivative is polygamma(n+1)."""

    _backward_name = "PolygammaBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, n: int) -> Any:
        ctx.save_for_backward(x)
        ctx.n = n
        return _special(x, "psi") if n == 0 else _special(x, "polygamma", n)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Tensor, None]:
        (x,) = ctx.saved_tensors
        return g * Polygamma.apply(x, ctx.n + 1), None


def _nonzero(x: Tensor) -> Tensor:
    """x with its zeros replaced by 1 (a denominator whose quotient ``where`` then discards)."""
    return where(x == 0, 1.0, x)


class _Unary(Function):
    """A scipy.special ufunc ``_name`` of one tensor (the float32 kernel where there is one),
    saving the input and the output for ``_grad(x, out)``."""

    _name = ""

    @classmethod
    def forward(cls, ctx: Any, x: Tensor) -> Any:
        out = wrap(_special(x, cls._name))
        ctx.save_for_backward(x, out)
        return out

    @classmethod
    def backward(cls, ctx: Any, g: Tensor) -> Tensor:
        x, out = ctx.saved_tensors
        return g * cls._grad(x, out)

    @staticmethod
    def _grad(x: Tensor, out: Tensor) -> Tensor:
        raise NotImplementedError


class I0(_Unary):
    """The modified Bessel function of the first kind, order 0; its derivative is i1."""

    _backward_name, _name = "I0Backward0", "i0"

    @staticmethod
    def _grad(x: Tensor, out: Tensor) -> Tensor:
        return special_i1(x)


class I0e(_Unary):
    """exp(-|x|) i0(x); its derivative is i1e(x) - sign(x) i0e(x)."""

    _backward_name, _name = "SpecialI0EBackward0", "i0e"

    @staticmethod
    def _grad(x: Tensor, out: Tensor) -> Tensor:
        return special_i1e(x) - x.sign() * out


class I1(_Unary):
    """The modified Bessel function of the first kind, order 1; its derivative is
    i0(x) - i1(x)/x (1/2 at 0)."""

    _backward_name, _name = "SpecialI1Backward0", "i1"

    @staticmethod
    def _grad(x: Tensor, out: Tensor) -> Tensor:
        return where(x == 0, 0.5, i0(x) - out / _nonzero(x))


class I1e(_Unary):
    """exp(-|x|) i1(x); its derivative is i0e(x) - i1e(x) (sign(x) + 1/x) (1/2 at 0)."""

    _backward_name, _name = "SpecialI1EBackward0", "i1e"

    @staticmethod
    def _grad(x: Tensor, out: Tensor) -> Tensor:
        return where(x == 0, 0.5, special_i0e(x) - out * (x.sign() + 1.0 / _nonzero(x)))


class Ndtr(_Unary):
    """The standard normal cdf; its derivative is the density exp(-x^2/2)/sqrt(2 pi)."""

    _backward_name, _name = "MulBackward1", "ndtr"  # torch's is a composition ending in a mul

    @staticmethod
    def _grad(x: Tensor, out: Tensor) -> Tensor:
        return (x * x * -0.5).exp() * _INV_SQRT_2PI


class Ndtri(_Unary):
    """The inverse of ndtr on (0, 1); its derivative is sqrt(2 pi) exp(ndtri(p)^2 / 2)."""

    _backward_name, _name = "SpecialNdtriBackward0", "ndtri"

    @staticmethod
    def _grad(x: Tensor, out: Tensor) -> Tensor:
        return (out * out * 0.5).exp() * _SQRT_2PI


class LogNdtr(_Unary):
    """log(ndtr(x)), accurate in the lower tail; its derivative is the density over ndtr,
    exp(-x^2/2 - log_ndtr(x)) / sqrt(2 pi)."""

    _backward_name, _name = "SpecialLogNdtrBackward0", "log_ndtr"

    @staticmethod
    def _grad(x: Tensor, out: Tensor) -> Tensor:
        return (x * x * -0.5 - out).exp() * _INV_SQRT_2PI


def i0(x: Tensor) -> Tensor:
    """The zeroth-order modified Bessel function of the first kind."""
    return I0.apply(x)


def special_i0e(x: Tensor) -> Tensor:
    """The exponentially scaled zeroth-order modified Bessel function, exp(-|x|) i0(x)."""
    return I0e.apply(x)


def special_i1(x: Tensor) -> Tensor:
    """The first-order modified Bessel function of the first kind."""
    return I1.apply(x)


def special_i1e(x: Tensor) -> Tensor:
    """The exponentially scaled first-order modified Bessel function, exp(-|x|) i1(x)."""
    return I1e.apply(x)


def special_ndtr(x: Tensor) -> Tensor:
    """The standard normal cumulative distribution function."""
    return Ndtr.apply(x)


def special_ndtri(x: Tensor) -> Tensor:
    """The inverse of the standard normal cdf (-inf at 0, inf at 1, nan outside [0, 1])."""
    return Ndtri.apply(x)


def special_log_ndtr(x: Tensor) -> Tensor:
    """The log of the standard normal cdf, accurate for very negative x."""
    return LogNdtr.apply(x)


def erfc(x: Tensor) -> Tensor:
    """The complementary error function, 1 - erf(x)."""
    return Erfc.apply(x)


def erfinv(x: Tensor) -> Tensor:
    """The inverse error function (nan outside [-1, 1], +-inf at +-1)."""
    return Erfinv.apply(x)


def lgamma(x: Tensor) -> Tensor:
    """The log of the absolute value of the gamma function."""
    return Lgamma.apply(x)


def digamma(x: Tensor) -> Tensor:
    """The logarithmic derivative of the gamma function, psi(x)."""
    return Polygamma.apply(x, 0)


def polygamma(n: int, x: Tensor) -> Tensor:
    """The n-th derivative of digamma (torch's argument order: ``polygamma(n, x)``)."""
    if int(n) < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return Polygamma.apply(x, int(n))


TENSOR_METHODS: dict[str, Any] = {
    "erfc": erfc,
    "erfinv": erfinv,
    "lgamma": lgamma,
    "digamma": digamma,
    "polygamma": lambda self, n: polygamma(n, self),
    "i0": i0,
}
