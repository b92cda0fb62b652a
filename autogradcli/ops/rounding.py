"""Rounding: ``round`` (half to even, optional ``decimals``), ``floor``, ``ceil`` (zero
gradient) and ``frac`` (gradient 1), with their in-place forms."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..autograd.function import Function
from ..tensor.tensor import Tensor
from ._util import array_module, scalar_type_name
from .inplace import apply_inplace

__all__ = ["ceil", "floor", "frac", "round"]


def _float_only(x: Tensor, kernel: str) -> None:
    dt = x._data.dtype
    if dt.kind not in "fc":
        raise NotImplementedError(f"\"{kernel}_cpu\" not implemented for '{scalar_type_name(dt)}'")


class _Stepwise(Function):
    """A piecewise-constant op: its gradient is zero (``g * 0`` keeps shape and dtype)."""

    @staticmethod
    def forward(ctx: Any, x: Tensor, fn: Callable[[Any, Any], Any]) -> Any:
        arr = x._data
        return fn(array_module(arr), arr)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None]:
        return g * 0.0, None


class Round(_Stepwise):
    _backward_name = "RoundBackward0"


class RoundDecimals(_Stepwise):
    _backward_name = "RoundBackward1"


class Floor(_Stepwise):
    _backward_name = "FloorBackward0"


class Ceil(_Stepwise):
    _backward_name = "CeilBackward0"


class Frac(Function):
    """x - trunc(x); its gradient is 1."""

    _backward_name = "FracBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Any:
        arr = x._data
        return arr - array_module(arr).trunc(arr)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        return g


def round(input: Tensor, *, decimals: int = 0) -> Tensor:
    """Round half to even, to ``decimals`` decimal places (negative: to tens, hundreds...)."""
    if decimals:
        _float_only(input, "round")
        return RoundDecimals.apply(input, lambda xp, a: xp.round(a, int(decimals)))
    return Round.apply(input, lambda xp, a: xp.rint(a) if a.dtype.kind in "fc" else a.copy())


def floor(input: Tensor) -> Tensor:
    """The largest integer <= x (integer tensors are returned as a copy)."""
    return Floor.apply(input, lambda xp, a: xp.floor(a) if a.dtype.kind in "fc" else a.copy())


def ceil(input: Tensor) -> Tensor:
    """The smallest integer >= x (integer tensors are returned as a copy)."""
    return Ceil.apply(input, lambda xp, a: xp.ceil(a) if a.dtype.kind in "fc" else a.copy())


def frac(input: Tensor) -> Tensor:
    """The fractional part x - trunc(x), with the sign of x."""
    _float_only(input, "frac")
    return Frac.apply(input)


def _in_place(name: str, fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        return apply_inplace(self, f"{name}_", lambda s: fn(s, *args, **kwargs))

    method.__name__ = method.__qualname__ = f"{name}_"
    method.__doc__ = f"In-place :func:`{name}`."
    return method


TENSOR_METHODS: dict[str, Any] = {name: globals()[name] for name in __all__}
TENSOR_METHODS.update({f"{n}_": _in_place(n, globals()[n]) for n in __all__})
