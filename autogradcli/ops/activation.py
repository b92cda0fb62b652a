"""Activations: softmax/log_softmax (stable, compact backward), leaky_relu, elu, gelu, silu,
softplus, hardtanh, logsigmoid, and ``erf`` (numpy has none: W. J. Cody's rational
approximations, vectorized with array-module ops so it runs on cupy too).

Each is a Function whose backward is written with Tensor ops, so double backward works.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from ..autograd.function import Function
from ..autograd.grad_mode import STATE
from ..backend import special
from ..backend.select import where as select_where
from ..tensor.tensor import Tensor
from ._util import array_module, wrap, wrap_dim
from .clamp_where import where
from .unary import _float_operand

_SQRT1_2 = math.sqrt(0.5)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_GELU_K = math.sqrt(2.0 / math.pi)

# W. J. Cody, "Rational Chebyshev approximations for the error function" (Math. Comp. 1969),
# as in netlib specfun CALERF: erf on |x| <= 0.46875, erfc on (0.46875, 4] and beyond 4.
_A = (3.16112374387056560e00, 1.13864154151050156e02, 3.77485237685302021e02,
      3.20937758913846947e03, 1.85777706184603153e-1)  # fmt: skip
_B = (2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03,
      2.84423683343917062e03)  # fmt: skip
_C = (5.64188496988670089e-1, 8.88314979438837594e00, 6.61191906371416295e01,
      2.98635138197400131e02, 8.81952221241769090e02, 1.71204761263407058e03,
      2.05107837782607147e03, 1.23033935479799725e03, 2.15311535474403846e-8)  # fmt: skip
_D = (1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02,
      1.62138957456669019e03, 3.29079923573345963e03, 4.36261909014324716e03,
      3.43936767414372164e03, 1.23033935480374942e03)  # fmt: skip
_P = (3.05326634961232344e-1, 3.60344899949804439e-1, 1.25781726111229246e-1,
      1.60837851487422766e-2, 6.58749161529837803e-4, 1.63153871373020978e-2)  # fmt: skip
_Q = (2.56852019228982242e00, 1.87295284992346725e00, 5.27905102951428412e-1,
      6.05183413124413191e-2, 2.33520497626869185e-3)  # fmt: skip
_SQRPI = 1.0 / math.sqrt(math.pi)
_THRESH = 0.46875
_XBIG = 26.543


def erf_array(arr: Any) -> Any:
    """erf of a float array, accurate to ~1e-16 relative (computed in float64, cast back)."""
    xp = array_module(arr)
    x = arr.astype("float64")
    y = xp.abs(x)
    # region 1: erf(x) = x * R(x^2)
    ysq = xp.minimum(y, _THRESH) ** 2
    num, den = _A[4] * ysq, ysq
    for i in range(3):
        num, den = (num + _A[i]) * ysq, (den + _B[i]) * ysq
    small = x * (num + _A[3]) / (den + _B[3])
    # region 2: erfc(y) = exp(-y^2) * R(y)
    y2 = xp.clip(y, _THRESH, 4.0)
    num, den = _C[8] * y2, y2
    for i in range(7):
        num, den = (num + _C[i]) * y2, (den + _D[i]) * y2
    mid = (num + _C[7]) / (den + _D[7])
    # region 3: erfc(y) = exp(-y^2) / y * (1/sqrt(pi) + R(1/y^2) / y^2)
    y3 = xp.clip(y, 4.0, _XBIG)
    inv = 1.0 / (y3 * y3)
    num, den = _P[5] * inv, inv
    for i in range(4):
        num, den = (num + _P[i]) * inv, (den + _Q[i]) * inv
    big = (_SQRPI - inv * (num + _P[4]) / (den + _Q[4])) / y3
    # exp(-y^2) split as exp(-r^2) * exp(-(y-r)(y+r)) with r = y rounded down to 1/16: no
    # cancellation in y^2
    yc = xp.minimum(y, _XBIG)
    r = xp.trunc(yc * 16.0) / 16.0
    erfc = xp.where(yc <= 4.0, mid, big) * xp.exp(-r * r) * xp.exp(-(yc - r) * (yc + r))
    erfc = xp.where(y >= _XBIG, 0.0, erfc)
    out = xp.where(y <= _THRESH, small, xp.where(x < 0, erfc - 1.0, 1.0 - erfc))
    out = xp.where(xp.isnan(x), x, out)
    return out.astype(arr.dtype)


def erf_any(arr: Any) -> Any:
    """erf of a float array: float32 in one float32 kernel, other dtypes through float64."""
    return special.erf32(arr) if arr.dtype == "float32" else erf_array(arr)


class Erf(Function):
    _backward_name = "ErfBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Any:
        ctx.save_for_backward(x)
        return erf_any(_float_operand(x)[1])

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        (x,) = ctx.saved_tensors
        return g * (-(x * x)).exp() * _TWO_OVER_SQRT_PI


def erf(x: Tensor) -> Tensor:
    """The error function, 2/sqrt(pi) * integral of exp(-t^2) from 0 to x."""
    return Erf.apply(x)


# --------------------------------------------------------------------------- softmax
def _softmax_input(x: Tensor, dim: Any, dtype: Any, name: str) -> tuple[Tensor, int]:
    if dtype is not None:
        x = x.to(dtype)
    if x._data.dtype.kind not in "fV":
        raise RuntimeError(f"\"{name}_lastdim_kernel_impl\" not implemented for '{x.dtype}'")
    ndim = x._data.ndim
    if dim is None:
        warnings.warn(
            f"Implicit dimension choice for {name} has been deprecated. Change the call to "
            "include dim=X as an argument.",
            stacklevel=3,
        )
        dim = 0 if ndim in (0, 1, 3) else 1
    return x, wrap_dim(int(dim), ndim)


def _shifted(arr: Any, dim: int, keep_z: bool = True) -> tuple[Any, Any]:
    """(x - max along dim, its exp): the shift keeps exp from overflowing; without ``keep_z``
    the exp overwrites the shifted array (one array, not two)."""
    xp = array_module(arr)
    if arr.ndim == 0:
        return arr - arr, xp.ones_like(arr)
    if arr.size == 0:  # an empty softmax dim has no max: empty results, as torch gives
        return arr.copy(), arr.copy()
    m = arr.max(axis=dim, keepdims=True)  # the method: xp.max adds ~0.8 us of dispatch
    # the max subtracted whatever it is, as torch: a row of -inf, +inf or nan comes out nan;
    # numpy's warning for inf - inf silenced only there (errstate costs 0.7 us a call)
    if xp is np and np.count_nonzero(np.isfinite(m)) != m.size:
        with np.errstate(invalid="ignore"):
            z = arr - m
    else:
        z = arr - m
    if not keep_z:  # softmax needs only the exp: computed in place
        return z, xp.exp(z, out=z)
    return z, xp.exp(z)


class Softmax(Function):
    _backward_name = "SoftmaxBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, dim: int) -> Any:
        _, e = _shifted(x._data, dim, keep_z=False)
        ctx.dim = dim if e.ndim else None
        if e.ndim:
            e /= e.sum(axis=dim, keepdims=True)  # in place: e is softmax's own fresh array
        else:
            e = e / e
        out = wrap(e)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None]:
        (out,) = ctx.saved_tensors
        ga, y = g._data, out._data
        if not STATE.enabled and ga.shape == y.shape and ga.dtype == y.dtype and y.ndim:
            # no create_graph: y * (g - sum(g * y)) on the arrays, the row sums without a copy
            gx = ga * y
            s = gx.sum(axis=ctx.dim, keepdims=True)
            gx = _sub_mul(ga, s, y)
            return wrap(gx), None
        gy = g * out
        return gy - out * gy.sum(ctx.dim, keepdim=True), None


class LogSoftmax(Function):
    _backward_name = "LogSoftmaxBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, dim: int) -> Any:
        z, e = _shifted(x._data, dim)
        xp = array_module(e)
        ctx.dim = dim if e.ndim else None
        if e.ndim:
            s = e.sum(axis=dim, keepdims=True)
            z -= xp.log(s, out=s)  # z is _shifted's fresh array: in place
        else:
            z = z - xp.log(e)
        out = wrap(z)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None]:
        (out,) = ctx.saved_tensors
        ga, y = g._data, out._data
        if not STATE.enabled and ga.shape == y.shape and ga.dtype == y.dtype and y.ndim:
            xp = array_module(y)
            gx = xp.exp(y)  # no create_graph: g - exp(y) * sum(g) on the arrays, in place
            gx *= ga.sum(axis=ctx.dim, keepdims=True)
            gx = xp.subtract(ga, gx, out=gx)
            return wrap(gx), None
        return g - out.exp() * g.sum(ctx.dim, keepdim=True), None


def _sub_mul(g: Any, s: Any, y: Any) -> Any:
    """``(g - s) * y`` as one new array (s broadcast along the softmax dim)."""
    out = g - s
    out *= y
    return out


def softmax(x: Tensor, dim: Any = None, dtype: Any = None) -> Tensor:
    """exp(x) / sum(exp(x)) along ``dim``, computed from x - max so it never overflows."""
    x, d = _softmax_input(x, dim, dtype, "softmax")
    return Softmax.apply(x, d)


def log_softmax(x: Tensor, dim: Any = None, dtype: Any = None) -> Tensor:
    """x - logsumexp(x) along ``dim``, computed stably."""
    x, d = _softmax_input(x, dim, dtype, "log_softmax")
    return LogSoftmax.apply(x, d)


# --------------------------------------------------------------------------- pointwise
def _const(x: Tensor, arr: Any) -> Tensor:
    """A derivative factor that is piecewise constant in x, as a tensor of x's dtype."""
    return wrap(arr.astype(x._data.dtype))


