"""The differentiable ops the engine itself applies to gradients, so that the core (tensor +
autograd) works without the ops layer: un-broadcasting (``sum_to``, with ``Expand`` as its
adjoint), summing two gradients for one input (``add_grads``), and changing a gradient's dtype or
device (``ToCopy``). The ops layer binds these Functions to Tensor methods (``expand``, ``to``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import backend
from ..tensor.tensor import Tensor, wrap, wrap_view
from .fixed_arity import binary_apply
from .function import Function
from .grad_mode import STATE

_ndarray = np.ndarray


class SumTo(Function):
    """Sum a broadcast gradient back to ``shape`` (the adjoint of broadcasting)."""

    _backward_name = "SumToBackward"

    @staticmethod
    def forward(ctx: Any, g: Tensor, shape: tuple[int, ...]) -> Any:
        arr = g._data
        ctx.in_shape = arr.shape
        if not shape:  # to a 0-d tensor: the full sum (a numpy scalar, which apply wraps)
            return arr.sum()
        lead = arr.ndim - len(shape)
        axes = tuple(range(lead)) + tuple(
            i + lead for i, s in enumerate(shape) if s == 1 and arr.shape[i + lead] != 1
        )
        out = arr.sum(axis=axes, keepdims=True) if axes else arr
        if lead:
            out = out.reshape(shape)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None]:
        return _expand(g, ctx.in_shape), None


class Expand(Function):
    """A read-only broadcast view of ``t`` with ``shape`` (-1 keeps a dim)."""

    _backward_name = "ExpandBackward0"

    @staticmethod
    def forward(ctx: Any, t: Tensor, shape: tuple[int, ...]) -> Any:
        arr = t._data
        ctx.in_shape = arr.shape
        lead = len(shape) - arr.ndim
        if lead < 0:
            raise RuntimeError(
                f"expand: the number of sizes provided ({len(shape)}) must be greater or equal to "
                f"the number of dimensions in the tensor ({arr.ndim})"
            )
        target = tuple(arr.shape[i - lead] if s == -1 else s for i, s in enumerate(shape))
        try:
            if type(arr) is _ndarray and arr.flags.c_contiguous and arr.size:
                view = _broadcast_view(arr, target, lead)
            else:
                view = backend.array_module(arr).broadcast_to(arr, target)
        except ValueError:
            raise RuntimeError(
                f"The expanded size of the tensor ({list(target)}) must match the existing size "
                f"({list(arr.shape)}) at non-singleton dimensions"
            ) from None
        return wrap_view(view, t)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None]:
        return sum_to(g, ctx.in_shape), None


def _broadcast_view(arr: Any, target: tuple[int, ...], lead: int) -> Any:
    """numpy's ``broadcast_to(arr, target)`` for a C-contiguous array, built directly (a
    read-only view with 0 strides where it repeats): broadcast_to is ~3 us of Python."""
    strides = [0] * lead
    for n, m, step in zip(arr.shape, target[lead:], arr.strides):
        if n == 1:  # repeated, or kept at 1 (numpy's stride there is 0 too)
            strides.append(0)
        elif n == m:
            strides.append(step)
        else:
            raise ValueError("not broadcastable")
    view = _ndarray(target, arr.dtype, arr, 0, tuple(strides))
    view.flags.writeable = False
    return view


class ToCopy(Function):
    """A copy of ``x`` with another dtype and/or on another device."""

    _backward_name = "ToCopyBackward0"
    _chooses_dtype = True  # a float32 copy of a bfloat16 tensor stays float32

    @staticmethod
    def forward(ctx: Any, x: Tensor, np_dtype: Any, device: Any) -> Any:
        arr = x._data
        ctx.src = (arr.dtype, backend.device_of(arr))
        if device is not None:
            arr = backend.to_device(arr, device)
        if np_dtype is not None and arr.dtype != np_dtype:
            if arr.dtype.kind == "c" and np.dtype(np_dtype).kind != "c":
                import warnings

                warnings.warn(
                    "Casting complex values to real discards the imaginary part",
                    UserWarning,
                    stacklevel=2,
                )
                arr = arr.real
            arr = arr.astype(np_dtype)
        return arr if arr is not x._data else arr.copy()

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None, None]:
        src_dtype, src_device = ctx.src
        if g._data.dtype.kind == "c" and src_dtype.kind != "c":  # a real input: the real part
            g = _real_part(g)
        return ToCopy.apply(g, src_dtype, src_device), None, None


class AddGrads(Function):
    """Two gradients for the same tensor, summed (same shape and dtype)."""

    _backward_name = "AddBackward0"

    @staticmethod
    def forward(ctx: Any, a: Tensor, b: Tensor) -> Any:
        return a._data + b._data

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Tensor, Tensor]:
        return g, g


_sum_to = binary_apply(SumTo)
_expand = binary_apply(Expand)
_add = binary_apply(AddGrads)


def sum_to(g: Tensor, shape: tuple[int, ...]) -> Tensor:
    """``g`` summed over the dims that broadcasting added or stretched to reach ``shape``."""
    if g._data.shape == shape:
        return g
    return _sum_to(g, tuple(shape))


def add_grads(a: Tensor, b: Tensor, create_graph: bool) -> Tensor:
    """``a + b`` for two gradients of one tensor, recorded in the graph when ``create_graph``."""
    if create_graph:
        return _add(a, b)
    return wrap(a._data + b._data)


def cast_grad(g: Tensor, dtype: Any) -> Tensor:
    """``g`` as ``dtype``: recorded when building a graph (create_graph). A complex gradient for
    a real input is its real part, as in PyTorch."""
    if g._data.dtype.kind == "c" and np.dtype(dtype).kind != "c":
        g = _real_part(g)
    if STATE.enabled:
        return ToCopy.apply(g, dtype, None)
    return wrap(g._data.astype(dtype))


class RealPart(Function):
    """The real part of a complex gradient (its adjoint puts a real gradient back as complex)."""

    _backward_name = "RealBackward0"

    @staticmethod
    def forward(ctx: Any, g: Tensor) -> Any:
        ctx.dtype = g._data.dtype
        return g._data.real.copy()

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return ToCopy.apply(g, ctx.dtype, None)


def _real_part(g: Tensor) -> Tensor:
    return RealPart.apply(g) if STATE.enabled else wrap(g._data.real.copy())
