"""float32 gamma-family kernels: ``lgamma``, ``digamma`` and ``trigamma`` of float32 numpy arrays
in float32 in-place passes (scipy.special's float32 loops are scalar: 8-10x torch's time).

Each shifts x < 4 to y = x + 4 (lgamma(x) = lgamma(y) - log(x(x+1)(x+2)(x+3)), digamma(x) =
digamma(y) - sum 1/(x+k)...) and evaluates the asymptotic (Stirling) series at y >= 4, where three
to five terms reach float32 accuracy. The shift is blended by a 0/1 mask (no select, no subset).
Negative x go through the reflection formulas on their own subset, in float64.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import numpy as np

from .blocks import blockwise
from .special import _horner

__all__ = ["digamma32", "lgamma32", "trigamma32"]

_SHIFT = 4.0
_LOG_SQRT_2PI_MINUS_HALF = 0.5 * math.log(2.0 * math.pi) - 0.5
_INV_E = 1.0 / math.e
# the series' coefficients, in w = 1/y^2 (Bernoulli numbers B_2k over their factors)
_LGAMMA_SERIES = (1 / 12, -1 / 360, 1 / 1260)  # times 1/y; next term 3.6e-8 at y = 4
_DIGAMMA_SERIES = (1 / 12, -1 / 120, 1 / 252, -1 / 240)  # times w; next 7e-9 at y = 4
_TRIGAMMA_SERIES = (1 / 6, -1 / 30, 1 / 42, -1 / 30)  # times 1/y^3; next 2e-8 at y = 4


def _shift(x: Any) -> tuple[Any, Any, Any, Any]:
    """(m, 4m, min(x, 4), u) with m = 1.0 where x < 4 (else 0.0) and u = xs (xs + 3)."""
    m = np.less(x, _SHIFT).astype(x.dtype)
    m4 = m * _SHIFT
    xs = np.clip(x, -np.inf, _SHIFT)  # both bounds: one vectorized pass (scalar minimum: 3x)
    u = xs + 3.0
    u *= xs
    return m, m4, xs, u


def _lgamma_pos(x: Any) -> Any:
    m, m4, xs, u = _shift(x)
    lp = u + 2.0
    lp *= u  # x(x+1)(x+2)(x+3) = u(u+2), finite where unshifted (x clipped at 4)
    lp = np.log(lp, out=lp)
    lp *= m
    y = np.add(x, m4, out=m4)
    ly = np.multiply(y, _INV_E, out=xs)
    ly = np.log(ly, out=ly)
    out = y - 0.5
    out *= ly  # (y - 1/2)(log y - 1): inf (not inf - inf) at y = inf
    z = np.reciprocal(y, out=u)
    s = _horner(np.multiply(z, z, out=m), _LGAMMA_SERIES)
    s *= z
    out += s
    out -= lp
    out += _LOG_SQRT_2PI_MINUS_HALF
    return out


def _digamma_pos(x: Any) -> Any:
    _, m4, xs, u = _shift(x)
    shift = np.add(xs, 1.5, out=xs)
    shift *= u + 1.0
    den = u + 2.0
    den *= u
    shift /= den  # sum_{k<4} 1/(x+k) = 4 (x + 3/2)(u + 1) / (u (u + 2)); the 4 is in m4
    shift *= m4
    y = np.add(x, m4, out=m4)
    z = np.reciprocal(y, out=u)
    w = np.multiply(z, z, out=den)
    s = _horner(w, _DIGAMMA_SERIES)
    s *= w
    z *= 0.5
    s += z
    s += shift
    out = np.log(y, out=y)
    out -= s
    return out


def _trigamma_pos(x: Any) -> Any:
    m, m4, xs, _ = _shift(x)
    shift = np.reciprocal(xs)
    shift *= shift
    term = np.empty_like(xs)
    for k in (1.0, 2.0, 3.0):  # sum_{k<4} 1/(x+k)^2
        term = np.add(xs, k, out=term)
        term *= term
        shift += np.reciprocal(term, out=term)
    shift *= m
    y = np.add(x, m4, out=m4)
    z = np.reciprocal(y, out=xs)
    w = np.multiply(z, z, out=m)
    s = _horner(w, _TRIGAMMA_SERIES)
    s *= w
    s *= z  # the series' 1/y^3 terms
    w *= 0.5
    s += w
    s += z
    s += shift
    return s


def _sin_pi(x: Any) -> Any:
    """sin(pi x) from x's distance to the nearest integer (exact there), float64."""
    t = x - np.round(x)
    t *= math.pi
    return np.sin(t, out=t)


def _with_reflection(x: Any, positive: Any, reflect: Any) -> Any:
    """``positive(x)`` in float32 in place where x >= 0, ``reflect`` in float64 on x < 0."""
    x = np.asarray(x)
    return blockwise(partial(_block, positive, reflect), x.reshape(-1)).reshape(x.shape)


def _block(positive: Any, reflect: Any, x: Any) -> Any:
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = positive(x)
        neg = np.flatnonzero(x < 0)
        if neg.size:
            out[neg] = reflect(x[neg].astype(np.float64))
    return out


def _lgamma_reflect(x: Any) -> Any:
    # lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x); inf at the poles and at -inf
    out = np.log(math.pi / np.abs(_sin_pi(x)))
    out -= _lgamma_pos(1.0 - x)
    out[np.isinf(x)] = np.inf
    return out


def _digamma_reflect(x: Any) -> Any:
    # digamma(x) = digamma(1 - x) - pi / tan(pi x); nan at the poles (as PyTorch)
    t = x - np.round(x)
    out = _digamma_pos(1.0 - x)
    out -= math.pi / np.tan(t * math.pi)
    out[t == 0] = np.nan
    return out


def _trigamma_reflect(x: Any) -> Any:
    # trigamma(x) = pi^2 / sin^2(pi x) - trigamma(1 - x); inf at the poles
    s = _sin_pi(x)
    out = (math.pi * math.pi) / (s * s)
    out -= _trigamma_pos(1.0 - x)
    out[s == 0] = np.inf
    return out


def lgamma32(x: Any) -> Any:
    """log|Gamma(x)| of a float32 numpy array in float32 (2e-6 absolute where it is below 1,
    2e-6 relative above; inf at 0 and the negative integers)."""
    return _with_reflection(x, _lgamma_pos, _lgamma_reflect)


def digamma32(x: Any) -> Any:
    """digamma of a float32 numpy array in float32 (7e-7 absolute near its root at 1.46, relative
    elsewhere; -inf at 0, nan at the negative integers, as PyTorch)."""
    return _with_reflection(x, _digamma_pos, _digamma_reflect)


def trigamma32(x: Any) -> Any:
    """trigamma (polygamma(1, x)) of a float32 numpy array in float32."""
    return _with_reflection(x, _trigamma_pos, _trigamma_reflect)
