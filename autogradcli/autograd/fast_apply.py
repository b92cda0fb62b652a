"""``fixed_apply``: ``Function.apply`` for exactly one or two positional arguments.

The built-in ops' Tensor methods and operators are these: the same steps as ``Function.apply``
in one Python call, without packing ``*args`` or building tuples for ``needs_input_grad``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..tensor.tensor import Tensor
from .apply import _ndarray, _record_saved_single, _tracked, _untracked
from .grad_mode import STATE
from .node import AccumulateGrad, _new, _seq

if TYPE_CHECKING:
    from .function import Function

# needs_input_grad values, shared by every call
_T1 = (True,)
_F1 = (False,)
_TT = (True, True)
_TF = (True, False)
_FT = (False, True)
_FF = (False, False)


def fixed_apply(
    cls: type[Function], arity: int, operands: tuple[type, ...] | None = None
) -> Callable[..., Any]:
    """``cls.apply`` for exactly ``arity`` (1 or 2) positional arguments, as one Python call.

    The same steps as ``Function.apply`` (needs_input_grad, edges, forward with recording off,
    the same recorded tail) without packing ``*args``: the built-in ops' methods and operators.
    With ``operands`` (arity 2), it is an operator method itself: NotImplemented when the second
    argument is not an instance of ``operands``, so Python tries the other operand's method.
    """
    state = STATE

    def apply1(a: Any) -> Any:
        ctx = cls._backward_cls()
        if state.enabled:
            if isinstance(a, Tensor) and a._requires_grad:
                d = a._data
                fn = a._grad_fn
                if fn is None:
                    fn = a._acc
                    if fn is None:
                        fn = a._acc = AccumulateGrad(a)
                    e = (fn, 0, d.shape, d.dtype)
                else:
                    e = (fn, a._output_nr, d.shape, d.dtype)
                ctx.needs_input_grad = _T1
                state.enabled = False
                try:
                    raw = cls._forward_impl(ctx, a)
                finally:
                    state.enabled = True
                if (
                    type(raw) is _ndarray
                    and raw.dtype.kind == "f"
                    and not ctx._dirty
                    and not ctx._non_differentiable
                ):  # _tracked's first case inlined: one fresh float array
                    out = _new(Tensor)
                    out._data = raw
                    out._grad_fn = ctx
                    out._requires_grad = True
                    out._grad = out._base = out._hooks = out._acc = out._vc = None
                    out._output_nr = 0
                    ctx._key = -next(_seq)
                    ctx._next = (e,)
                    if ctx._to_save is not None:
                        _record_saved_single(ctx, ctx._to_save, out, 2)
                    return out
                return _tracked(ctx, raw, (a,), (e,))
            ctx.needs_input_grad = _F1
            state.enabled = False
            try:
                raw = cls._forward_impl(ctx, a)
            finally:
                state.enabled = True
        else:
            ctx.needs_input_grad = _F1
            raw = cls._forward_impl(ctx, a)
        if type(raw) is _ndarray and not ctx._dirty:
            out = _new(Tensor)
            out._data = raw
            out._requires_grad = False
            out._grad = out._grad_fn = out._base = out._hooks = out._acc = out._vc = None
            out._output_nr = 0
            return out
        return _untracked(ctx, raw, (a,))

    def apply2(a: Any, b: Any) -> Any:
        if operands is not None:
            tb = type(b)
            if (
                tb is not float
                and tb is not Tensor
                and tb is not int
                and not isinstance(b, operands)
            ):
                return NotImplemented
        ctx = cls._backward_cls()
        if state.enabled:
            ea = eb = None
            if isinstance(a, Tensor) and a._requires_grad:
                d = a._data
                fn = a._grad_fn
                if fn is None:
                    fn = a._acc
                    if fn is None:
                        fn = a._acc = AccumulateGrad(a)
                    ea = (fn, 0, d.shape, d.dtype)
                else:
                    ea = (fn, a._output_nr, d.shape, d.dtype)
            if isinstance(b, Tensor) and b._requires_grad:
                d = b._data
                fn = b._grad_fn
                if fn is None:
                    fn = b._acc
                    if fn is None:
                        fn = b._acc = AccumulateGrad(b)
                    eb = (fn, 0, d.shape, d.dtype)
                else:
                    eb = (fn, b._output_nr, d.shape, d.dtype)
            if ea is None:
                ctx.needs_input_grad = _FF if eb is None else _FT
            else:
                ctx.needs_input_grad = _TF if eb is None else _TT
            state.enabled = False
            try:
                raw = cls._forward_impl(ctx, a, b)
            finally:
                state.enabled = True
            if ea is not None or eb is not None:
                if (
                    type(raw) is _ndarray
                    and raw.dtype.kind == "f"
                    and not ctx._dirty
                    and not ctx._non_differentiable
                ):  # _tracked's first case inlined: one fresh float array
                    out = _new(Tensor)
                    out._data = raw
                    out._grad_fn = ctx
                    out._requires_grad = True
                    out._grad = out._base = out._hooks = out._acc = out._vc = None
                    out._output_nr = 0
                    ctx._key = -next(_seq)
                    ctx._next = (ea, eb)
                    if ctx._to_save is not None:
                        _record_saved_single(ctx, ctx._to_save, out, 2)
                    return out
                return _tracked(ctx, raw, (a, b), (ea, eb))
        else:
            ctx.needs_input_grad = _FF
            raw = cls._forward_impl(ctx, a, b)
        if type(raw) is _ndarray and not ctx._dirty:
            out = _new(Tensor)
            out._data = raw
            out._requires_grad = False
            out._grad = out._grad_fn = out._base = out._hooks = out._acc = out._vc = None
            out._output_nr = 0
            return out
        return _untracked(ctx, raw, (a, b))

    if arity == 1:
        apply1.__qualname__ = apply1.__name__ = f"{cls.__name__}.apply"
        return apply1
    if arity == 2:
        apply2.__qualname__ = apply2.__name__ = f"{cls.__name__}.apply"
        return apply2
    raise ValueError(f"fixed_apply: arity {arity} (1 or 2 only)")