class LeakyRelu(Function):
    _backward_name = "LeakyReluBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, slope: float) -> Any:
        arr = x._data
        ctx.save_for_backward(x)
        ctx.slope = slope
        return select_where(array_module(arr), arr > 0, arr, arr * slope)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None]:
        (x,) = ctx.saved_tensors
        arr = x._data
        one, slope = arr.dtype.type(1), arr.dtype.type(ctx.slope)
        return g * _const(x, select_where(array_module(arr), arr > 0, one, slope)), None


class Elu(Function):
    _backward_name = "EluBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, alpha: float) -> Any:
        arr = x._data
        xp = array_module(arr)
        ctx.save_for_backward(x)
        ctx.alpha = alpha
        return select_where(xp, arr > 0, arr, alpha * xp.expm1(xp.minimum(arr, 0)))

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None]:
        (x,) = ctx.saved_tensors
        # exp of the clamped input: no overflow (and no inf * 0 in double backward) for large x
        return g * where(x > 0, 1.0, x.clamp(max=0.0).exp() * ctx.alpha), None


class Gelu(Function):
    _backward_name = "GeluBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, approximate: str) -> Any:
        arr = x._data
        ctx.save_for_backward(x)
        ctx.approximate = approximate
        if approximate == "tanh":
            out, ctx.inner = special.gelu_tanh_forward(arr)  # inner: the tanh, for backward
        else:
            out, cdf, gauss = special.gelu_forward(arr, erf_any)
            ctx.inner = (cdf, gauss)  # the normal cdf and exp(-x^2/2), for backward
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None]:
        (x,) = ctx.saved_tensors
        if not STATE.enabled and type(g._data) is type(x._data):  # no create_graph: arrays
            if ctx.approximate == "tanh":
                return wrap(special.gelu_tanh_backward(g._data, x._data, ctx.inner)), None
            return wrap(special.gelu_backward(g._data, x._data, *ctx.inner)), None
        if ctx.approximate == "tanh":
            x2 = x * x
            t = (_GELU_K * (x + 0.044715 * x2 * x)).tanh()
            dt = (1.0 - t * t) * (_GELU_K * (1.0 + 3.0 * 0.044715 * x2))
            return g * (0.5 * (1.0 + t) + 0.5 * x * dt), None
        cdf = 0.5 * (1.0 + erf(x * _SQRT1_2))
        pdf = (-0.5 * x * x).exp() * _INV_SQRT_2PI
        return g * (cdf + x * pdf), None


