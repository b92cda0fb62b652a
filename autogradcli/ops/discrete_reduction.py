"""Reductions with integer or bool results (argmax, argmin, all, any): no gradient flows
through them, so they share one non-differentiable Function that runs a given array function."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..autograd.function import Function
from ..tensor.tensor import Tensor
from ._util import array_module, normalize_dims, wrap_dim
from .complex_numbers import refuse_complex
from .reduction_common import check_nonempty

__all__ = ["all", "any", "argmax", "argmin"]


class _Discrete(Function):
    """Runs ``fn`` on the input's array; the result is never differentiable."""

    _backward_name = "NotDifferentiable"

    @staticmethod
    def forward(ctx: Any, x: Tensor, fn: Callable[[Any], Any]) -> Any:
        return fn(x._data)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[None, None]:
        return None, None


def _arg(x: Tensor, dim: Any, keepdim: bool, largest: bool) -> Tensor:
    """argmax/argmin: int64 positions of the extreme values (flat index when dim is None)."""
    name = "argmax" if largest else "argmin"
    refuse_complex(x, f"{name}(): does not support complex input", RuntimeError)

    def fn(arr: Any) -> Any:
        xp = array_module(arr)
        find = xp.argmax if largest else xp.argmin
        if dim is None:
            if arr.size == 0:
                raise RuntimeError(
                    f"{name}(): Expected reduction dim to be specified for input.numel() == 0."
                )
            out = find(arr.reshape(-1))
            return out.astype("int64").reshape((1,) * arr.ndim if keepdim else ())
        if arr.ndim == 0:
            wrap_dim(int(dim), 0)
            return xp.zeros((), dtype="int64")
        d = wrap_dim(int(dim), arr.ndim)
        check_nonempty(arr, (d,), name)
        return find(arr, axis=d, keepdims=keepdim).astype("int64")

    return _Discrete.apply(x, fn)


def argmax(x: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    """The int64 index of the maximum (of the flattened tensor when ``dim`` is None)."""
    return _arg(x, dim, keepdim, True)


def argmin(x: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    """The int64 index of the minimum (of the flattened tensor when ``dim`` is None)."""
    return _arg(x, dim, keepdim, False)


def all(x: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    """Whether every element over ``dim`` (all dims when None) is true: a bool tensor."""
    dims = normalize_dims(dim, x._data.ndim)
    return _Discrete.apply(x, lambda a: array_module(a).all(a, axis=dims, keepdims=keepdim))


def any(x: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    """Whether any element over ``dim`` (all dims when None) is true: a bool tensor."""
    dims = normalize_dims(dim, x._data.ndim)
    return _Discrete.apply(x, lambda a: array_module(a).any(a, axis=dims, keepdims=keepdim))


TENSOR_METHODS: dict[str, Any] = {name: globals()[name] for name in __all__}
