"""float32 modified Bessel kernels: ``i0``, ``i0e``, ``i1``, ``i1e`` of float32 numpy arrays in
float32 in-place passes (scipy's float32 loops and torch's own, but for i1e, are scalar loops).

|x| <= 4: ``i0(x) = P0(x^2)`` and ``i1(x) = x P1(x^2)``, degree-7 polynomials fitted for this
file (relative weights; 4e-10 and 7e-11 in float64, 1.9e-7 evaluated in float32; the Taylor
series' positive coefficients, economized, so Horner has no cancellation); the scaled forms
multiply by exp(-|x|). |x| > 4, on their own subset: ``i0e(x) sqrt|x| = Q0(4/|x|)`` and the
same for i1e, degree-10 fits (9e-9 in float64, 9e-8 in float32); the unscaled forms multiply by
exp(|x|/2) twice (finite up to |x| = 91.9, where the value itself overflows float32).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .blocks import blockwise
from .special import _horner

__all__ = ["bessel32"]

_X = 4.0
_I0_MAIN = (0.9999999996072493, 0.2500000043445144, 0.015624992699870416, 0.000434032200372487,
            6.780421163261585e-06, 6.800641048796234e-08, 4.5563671726948105e-10,
            3.0248154429389765e-12)  # fmt: skip
_I1_MAIN = (0.4999999999644891, 0.06250000034529055, 0.0026041661399185713,
            5.42537685683415e-05, 6.780885405533504e-07, 5.662852517223797e-09,
            3.274790696265898e-11, 1.85349364886694e-13)  # fmt: skip
_I0_TAIL = (0.3989422775343999, 0.012467623656134841, 0.0017271227944251385,
            0.0008389032260670281, -0.00262053823767836, 0.011516882297751743,
            -0.027331548249676055, 0.03850571512995109, -0.030207255344991746,
            0.012072922357332313, -0.0019082605697006854)  # fmt: skip
_I1_TAIL = (0.39894228369105195, -0.037401605537022035, -0.0028928168790111797,
            -0.0010620936696897024, 0.002835125521359552, -0.012489524527307698,
            0.029284703575976616, -0.040762007890473434, 0.03147608390217649,
            -0.012324208868221435, 0.001895737492726427)  # fmt: skip


def bessel32(x: Any, order: int, scaled: bool) -> Any:
    """i0 / i1 (``order``) of a float32 numpy array, times exp(-|x|) where ``scaled``, in
    float32 (2e-7 relative)."""
    x = np.asarray(x)
    return blockwise(lambda b: _block(b, order, scaled), x.reshape(-1)).reshape(x.shape)


def _block(x: Any, order: int, scaled: bool) -> Any:
    with np.errstate(over="ignore", invalid="ignore"):
        a = np.absolute(x)
        t = np.clip(a, 0.0, _X)  # both bounds: one vectorized pass (a scalar minimum is not)
        t *= t
        out = _horner(t, _I1_MAIN if order else _I0_MAIN)
        if order:
            out *= x
        if scaled:
            e = np.negative(a, out=t)
            out *= np.exp(e, out=e)
        far = np.flatnonzero(a > _X)  # nan is not: the polynomial kept it
        if far.size:
            af = a[far]
            tail = _horner(_X / af, _I1_TAIL if order else _I0_TAIL)
            tail /= np.sqrt(af)
            if not scaled:  # exp(|x|) in two halves: finite values up to |x| = 91.9
                half = np.exp(af * 0.5)
                tail *= half
                tail *= half
            if order:
                tail = np.copysign(tail, x[far], out=tail)
            out[far] = tail
    return out
