"""``clamp`` and ``where``: elementwise choices between an input and bounds or two branches,
each a Function with its derivative beside it."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autograd.function import Function
from ..autograd.gradient_ops import sum_to
from ..backend.select import where as select_where
from ..tensor.tensor import Tensor, wrap
from ._util import array_module, binary_operands

__all__ = ["clamp", "where"]

_NO_COMPLEX_CLAMP = "clamp is not supported for complex types"


def _clips(arr: Any, lo: Any, hi: Any) -> bool:
    """Whether clamp of ``arr`` to number bounds ``lo``/``hi`` runs as numpy's clip (float32
    and float64 numpy arrays: a maximum or minimum against a scalar is not vectorized, 3x)."""
    numbers = all(b is None or isinstance(b, (int, float)) for b in (lo, hi))
    return type(arr) is np.ndarray and arr.dtype in (np.float32, np.float64) and numbers


class Clamp(Function):
    _backward_name = "ClampBackward1"

    @staticmethod
    def forward(ctx: Any, x: Tensor, min: Any, max: Any) -> Any:
        if min is None and max is None:
            raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
        if x._data.dtype.kind == "c":
            raise NotImplementedError(_NO_COMPLEX_CLAMP)
        xp = array_module(x._data)
        lo = min._data if isinstance(min, Tensor) else min
        hi = max._data if isinstance(max, Tensor) else max
        arr = x._data
        out = arr
        if _clips(arr, min, max):  # numpy's clip: one vectorized pass, torch's bits (nan, -0.0)
            out = np.clip(arr, -np.inf if lo is None else lo, np.inf if hi is None else hi)
        else:
            if lo is not None:
                out = xp.maximum(out, lo)
            if hi is not None:
                out = xp.minimum(out, hi)
        if out.dtype != arr.dtype and not isinstance(min, Tensor) and not isinstance(max, Tensor):
            out = (
                out.astype(arr.dtype)
                if arr.dtype.kind in "fV" or isinstance(lo or hi, int)
                else out
            )
        ctx.save_for_backward(x)
        ctx.bounds = (lo, hi)
        return out if out is not arr else arr.copy()

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None, None]:
        (x,) = ctx.saved_tensors
        lo, hi = ctx.bounds
        xp = array_module(x._data)
        inside = xp.ones(x._data.shape, dtype=bool)
        if lo is not None:
            inside &= x._data >= lo
        if hi is not None:
            inside &= x._data <= hi
        return g * wrap(inside), None, None


class Where(Function):
    _backward_name = "WhereBackward0"

    @staticmethod
    def forward(ctx: Any, cond: Tensor, a: Any, b: Any) -> Any:
        x, y, dt = binary_operands(a, b)
        c = cond._data if isinstance(cond, Tensor) else cond
        xp = array_module(c)
        ctx.save_for_backward(cond)
        ctx.shapes = (getattr(x, "shape", ()), getattr(y, "shape", ()))
        out = select_where(xp, c, x, y)
        return out if dt is None or out.dtype == dt else out.astype(dt)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[None, Any, Any]:

        (cond,) = ctx.saved_tensors
        _, na, nb = ctx.needs_input_grad
        sa, sb = ctx.shapes
        zero = g * 0.0
        ga = sum_to(where(cond, g, zero), sa) if na else None
        gb = sum_to(where(cond, zero, g), sb) if nb else None
        return None, ga, gb


def clamp(x: Tensor, min: Any = None, max: Any = None) -> Tensor:
    return Clamp.apply(x, min, max)


def where(cond: Tensor, a: Any = None, b: Any = None) -> Any:
    if a is None and b is None:
        from .indexing import nonzero

        return nonzero(cond, as_tuple=True)
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        a = _scalar_tensor(a, b, cond)
    return Where.apply(cond, a, b)


def _scalar_tensor(a: Any, b: Any, like: Tensor) -> Tensor:
    """Python scalar ``a`` as a 0-d tensor on ``like``'s device, of the dtype PyTorch gives two
    scalar branches: the default float if either is a float, else int64, else bool."""
    from ..tensor.dtype import get_default_dtype

    kinds = {type(a), type(b)}
    if float in kinds:
        dtype = get_default_dtype().np
    elif int in kinds:
        dtype = "int64"
    else:
        dtype = bool
    return wrap(array_module(like._data).asarray(a, dtype=dtype))


TENSOR_METHODS: dict[str, Any] = {
    "clamp": clamp,
    "clip": clamp,
}
