"""gradcheck of complex functions: complex inputs and outputs become (..., 2) pairs of reals, so
the real finite differences check PyTorch's convention (z.grad = dL/dRe z + i dL/dIm z)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ..backend import array_module
from ..tensor.tensor import Tensor
from .function import Function


class AsPairs(Function):
    """A complex tensor as a (..., 2) real copy (real and imaginary parts last)."""

    _backward_name = "ViewAsRealBackward0"

    @staticmethod
    def forward(ctx: Any, z: Tensor) -> Any:
        arr = z._data
        return array_module(arr).stack([arr.real, arr.imag], axis=-1)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        return AsComplex.apply(g)


class AsComplex(Function):
    """A (..., 2) real tensor as the complex tensor of its pairs (a copy)."""

    _backward_name = "ViewAsComplexBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Any:
        arr = x._data
        xp = array_module(arr)
        out = xp.empty(arr.shape[:-1], "complex128" if arr.itemsize == 8 else "complex64")
        out.real[...] = arr[..., 0]
        out.imag[...] = arr[..., 1]
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        return AsPairs.apply(g)


def _is_complex(t: Any) -> bool:
    return isinstance(t, Tensor) and t._data.dtype.kind == "c"


def as_real_problem(func: Callable[..., Any], inputs: tuple[Any, ...]) -> tuple[Any, tuple]:
    """``func`` and ``inputs`` with every complex tensor (input or output) as real pairs."""
    was_complex = [_is_complex(t) for t in inputs]
    real_inputs = tuple(
        AsPairs.apply(t.detach()).requires_grad_(t.requires_grad) if c else t
        for t, c in zip(inputs, was_complex)
    )

    @functools.wraps(func)
    def real_func(*args: Any) -> Any:
        out = func(*[AsComplex.apply(a) if c else a for a, c in zip(args, was_complex)])
        outs = out if isinstance(out, tuple) else (out,)
        mapped = tuple(AsPairs.apply(o) if _is_complex(o) else o for o in outs)
        return mapped if isinstance(out, tuple) else mapped[0]

    return real_func, real_inputs
