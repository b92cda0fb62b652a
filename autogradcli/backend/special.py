"""float32 special-function kernels: ``erf``, GELU's pieces, ``erfc`` and ``erfinv`` in float32
ufunc passes (the gamma family is in ``gamma.py``); the long ones run over cache-sized blocks
(``blocks.py``). ``special_module`` gives the scipy.special of an array module for the rest.

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

from .blocks import blockwise
from .kernels import Kernel
from .registry import array_module as _module

__all__ = [
    "erf32",
    "erfc32",
    "erfinv32",
    "erfinv_backward",
    "gelu_backward",
    "gelu_forward",
    "gelu_tanh_backward",
    "gelu_tanh_forward",
    "log_ndtr32",
    "ndtr32",
    "ndtri32",
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
                    "special functions of float64 input (and polygamma(n >= 2)) need scipy: "
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
        return blockwise(_erf32_np, _flat(x)).reshape(x.shape)
    return _erf32(xp, x)


def _erf32_np(x: Any) -> Any:
    with np.errstate(all="ignore"):  # inf and nan in, as torch: no warnings
        return _erf32(np, x)


def _erf32(xp: Any, x: Any) -> Any:
    if xp is np:  # numpy's clip with both bounds is one vectorized pass (minimum against a
        x = np.clip(x, -_X, _X)  # scalar is not: 22 vs 10 us on 65,536 values); nan stays nan
    else:  # cupy.fuse takes ufuncs only
        x = xp.minimum(xp.maximum(x, -_X), _X)
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
        out = (np.empty(x.shape, np.float32), np.empty(x.shape, np.float32))
        blockwise(_ndtr32_np, _flat(x), out=tuple(_flat(o) for o in out))
        return out
    return _ndtr32(xp, x)


def _ndtr32_np(x: Any, out: tuple[Any, Any]) -> None:
    with np.errstate(all="ignore"):
        _ndtr32(np, x, out)


def _ndtr32(xp: Any, x: Any, out: tuple[Any, Any] = (None, None)) -> tuple[Any, Any]:
    """(cdf, gauss) into ``out`` (numpy arrays, or None: new arrays / registers)."""
    a = xp.absolute(x)
    a = np.clip(a, 0.0, _A_MAX, out=a) if xp is np else xp.minimum(a, _A_MAX)  # R/S finite
    gauss = xp.multiply(x, x, out=out[1])
    gauss *= -0.5
    gauss = xp.exp(gauss, out=gauss) if xp is np else xp.exp(gauss)  # exp(-x^2/2)
    h = _horner(a, _RA)
    h /= _horner(a, _SA)
    h *= gauss  # 0.5 * erfc(|x| / sqrt 2): Phi(x) for x < 0, 1 - Phi(x) for x >= 0
    # Phi = |(x >= 0) - h| (h <= 0.5): no select; np.where over a random sign pattern measured
    # 4.5 ms against 0.3 ms for the arithmetic (branch mispredictions)
    cdf = xp.subtract(x >= 0, h, out=out[0])
    cdf = xp.absolute(cdf, out=cdf) if xp is np else xp.absolute(cdf)
    return cdf, gauss


_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def log_ndtr32(x: Any) -> Any:
    """log Phi(x) of a float32 numpy array in float32, without underflow in the lower tail:
    ``-x^2/2 + log(erfcx(|x|/sqrt 2)/2)`` below 0, ``log1p(-that's exp)`` above; the asymptotic
    series past |x| = 14.85 (where the fit ends), in float64 on those few."""
    x = np.asarray(x)
    return blockwise(_log_ndtr32_block, x.reshape(-1)).reshape(x.shape)


def _log_ndtr32_block(x: Any) -> Any:
    with np.errstate(all="ignore"):
        a = np.absolute(x)
        ac = np.clip(a, 0.0, _A_MAX)
        q = _horner(ac, _RA)
        q /= _horner(ac, _SA)  # erfcx(a / sqrt 2) / 2
        e = np.multiply(x, x, out=ac)
        e *= -0.5
        neg = np.log(q)
        neg += e  # log Phi(-a)
        h = np.exp(e, out=e)
        h *= q
        h = np.negative(h, out=h)
        pos = np.log1p(h, out=h)  # log Phi(a) = log(1 - Phi(-a))
        # m neg + (1 - m) pos: exact (one term is 0); np.where/copyto over a random sign
        # pattern measured 11.7 ms per 1e6 values (branch mispredictions), this 5 passes
        m = np.less(x, 0.0).astype(np.float32)
        neg *= m
        m = np.subtract(1.0, m, out=m)
        pos *= m
        pos += neg
        far = np.flatnonzero(a > _A_MAX)  # also inf and nan-free huge values
        if far.size:
            xf = x[far].astype(np.float64)
            w = 1.0 / (xf * xf)  # log Phi(-a) = -a^2/2 - log(a sqrt(2 pi)) + log(1 - w + 3w^2..)
            tail = (
                -0.5 * xf * xf - np.log(-xf) - _LOG_SQRT_2PI + np.log1p(-w * (1 - w * (3 - 15 * w)))
            )
            pos[far] = np.where(xf < 0, tail, -0.0)
    return pos


def gelu_forward(x: Any, erf: Any) -> tuple[Any, Any, Any]:
    """(``x * Phi(x)``, ``Phi(x)``, ``exp(-x^2/2)`` or None): float32 through ``ndtr32``, other
    dtypes through ``erf``, the array erf to use (the density is then left to backward)."""
    if x.dtype == np.float32:
        if type(x) is not np.ndarray:
            cdf, gauss = ndtr32(x)
            return x * cdf, cdf, gauss
        out = tuple(np.empty(x.shape, np.float32) for _ in range(3))
        blockwise(_gelu32_np, _flat(x), out=tuple(_flat(o) for o in out))
        return out
    cdf = erf(x * _SQRT1_2)
    cdf *= 0.5
    cdf += 0.5
    return x * cdf, cdf, None


def _gelu32_np(x: Any, out: tuple[Any, Any, Any]) -> None:
    with np.errstate(all="ignore"):
        cdf, _ = _ndtr32(np, x, out[1:])
        np.multiply(x, cdf, out=out[0])


def gelu_backward(g: Any, x: Any, cdf: Any, gauss: Any = None) -> Any:
    """``g * (Phi(x) + x * phi(x))``: exact GELU's gradient from forward's cdf and
    ``exp(-x^2/2)`` (None: computed here), a new array."""
    if gauss is None:
        gauss = x * x * -0.5
        gauss = (np if type(x) is np.ndarray else _module(x)).exp(gauss)
    if type(x) is not np.ndarray:
        return _GELU_BACKWARD(g, x, cdf, gauss)
    return _gelu_backward_np(g, x, cdf, gauss)  # 4 passes: blocks measured no faster


def _gelu_backward_np(g: Any, x: Any, cdf: Any, gauss: Any) -> Any:
    with np.errstate(all="ignore"):
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
        y, s = _gelu_tanh_np(_flat(x))  # 8 passes: blocks measured no faster
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


def _gelu_tanh_np(x: Any) -> tuple[Any, Any]:
    with np.errstate(all="ignore"):
        return _gelu_tanh_forward(np, x)


def gelu_tanh_backward(g: Any, x: Any, s: Any, xp: Any = None) -> Any:
    """``g * (s + 2 x s (1 - s) sqrt(2/pi) (1 + 3c x^2))``: the tanh form's gradient from
    forward's ``s``, a new array."""
    if xp is None:
        if type(x) is not np.ndarray:
            return _GELU_TANH_BACKWARD(g, x, s)
        shape, x, s, g = x.shape, _flat(x), _flat(s), _flat(g)
        return _gelu_tanh_backward_np(g, x, s).reshape(shape)
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


def _gelu_tanh_backward_np(g: Any, x: Any, s: Any) -> Any:
    with np.errstate(all="ignore"):
        return gelu_tanh_backward(g, x, s, np)


# Giles, "Approximating the erfinv function" (GPU Computing Gems, 2011), single precision:
# erfinv(x) = x * P(w) with w = -log((1 - x)(1 + x)), P in w - 2.5 where w < 5 (|x| < 0.99663),
# else in sqrt(w) - 3. The central one is kept in u = log(...) + 2.5 = 2.5 - w (signs folded).
_GILES_MID = tuple(c * (-1) ** i for i, c in enumerate((
    1.50140941, 0.246640727, -0.00417768164, -0.00125372503, 0.00021858087, -4.39150654e-06,
    -3.5233877e-06, 3.43273939e-07, 2.81022636e-08)))  # fmt: skip
_GILES_TAIL = (2.83297682, 1.00167406, 0.00943887047, -0.0076224613, 0.00573950773,
               -0.00367342844, 0.00134934322, 0.000100950558, -0.000200214257)  # fmt: skip
_SQRT_PI_OVER_2 = math.sqrt(math.pi) / 2.0


def erfinv32(x: Any) -> Any:
    """erfinv of a float32 numpy array in float32 (2.6e-7 relative error at most; +-inf at +-1,
    nan outside [-1, 1]): ~22 in-place passes, the tail polynomial only on the |x| > 0.99663."""
    x = np.asarray(x)
    return blockwise(_erfinv32_block, x.reshape(-1)).reshape(x.shape)


def _erfinv32_block(x: Any) -> Any:
    with np.errstate(divide="ignore", invalid="ignore"):
        log = np.subtract(1.0, x)
        log *= x + 1.0  # (1 - x)(1 + x): no cancellation near +-1, unlike 1 - x^2
        return _giles(np.log(log, out=log), x)


def _giles(log: Any, x: Any) -> Any:
    """erfinv(x) from ``log = log((1 - x)(1 + x))`` (consumed), a new array."""
    u = log + 2.5
    out = _horner(u, _GILES_MID)
    out *= x
    tail = np.flatnonzero(log < -5.0)
    if tail.size:
        w = np.negative(log[tail])
        edge = np.isinf(w)  # x = +-1
        w = np.sqrt(w, out=w)
        w -= 3.0
        p = _horner(w, _GILES_TAIL)
        p[edge] = np.inf
        p *= x[tail]
        out[tail] = p
    return out


def ndtri32(p: Any) -> Any:
    """The normal quantile of a float32 numpy array in float32: ``sqrt 2 erfinv(2p - 1)`` with
    Giles' ``log((1 - x)(1 + x))`` taken as ``log(4p(1 - p))`` (exact near 0 and 1); below
    p = 3e-8, past his fit, Newton's method on log_ndtr in float64 on those few."""
    p = np.asarray(p)
    return blockwise(_ndtri32_block, p.reshape(-1)).reshape(p.shape)


def _ndtri32_block(p: Any) -> Any:
    with np.errstate(divide="ignore", invalid="ignore"):
        log = np.subtract(1.0, p)
        log *= p
        log *= 4.0
        log = np.log(log, out=log)
        x = p * 2.0
        x -= 1.0
        far = np.flatnonzero((log < -15.9) & (p < 0.5))  # 4p(1-p) < 1.2e-7: tiny p, not 1
        out = _giles(log, x)
        out *= math.sqrt(2.0)
        if far.size:
            out[far] = _ndtri_newton(p[far].astype(np.float64))
    return out


def _ndtri_newton(p: Any) -> Any:
    """ndtri of tiny float64 p (0 < p < 3e-8; 0 gives -inf): the asymptotic start, then three
    Newton steps on log_ndtr(z) = log p, whose derivative is exp(-z^2/2 - log_ndtr(z))/sqrt(2 pi)."""
    t = np.log(p)
    z = -np.sqrt(-2.0 * t - np.log(-2.0 * t) - 2.0 * _LOG_SQRT_2PI)
    for _ in range(3):
        lz = _log_ndtr32_block(z)
        z -= (lz - t) * math.sqrt(2.0 * math.pi) * np.exp(0.5 * z * z + lz)
    z[p == 0] = -np.inf
    return z


def erfinv_backward(g: Any, y: Any) -> Any:
    """``g * sqrt(pi)/2 * exp(y^2)`` from forward's output ``y``: erfinv's gradient as a new
    numpy array in 4 passes (g and y of one dtype)."""
    return _erfinv_backward_block(_flat(g), _flat(y)).reshape(y.shape)


def _erfinv_backward_block(g: Any, y: Any) -> Any:
    d = np.multiply(y, y)
    with np.errstate(over="ignore"):
        d = np.exp(d, out=d)
    d *= _SQRT_PI_OVER_2
    d *= g
    return d


_R_HALF = tuple(0.5 * c for c in _R)
_EXP_SPLIT = 32768.0  # a + 2^15 - 2^15 rounds a < 16 to 1/256: 12 bits, so its square is exact


def erfc32(x: Any) -> Any:
    """erfc of a float32 numpy array in float32, to 7e-7 relative over its whole range (the
    tail included): ``exp(-a^2) erfcx(a)`` with a = |x|, ``2 - that`` below 0."""
    x = np.asarray(x)
    return blockwise(_erfc32_block, x.reshape(-1)).reshape(x.shape)


def _erfc32_block(x: Any) -> Any:
    a = np.absolute(x)
    a = np.clip(a, 0.0, 10.5, out=a)  # erfc(10.5) underflows; R/S stays finite (nan stays nan)
    # exp(-a^2) as exp(-r^2) exp(-(a - r)(a + r)), r = a to 1/256: the rounding of a^2 in
    # float32 would cost a^2 * 6e-8 relative (5e-6 at a = 9)
    t = a + _EXP_SPLIT
    r = t - _EXP_SPLIT
    nr = np.subtract(_EXP_SPLIT, t, out=t)
    e = np.multiply(r, nr, out=nr)  # -r^2, exact
    e = np.exp(e, out=e)
    d = np.subtract(r, a)
    r += a
    d *= r
    d = np.exp(d, out=d)
    e *= d
    h = _horner(a, _R_HALF)
    h /= _horner(a, _S)  # erfcx(a) / 2
    h *= e
    # erfc = 2 |(x < 0) - erfc(a)/2|: 2 - erfc(a) below 0, erfc(a) above, without a select
    out = np.less(x, 0.0).astype(np.float32)
    out -= h
    out = np.absolute(out, out=out)
    out *= 2.0
    return out


_ERF32 = Kernel("erf32", lambda xp, scratch, x: erf32(x, xp))
_NDTR32 = Kernel("ndtr32", lambda xp, scratch, x: _ndtr32(xp, x))
_GELU_BACKWARD = Kernel(
    "gelu_backward", lambda xp, scratch, g, x, c, p: _gelu_backward(xp, g, x, c, p)
)
_GELU_TANH = Kernel("gelu_tanh", lambda xp, scratch, x: gelu_tanh_forward(x, xp))
_GELU_TANH_BACKWARD = Kernel(
    "gelu_tanh_backward", lambda xp, scratch, g, x, t: gelu_tanh_backward(g, x, t, xp)
)
