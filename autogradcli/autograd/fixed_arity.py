"""``Function.apply`` for exactly one or two positional arguments: the built-in ops' entry points.

``unary_apply(cls)`` and ``binary_apply(cls)`` take the same steps as ``run_function`` (record.py)
in one Python call, without packing ``*args`` or building a ``needs_input_grad`` tuple per call.
They also do ``recorded_outputs``' two common cases in place (one fresh float array, or a new float
Tensor forward made), and build a non-leaf input's edge tuple in place: each measured at 2-4% of
the per-op chain benchmark (bench/README.md, "Bookkeeping"); everything else goes through record.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..tensor.tensor import Tensor, wrap
from .grad_mode import STATE
from .node import _seq, edge_to
from .record import (
    _ndarray,
    _record_saved,
    rare_float_kind,
    recorded_outputs,
    special_result,
    special_unrecorded,
    unrecorded_outputs,
)

if TYPE_CHECKING:
    from .function import Function

# needs_input_grad values, shared by every call
_T1 = (True,)
_F1 = (False,)
_TT = (True, True)
_TF = (True, False)
_FT = (False, True)
_FF = (False, False)


def unary_apply(cls: type[Function]) -> Callable[[Any], Any]:
    """``cls.apply`` for exactly one positional argument."""
    state = STATE
    node_cls = cls._backward_cls
    forward = cls._forward_impl

    def apply(a: Any) -> Any:
        ctx = node_cls()
        if state.enabled:
            if isinstance(a, Tensor) and a._requires_grad:
                fn = a._grad_fn  # edge_to for a non-leaf inlined (a tuple)
                d = a._data
                edges = ((fn, a._output_nr, d.shape, d.dtype) if fn is not None else edge_to(a),)
                ctx.needs_input_grad = _T1
                state.enabled = False
                try:
                    raw = forward(ctx, a)
                finally:
                    state.enabled = True
                if state.special:  # anomaly, bfloat16 or an export (grad_mode.py)
                    raw = special_result(ctx, raw, (a,), True)
                # recorded_outputs' common cases: one fresh float array, or a new float Tensor
                # forward made (to save it)
                if not ctx._dirty and not ctx._non_differentiable:
                    tr = type(raw)
                    if tr is _ndarray and ((k := raw.dtype.kind) == "f" or rare_float_kind(k)):
                        out = wrap(raw, True, ctx)
                    elif (
                        tr is Tensor
                        and raw._grad_fn is None
                        and not raw._requires_grad
                        and raw is not a
                        and ((k := raw._data.dtype.kind) == "f" or rare_float_kind(k))
                    ):
                        out = raw
                        out._grad_fn = ctx
                        out._requires_grad = True
                    else:
                        return recorded_outputs(ctx, raw, (a,), edges)
                    ctx._key = -next(_seq)
                    ctx._next = edges
                    if ctx._to_save is not None:
                        _record_saved(ctx, 2)  # the caller is frame 2 from there
                    return out
                return recorded_outputs(ctx, raw, (a,), edges)
            ctx.needs_input_grad = _F1
            state.enabled = False
            try:
                raw = forward(ctx, a)
            finally:
                state.enabled = True
            if state.special:
                raw = special_result(ctx, raw, (a,), False)
        else:
            if state.special:
                return special_unrecorded(ctx, forward, (a,))
            ctx.needs_input_grad = _F1
            raw = forward(ctx, a)
        if type(raw) is _ndarray and not ctx._dirty:
            return wrap(raw)
        return unrecorded_outputs(ctx, raw, (a,))

    apply.__qualname__ = apply.__name__ = f"{cls.__name__}.apply"
    return apply


def binary_apply(
    cls: type[Function], operands: tuple[type, ...] | None = None
) -> Callable[[Any, Any], Any]:
    """``cls.apply`` for exactly two positional arguments.

    With ``operands`` it is an operator method itself: NotImplemented when the second argument
    is not an instance of ``operands``, so that Python tries the other operand's method.
    """
    state = STATE
    node_cls = cls._backward_cls
    forward = cls._forward_impl

    def apply(a: Any, b: Any) -> Any:
        if operands is not None:
            tb = type(b)
            if (
                tb is not float
                and tb is not Tensor
                and tb is not int
                and not isinstance(b, operands)
            ):
                return NotImplemented
        ctx = node_cls()
        if state.enabled:
            na = isinstance(a, Tensor) and a._requires_grad
            nb = isinstance(b, Tensor) and b._requires_grad
            ctx.needs_input_grad = (_TT if nb else _TF) if na else (_FT if nb else _FF)
            if na or nb:
                # edge_to for a non-leaf inlined (a tuple), a leaf's through edge_to
                if na:
                    fn = a._grad_fn
                    d = a._data
                    ea = (fn, a._output_nr, d.shape, d.dtype) if fn is not None else edge_to(a)
                else:
                    ea = None
                if nb:
                    fn = b._grad_fn
                    d = b._data
                    eb = (fn, b._output_nr, d.shape, d.dtype) if fn is not None else edge_to(b)
                else:
                    eb = None
                edges = (ea, eb)
                state.enabled = False
                try:
                    raw = forward(ctx, a, b)
                finally:
                    state.enabled = True
                if state.special:  # anomaly, bfloat16 or an export (grad_mode.py)
                    raw = special_result(ctx, raw, (a, b), True)
                # recorded_outputs' common cases: one fresh float array, or a new float Tensor
                # forward made (to save it)
                if not ctx._dirty and not ctx._non_differentiable:
                    tr = type(raw)
                    if tr is _ndarray and ((k := raw.dtype.kind) == "f" or rare_float_kind(k)):
                        out = wrap(raw, True, ctx)
                    elif (
                        tr is Tensor
                        and raw._grad_fn is None
                        and not raw._requires_grad
                        and raw is not a
                        and raw is not b
                        and ((k := raw._data.dtype.kind) == "f" or rare_float_kind(k))
                    ):
                        out = raw
                        out._grad_fn = ctx
                        out._requires_grad = True
                    else:
                        return recorded_outputs(ctx, raw, (a, b), edges)
                    ctx._key = -next(_seq)
                    ctx._next = edges
                    if ctx._to_save is not None:
                        _record_saved(ctx, 2)  # the caller is frame 2 from there
                    return out
                return recorded_outputs(ctx, raw, (a, b), edges)
            state.enabled = False
            try:
                raw = forward(ctx, a, b)
            finally:
                state.enabled = True
            if state.special:
                raw = special_result(ctx, raw, (a, b), False)
        else:
            if state.special:
                return special_unrecorded(ctx, forward, (a, b))
            ctx.needs_input_grad = _FF
            raw = forward(ctx, a, b)
        if type(raw) is _ndarray and not ctx._dirty:
            return wrap(raw)
        return unrecorded_outputs(ctx, raw, (a, b))

    apply.__qualname__ = apply.__name__ = f"{cls.__name__}.apply"
    return apply