class Silu(Function):
    _backward_name = "SiluBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Any:
        arr = x._data
        ctx.save_for_backward(x)
        return arr * (0.5 * array_module(arr).tanh(0.5 * arr) + 0.5)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        (x,) = ctx.saved_tensors
        s = x.sigmoid()
        return g * s * (1.0 + x * (1.0 - s))


class Softplus(Function):
    _backward_name = "SoftplusBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, beta: float, threshold: float) -> Any:
        arr = x._data
        xp = array_module(arr)
        ctx.save_for_backward(x)
        ctx.beta, ctx.threshold = beta, threshold
        bx = arr * beta
        with np.errstate(invalid="ignore"):  # nan in, nan out, as torch: no warning
            soft = xp.logaddexp(bx, 0.0).astype(arr.dtype) / beta
        return select_where(xp, bx > threshold, arr, soft)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None, None]:
        (x,) = ctx.saved_tensors
        bx = x * ctx.beta
        return where(bx > ctx.threshold, g, g * bx.sigmoid()), None, None


class Hardtanh(Function):
    _backward_name = "HardtanhBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, lo: float, hi: float) -> Any:
        arr = x._data
        ctx.save_for_backward(x)
        ctx.bounds = (lo, hi)
        return array_module(arr).clip(arr, lo, hi).astype(arr.dtype)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None, None]:
        (x,) = ctx.saved_tensors
        lo, hi = ctx.bounds
        return g * _const(x, (x._data > lo) & (x._data < hi)), None, None


class LogSigmoid(Function):
    _backward_name = "LogSigmoidBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Any:
        arr = x._data
        xp = array_module(arr)
        ctx.save_for_backward(x)
        return xp.minimum(arr, 0) - xp.log1p(xp.exp(-xp.abs(arr)))

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        (x,) = ctx.saved_tensors
        return g * (-x).sigmoid()


def leaky_relu(x: Tensor, negative_slope: float = 0.01) -> Tensor:
    return LeakyRelu.apply(x, float(negative_slope))


def elu(x: Tensor, alpha: float = 1.0) -> Tensor:
    return Elu.apply(x, float(alpha))


def gelu(x: Tensor, approximate: str = "none") -> Tensor:
    """x * Phi(x) (exact, through erf) or its tanh approximation (``approximate='tanh'``)."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return Gelu.apply(x, approximate)


def silu(x: Tensor) -> Tensor:
    return Silu.apply(x)


def softplus(x: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    return Softplus.apply(x, float(beta), float(threshold))


def hardtanh(x: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    return Hardtanh.apply(x, float(min_val), float(max_val))


def logsigmoid(x: Tensor) -> Tensor:
    return LogSigmoid.apply(x)


TENSOR_METHODS: dict[str, Any] = {"softmax": softmax, "log_softmax": log_softmax, "erf": erf}
__all__: list[str] = [
    "elu",
    "erf",
    "gelu",
    "hardtanh",
    "leaky_relu",
    "log_softmax",
    "logsigmoid",
    "silu",
    "softmax",
    "softplus",
]
