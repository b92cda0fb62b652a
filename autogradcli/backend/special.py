"""float32 special-function kernels: ``erf`` and GELU's pieces in float32 ufunc passes.

scipy.special's float32 ``erf`` loop was measured at 12.7 ms over 524,288 values (it is a scalar
loop), the float64 rational approximation at 83 ms, torch's vectorized float32 erf at 0.52 ms;
this kernel is ~25 SIMD passes of numpy's float32 ufuncs, ~1 ms. Each body is written once, as
``xp`` operators: numpy runs it in place on one fresh array; a device array goes to its
``cupy.fuse`` kernel (the same body traced), one kernel on CUDA.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .kernels import Kernel
from .registry import array_module as _module

__all__ = [
    "erf32",
    "gelu_backward",
    "gelu_forward",
    "gelu_tanh_backward",
    "gelu_tanh_forward",
    "ndtr32",
    "special_module",
]

# erf(x) = x * P(x^2) / Q(x^2) on |x| <= 4 (erf(4) is 1 in float32), a rational least-squares fit
# made for this file (reweighted toward minimax relative error; 2.8e-8 in float64 arithmetic,
# 3.5e-7 absolute when evaluated in float32). Q has no real root on [0, 16].
_P = (1.1283791590346721, 0.19168052984559436, 0.05285355968565584, 0.0038037251860235074,
      0.0002828369596009385, 2.001383648225774e-06)  # fmt: skip
_Q = (1.0, 0.5032053416160641, 0.11457802371094634, 0.015046772119038687,
      0.0011664418776243341, 3.7482258625994025e-05)  # fmt: skip
_X = 4.0
_SQRT1_2 = math.sqrt(0.5)
# erfcx(y) = exp(y^2) erfc(y) = R(y) / S(y) on 0 <= y <= 10.5 (beyond, exp(-y^2) underflows in
# float32), fitted the same way: 6.5e-9 relative in float64; the normal cdf from it is within
# 1.5e-5 relative of float64's over its whole float32 range (1.3e-7 absolute).
_R = (1.0000000065332728, 1.243442426458846, 0.7369169216364033, 0.23176725492204073,
      0.03333719590142592)  # fmt: skip
_S = (1.0, 2.371822246193202, 2.413221309256494, 1.3352917357704897, 0.41082095763798115,
      0.059088017110540625)  # fmt: skip
# The same in a = |x| = y * sqrt 2 (coefficient i times 2^(-i/2)), R's also halved: R_a / S_a is
# 0.5 * erfcx(|x| / sqrt 2) with no scaling pass.
_RA = tuple(0.5 * c * _SQRT1_2**i for i, c in enumerate(_R))
_SA = tuple(c * _SQRT1_2**i for i, c in enumerate(_S))
_A_MAX = 10.5 * math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_GELU_K = math.sqrt(2.0 / math.pi)
_GELU_C = 0.044715


_SPECIAL: dict[Any, Any] = {}


def special_module(xp: Any) -> Any:
    """The scipy.special of array module ``xp``: ``scipy.special`` for numpy (imported on first
    use), ``cupyx.scipy.special`` for cupy, a stand-in's own ``_scipy_special`` in tests. Their
    ufuncs have float32 loops, so float32 stays float32."""
    mod = _SPECIAL.get(xp)
    if mod is None:
        if xp is np:
            try:
                import scipy.special as mod
            except ImportError as err:  # an optional dependency: only these ops need it
                raise RuntimeError(
                    "erfc, erfinv, lgamma, digamma and polygamma need scipy: "
                    "pip install 'autogradcli[special]' (or pip install scipy)"
                ) from err
        else:
            mod = getattr(xp, "_scipy_special", None)
            if mod is None:
                import cupyx.scipy.special as mod
        _SPECIAL[xp] = mod
    return mod


def _horner(t: Any, coefs: tuple[float, ...]) -> Any:
    """``sum(c[i] * t**i)`` as a new array updated in place (the last coefficient first)."""
    acc = t * coefs[-1]
    for c in coefs[-2:0:-1]:
        acc += c
        acc *= t
    acc += coefs[0]
    return acc


def _flat(x: Any) -> Any:
    """A 0-d numpy array as a 1-element one (numpy's 0-d results are scalars, without ``+=``)."""
    return x.reshape(1) if x.ndim == 0 else x


def erf32(x: Any, xp: Any = None) -> Any:
    """erf of a float32 array in float32 (3.5e-7 absolute error at most; nan stays nan)."""
    if xp is None:
        if type(x) is not np.ndarray and not isinstance(x, np.generic):
            return _ERF32(x)
        x = np.asarray(x)
        return _erf32(np, _flat(x)).reshape(x.shape)
    return _erf32(xp, x)


def _erf32(xp: Any, x: Any) -> Any:
    x = xp.maximum(x, -_X)  # clip as two ufuncs (cupy.fuse takes ufuncs only); nan stays nan
    x = xp.minimum(x, _X, out=x) if xp is np else xp.minimum(x, _X)
    t = x * x
    p = _horner(t, _P)
    p *= x
    p /= _horner(t, _Q)
    return p


def ndtr32(x: Any, xp: Any = None) -> tuple[Any, Any]:
    """(Phi(x), exp(-x^2/2)): the standard normal cdf of a float32 array, in float32, and the
    unscaled density; the cdf keeps its relative accuracy in the lower tail (no ``1 + erf``
    cancellation)."""
    if xp is None:
        if type(x) is not np.ndarray and not isinstance(x, np.generic):
            return _NDTR32(x)
        x = np.asarray(x)
        cdf, gauss = _ndtr32(np, _flat(x))
        return cdf.reshape(x.shape), gauss.reshape(x.shape)
    return _ndtr32(xp, x)


def _ndtr32(xp: Any, x: Any) -> tuple[Any, Any]:
    a = xp.absolute(x)
    a = xp.minimum(a, _A_MAX, out=a) if xp is np else xp.minimum(a, _A_MAX)  # R/S stays finite
    gauss = x * x
    gauss *= -0.5
    gauss = xp.exp(gauss, out=gauss) if xp is np else xp.exp(gauss)  # exp(-x^2/2)
    h = _horner(a, _RA)
    h /= _horner(a, _SA)
    h *= gauss  # 0.5 * erfc(|x| / sqrt 2): Phi(x) for x < 0, 1 - Phi(x) for x >= 0
    # Phi = |(x >= 0) - h| (h <= 0.5): no select; np.where over a random sign pattern measured
    # 4.5 ms against 0.3 ms for the arithmetic (branch mispredictions)
    cdf = (x >= 0) - h
    cdf = xp.absolute(cdf, out=cdf) if xp is np else xp.absolute(cdf)
    return cdf, gauss


def gelu_forward(x: Any, erf: Any) -> tuple[Any, Any, Any]:
    """(``x * Phi(x)``, ``Phi(x)``, ``exp(-x^2/2)`` or None): float32 through ``ndtr32``, other
    dtypes through ``erf``, the array erf to use (the density is then left to backward)."""
    if x.dtype == np.float32:
        cdf, gauss = ndtr32(x)
        return x * cdf, cdf, gauss
    cdf = erf(x * _SQRT1_2)
    cdf *= 0.5
    cdf += 0.5
    return x * cdf, cdf, None


def gelu_backward(g: Any, x: Any, cdf: Any, gauss: Any = None) -> Any:
    """``g * (Phi(x) + x * phi(x))``: exact GELU's gradient from forward's cdf and
    ``exp(-x^2/2)`` (None: computed here), a new array."""
    if gauss is None:
        gauss = x * x * -0.5
        gauss = (np if type(x) is np.ndarray else _module(x)).exp(gauss)
    if type(x) is not np.ndarray:
        return _GELU_BACKWARD(g, x, cdf, gauss)
    return _gelu_backward(np, g, x, cdf, gauss)


def _gelu_backward(xp: Any, g: Any, x: Any, cdf: Any, gauss: Any) -> Any:
    d = x * gauss
    d *= _INV_SQRT_2PI
    d += cdf
    if g.dtype != d.dtype:
        return g * d
    d *= g
    return d


def gelu_tanh_forward(x: Any, xp: Any = None) -> tuple[Any, Any]:
    """(``x * s``, ``s``) with ``s = sigmoid(2 sqrt(2/pi) (x + 0.044715 x^3))``, which is
    ``0.5 * (1 + tanh(...))`` without its cancellation in the lower tail."""
    if xp is None:
        if type(x) is not np.ndarray and not isinstance(x, np.generic):
            return _GELU_TANH(x)
        x = np.asarray(x)
        y, s = _gelu_tanh_forward(np, _flat(x))
        return y.reshape(x.shape), s.reshape(x.shape)
    return _gelu_tanh_forward(xp, x)


def _gelu_tanh_forward(xp: Any, x: Any) -> tuple[Any, Any]:
    s = x * x
    s *= _GELU_C
    s += 1.0
    s *= x
    s *= -2.0 * _GELU_K
    s = xp.exp(s, out=s) if xp is np else xp.exp(s)  # inf where it overflows: s = 0 below
    s += 1.0
    s = xp.reciprocal(s, out=s) if xp is np else xp.reciprocal(s)
    return x * s, s


def gelu_tanh_backward(g: Any, x: Any, s: Any, xp: Any = None) -> Any:
    """``g * (s + 2 x s (1 - s) sqrt(2/pi) (1 + 3c x^2))``: the tanh form's gradient from
    forward's ``s``, a new array."""
    if xp is None:
        if type(x) is not np.ndarray:
            return _GELU_TANH_BACKWARD(g, x, s)
        shape, x, s, g = x.shape, _flat(x), _flat(s), _flat(g)
        return gelu_tanh_backward(g, x, s, np).reshape(shape)
    d = x * x
    d *= 6.0 * _GELU_C * _GELU_K
    d += 2.0 * _GELU_K
    d *= x
    d *= s
    d -= d * s if xp is not np else np.multiply(d, s, out=np.empty_like(d))
    d += s
    if g.dtype != d.dtype:
        return g * d
    d *= g
    return d


_ERF32 = Kernel("erf32", lambda xp, scratch, x: erf32(x, xp))
_NDTR32 = Kernel("ndtr32", lambda xp, scratch, x: _ndtr32(xp, x))
_GELU_BACKWARD = Kernel(
    "gelu_backward", lambda xp, scratch, g, x, c, p: _gelu_backward(xp, g, x, c, p)
)
_GELU_TANH = Kernel("gelu_tanh", lambda xp, scratch, x: gelu_tanh_forward(x, xp))
_GELU_TANH_BACKWARD = Kernel(
    "gelu_tanh_backward", lambda xp, scratch, g, x, t: gelu_tanh_backward(g, x, t, xp)
)
