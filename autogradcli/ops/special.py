"""Special functions: ``erfc``, ``erfinv``, ``lgamma``, ``digamma`` and ``polygamma``. float32
numpy arrays go through this package's float32 kernels (``backend/special.py``,
``backend/gamma.py``: vectorized passes, at or near torch's speed, where scipy's float32 loops are
scalar); other dtypes and devices through ``scipy.special`` (``cupyx.scipy.special`` on CUDA), one
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
from ..backend.special import erfc32, erfinv32, erfinv_backward, special_module
from ..tensor.tensor import Tensor, wrap
from .unary import _float_operand

__all__ = ["digamma", "erfc", "erfinv", "lgamma", "polygamma"]

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI_OVER_2 = math.sqrt(math.pi) / 2.0


_FLOAT32_KERNELS = {
    "erfc": erfc32,
    "erfinv": erfinv32,
    "gammaln": gamma.lgamma32,
    "psi": gamma.digamma32,
}


def _special(x: Tensor, name: str) -> Any:
    """``scipy.special.<name>`` of x's array (integers as the default float), in its dtype; a
    float32 numpy array through the float32 kernel of that name."""
    xp, arr = _float_operand(x)
    if type(arr) is np.ndarray and arr.dtype == np.float32:
        return _FLOAT32_KERNELS[name](arr)
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
        if n == 0:
            return _special(x, "psi")
        xp, arr = _float_operand(x)
        if n == 1 and type(arr) is np.ndarray and arr.dtype == np.float32:
            return gamma.trigamma32(arr)
        out = special_module(xp).polygamma(n, arr)
        return out.astype(arr.dtype, copy=False)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Tensor, None]:
        (x,) = ctx.saved_tensors
        return g * Polygamma.apply(x, ctx.n + 1), None


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
}
