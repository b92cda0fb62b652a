"""More elementwise math: ``atan2``, ``hypot``, ``logaddexp``, ``exp2``, ``nan_to_num``,
``clamp_min``/``clamp_max``, the logical ``and``/``or``/``xor``, and the aliases
``true_divide``, ``deg2rad``/``rad2deg``; compositions of existing ops except ``atan2``."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..autograd.function import Function
from ..tensor.tensor import Tensor
from ._util import array_module, binary_operands, scalar_type_name, wrap
from .arithmetic import maximum
from .clamp_where import clamp, where
from .inplace import apply_inplace

__all__ = ["arctan2", "atan2", "clamp_max", "clamp_min", "deg2rad", "exp2", "hypot"]
__all__ += ["logaddexp", "logical_and", "logical_or", "logical_xor", "nan_to_num", "rad2deg"]
__all__ += ["float_power", "fmod", "heaviside", "logit", "signbit", "sinc", "true_divide"]
__all__ += ["xlogy"]  # sgn, complex-aware, is in complex_numbers


class Atan2(Function):
    """The angle of (x, y) = atan2(input, other); gradients other/r^2 and -input/r^2."""

    _backward_name = "Atan2Backward0"

    @staticmethod
    def forward(ctx: Any, y: Tensor, x: Tensor) -> Any:
        ctx.save_for_backward(y, x)
        a, b, dt = binary_operands(y, x)
        common = dt if dt is not None else getattr(a, "dtype", None) or b.dtype
        if common.kind != "f":  # integers give the default float dtype
            from ..tensor.dtype import get_default_dtype

            common = get_default_dtype().np
        return array_module(a).arctan2(a, b).astype(common, copy=False)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, Any]:
        y, x = ctx.saved_tensors
        r2 = x * x + y * y
        ny, nx = ctx.needs_input_grad
        return (g * x / r2 if ny else None, g * -y / r2 if nx else None)


def atan2(input: Tensor, other: Tensor) -> Tensor:
    """The angle of the point (other, input), in (-pi, pi]."""
    return Atan2.apply(input, other)


def _float_kernel(name: str, *tensors: Tensor) -> None:
    for t in tensors:
        if isinstance(t, Tensor) and t._data.dtype.kind not in "fc":
            raise NotImplementedError(
                f"\"{name}_cpu\" not implemented for '{scalar_type_name(t._data.dtype)}'"
            )


def hypot(input: Tensor, other: Tensor) -> Tensor:
    """sqrt(input^2 + other^2)."""
    _float_kernel("hypot", input, other)
    return (input * input + other * other).sqrt()


def logaddexp(input: Tensor, other: Tensor) -> Tensor:
    """log(exp(input) + exp(other)), without overflow."""
    _float_kernel("logaddexp", input, other)
    return maximum(input, other) + (-(input - other).abs()).exp().log1p()


def exp2(input: Tensor) -> Tensor:
    """2 ** input (integers give the default float dtype)."""
    if input._data.dtype.kind not in "fc":
        from ..tensor.dtype import get_default_dtype

        input = input.to(get_default_dtype())
    return (input * math.log(2.0)).exp()


def nan_to_num(
    input: Tensor, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None
) -> Tensor:
    """``input`` with NaN, +inf and -inf replaced (by 0 and the dtype's largest and lowest
    finite values by default); the gradient passes only where ``input`` is finite."""
    arr = input._data
    if arr.dtype.kind not in "fc":
        return input.clone()
    xp = array_module(arr)
    info = np.finfo(arr.dtype)
    hi = float(info.max) if posinf is None else posinf
    lo = float(info.min) if neginf is None else neginf
    replaced = xp.where(xp.isnan(arr), nan, xp.where(arr > 0, hi, lo)).astype(arr.dtype)
    return where(wrap(xp.isfinite(arr)), input, wrap(replaced))


def nan_to_num_(input: Tensor, nan: float = 0.0, posinf: Any = None, neginf: Any = None) -> Tensor:
    """In-place :func:`nan_to_num`."""
    return apply_inplace(input, "nan_to_num_", lambda s: nan_to_num(s, nan, posinf, neginf))


def clamp_min(input: Tensor, min: Any) -> Tensor:
    """``clamp(input, min=min)``."""
    return clamp(input, min=min)


def clamp_max(input: Tensor, max: Any) -> Tensor:
    """``clamp(input, max=max)``."""
    return clamp(input, max=max)


def _logical(name: str, fn: Callable[[Any, Any, Any], Any]) -> Callable[[Tensor, Tensor], Tensor]:
    def op(input: Tensor, other: Tensor) -> Tensor:
        a, b, _ = binary_operands(input, other)
        return wrap(fn(array_module(a), a, b))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Elementwise ``{name}`` of the truth values (non-zero is True), as bool."
    return op


logical_and = _logical("logical_and", lambda xp, a, b: xp.logical_and(a, b))
logical_or = _logical("logical_or", lambda xp, a, b: xp.logical_or(a, b))
logical_xor = _logical("logical_xor", lambda xp, a, b: xp.logical_xor(a, b))


def fmod(input: Tensor, other: Any) -> Tensor:
    """The remainder of input / other with the sign of ``input`` (C's fmod)."""
    if input._data.dtype.kind in "iu" and (
        not isinstance(other, Tensor) or other._data.dtype.kind in "iu"
    ):
        a, b, _ = binary_operands(input, other)
        return wrap(array_module(a).fmod(a, b))
    return input - (input / other).trunc() * other


def float_power(input: Any, exponent: Any) -> Tensor:
    """input ** exponent computed in double precision (float64 result)."""
    base = input.double() if isinstance(input, Tensor) else input
    power = exponent.double() if isinstance(exponent, Tensor) else exponent
    if not isinstance(base, Tensor):
        return power.new_full((), float(base)) ** power
    return base ** (float(power) if not isinstance(power, Tensor) else power)


def heaviside(input: Tensor, values: Tensor) -> Tensor:
    """0 where input < 0, ``values`` where it is 0, 1 where it is > 0 (not differentiable)."""
    a, b, _ = binary_operands(input, values)
    return wrap(array_module(a).heaviside(a, b))


def signbit(input: Tensor) -> Tensor:
    """Whether each sign bit is set (True for -0.0 too)."""
    return wrap(array_module(input._data).signbit(input._data))


def logit(input: Tensor, eps: float | None = None) -> Tensor:
    """log(p / (1 - p)), with ``p`` clamped to [eps, 1 - eps] when ``eps`` is given."""
    p = input if eps is None else input.clamp(eps, 1.0 - eps)
    return (p / (1.0 - p)).log()


def xlogy(input: Any, other: Any) -> Tensor:
    """input * log(other), and 0 where input is 0 (unless other is nan, as in PyTorch)."""
    if not isinstance(input, Tensor):
        input = other.new_full((), input)
    if not isinstance(other, Tensor):
        other = input.new_full((), other)
    zero = (input == 0) & ~other.isnan()
    return where(zero, 0.0, input * where(zero, 1.0, other).log())


def sinc(input: Tensor) -> Tensor:
    """sin(pi x) / (pi x), and 1 at 0."""
    if input._data.dtype.kind not in "fc":
        from ..tensor.dtype import get_default_dtype

        input = input.to(get_default_dtype())
    zero = input == 0
    scaled = where(zero, 1.0, input) * math.pi
    return where(zero, 1.0, scaled.sin() / scaled)


def true_divide(input: Tensor, other: Any) -> Tensor:
    """``input / other``."""
    return input / other


def deg2rad(input: Tensor) -> Tensor:
    """Degrees to radians."""
    return input * (math.pi / 180.0)


def rad2deg(input: Tensor) -> Tensor:
    """Radians to degrees."""
    return input * (180.0 / math.pi)


arctan2 = atan2


def _in_place(fn: Callable[..., Tensor], name: str) -> Callable[..., Tensor]:
    def method(self: Tensor, *args: Any) -> Tensor:
        return apply_inplace(self, name, lambda s: fn(s, *args), *args)

    method.__name__ = method.__qualname__ = name
    return method


TENSOR_METHODS: dict[str, Any] = {
    name: globals()[name]
    for name in __all__
    if name != "true_divide"  # arithmetic's method
}
TENSOR_METHODS.update(
    nan_to_num_=nan_to_num_,
    clamp_min_=_in_place(clamp_min, "clamp_min_"),
    clamp_max_=_in_place(clamp_max, "clamp_max_"),
    atan2_=_in_place(atan2, "atan2_"),
    logical_and_=_in_place(logical_and, "logical_and_"),
    logical_or_=_in_place(logical_or, "logical_or_"),
)
