"""In-place ops (``add_``, ``mul_``, ``fill_``, ``__setitem__``...).

Without a graph to record they write straight into the tensor's array (the optimizers' hot path).
When the graph must see them, the out-of-place Function runs on a snapshot that carries the
tensor's history, and the result is written back into the tensor's storage, which then takes
the new node as its ``grad_fn``: one mechanism for both, and views of the storage see the change.
Every write bumps the version counter the tensor shares with its views, so a backward that saved
the old value notices.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from ..autograd.function import Function
from ..autograd.grad_mode import STATE
from ..autograd.gradient_ops import sum_to
from ..autograd.record import _check_dirty
from ..backend import random_normal
from ..tensor.random import generator_for
from ..tensor.tensor import Tensor, wrap
from ._util import array_module, scalar_type_name
from .view_rebase import record_on_view


def _cast_error(result: str, dtype: Any) -> RuntimeError:
    """PyTorch's error for an in-place result of type ``result`` that ``dtype`` cannot hold."""
    return RuntimeError(
        f"result type {result} can't be cast to the desired output type {scalar_type_name(dtype)}"
    )


def _needs_graph(self: Tensor, *others: Any) -> bool:
    if not STATE.enabled:
        # an ONNX export sees the out-of-place op (_record); STATE.special first: one slot read
        return STATE.special and STATE.trace is not None
    return self._requires_grad or any(isinstance(o, Tensor) and o._requires_grad for o in others)


class _InplaceCtx:
    """Stands in for a node's name in the errors ``_check_dirty`` raises."""

    def __init__(self, name: str) -> None:
        self._name = name

    def name(self) -> str:
        return self._name


def _record(self: Tensor, name: str, op: Callable[[Tensor], Tensor]) -> Tensor:
    """Apply out-of-place ``op`` to a snapshot of ``self`` and make the result ``self``'s value and history."""
    base = self._base
    if (
        base is not None
        and STATE.enabled
        and not (base._grad_fn is None and base._requires_grad)
        and base._data.dtype == self._data.dtype  # view_key needs elements of one width
    ):
        return record_on_view(self, op, lambda arr: _write(self, arr, name))
    _check_dirty(_InplaceCtx(name), self, STATE.enabled)  # type: ignore[arg-type]
    snapshot = wrap(self._data.copy(), self._requires_grad)
    snapshot._grad_fn, snapshot._output_nr = self._grad_fn, self._output_nr
    trace = STATE.trace  # an ONNX export: the snapshot, then self, hold the new value
    if trace is not None:
        trace.alias(snapshot, self)
    result = op(snapshot)
    _write(self, result._data, name)
    if trace is not None:
        trace.alias(self, result)
    self._grad_fn, self._output_nr = result._grad_fn, result._output_nr
    self._requires_grad = result._requires_grad
    self._bump_version()
    return self


def apply_inplace(self: Tensor, name: str, op: Callable[[Tensor], Tensor], *others: Any) -> Tensor:
    """``self = op(self)`` in place: recorded in the graph when ``self`` or ``others`` need it."""
    if _needs_graph(self, *others):
        return _record(self, name, op)
    _write(self, op(self)._data, name)
    self._bump_version()
    return self


def _write(self: Tensor, arr: Any, name: str) -> None:
    if arr.shape != self._data.shape:
        raise RuntimeError(
            f"output with shape {list(self._data.shape)} doesn't match the broadcast shape "
            f"{list(arr.shape)}"
        )
    if arr.dtype != self._data.dtype and not _can_cast(arr.dtype, self._data.dtype):
        raise _cast_error(scalar_type_name(arr.dtype), self._data.dtype)
    self._data[...] = arr


# the order of dtype kinds an in-place result may be cast along; bfloat16 ("V") ranks with floats
_KIND_RANK = {"b": 0, "i": 1, "u": 2, "f": 3, "c": 4}


def _can_cast(src: Any, dst: Any) -> bool:
    return _KIND_RANK.get(src.kind, 3) <= _KIND_RANK.get(dst.kind, 3)


def broadcast_message(dst: tuple[int, ...], src: tuple[int, ...]) -> str | None:
    """PyTorch's error for writing a result broadcast from ``src`` into shape ``dst``, or None."""
    n = max(len(dst), len(src))
    a = (1,) * (n - len(dst)) + tuple(dst)
    b = (1,) * (n - len(src)) + tuple(src)
    for i in reversed(range(n)):
        if a[i] != b[i] and 1 not in (a[i], b[i]):
            return (
                f"The size of tensor a ({a[i]}) must match the size of tensor b ({b[i]}) at "
                f"non-singleton dimension {i}"
            )
    full = tuple(y if x == 1 else x for x, y in zip(a, b))
    if full != tuple(dst):
        return f"output with shape {list(dst)} doesn't match the broadcast shape {list(full)}"
    return None


def _operand(other: Any) -> Any:
    return other._data if isinstance(other, Tensor) else other


def _ufunc_inplace(self: Tensor, ufunc_name: str, other: Any, name: str) -> Tensor:
    arr = self._data
    xp = array_module(arr)
    y = _operand(other)
    if hasattr(y, "dtype"):  # an array or numpy scalar (np.float64 is a float: checked here)
        if not _can_cast(y.dtype, arr.dtype):
            raise _cast_error(scalar_type_name(y.dtype), arr.dtype)
    elif isinstance(y, float):
        if arr.dtype.kind not in "fcV":
            raise _cast_error("Float", arr.dtype)
    elif isinstance(y, complex) and arr.dtype.kind != "c":
        raise _cast_error("ComplexFloat", arr.dtype)
    shape = getattr(y, "shape", ())
    if shape != arr.shape:
        msg = broadcast_message(arr.shape, shape)
        if msg:
            raise RuntimeError(msg)
    try:
        getattr(xp, ufunc_name)(arr, y, out=arr, casting="unsafe")
    except ValueError:  # a read-only array (looked at only now: the writes that work pay nothing)
        if not getattr(getattr(arr, "flags", None), "writeable", True):  # cupy's have none
            raise RuntimeError(
                f"{name}: this tensor shares memory with a read-only array (from_numpy of a "
                "memmap opened with mode='r', or of a non-writable array); clone() it before "
                "writing"
            ) from None
        raise RuntimeError(
            f"{name}: the operand of shape {list(shape)} cannot be broadcast to the tensor of "
            f"shape {list(arr.shape)}"
        ) from None
    self._bump_version()
    return self


def add_(self: Tensor, other: Any, alpha: Any = 1) -> Tensor:
    if _needs_graph(self, other):
        return _record(self, "add_", lambda s: s + (other if alpha == 1 else other * alpha))
    return _ufunc_inplace(self, "add", other if alpha == 1 else _operand(other) * alpha, "add_")


def sub_(self: Tensor, other: Any, alpha: Any = 1) -> Tensor:
    if _needs_graph(self, other):
        return _record(self, "sub_", lambda s: s - (other if alpha == 1 else other * alpha))
    return _ufunc_inplace(
        self, "subtract", other if alpha == 1 else _operand(other) * alpha, "sub_"
    )


def mul_(self: Tensor, other: Any) -> Tensor:
    if _needs_graph(self, other):
        return _record(self, "mul_", lambda s: s * other)
    return _ufunc_inplace(self, "multiply", other, "mul_")


def div_(self: Tensor, other: Any) -> Tensor:
    if _needs_graph(self, other):
        return _record(self, "div_", lambda s: s / other)
    if self._data.dtype.kind not in "fV":
        raise _cast_error("Float", self._data.dtype)
    return _ufunc_inplace(self, "divide", other, "div_")


def addcmul_(self: Tensor, t1: Tensor, t2: Tensor, value: Any = 1) -> Tensor:
    if _needs_graph(self, t1, t2):
        return _record(self, "addcmul_", lambda s: s + t1 * t2 * value)
    return _ufunc_inplace(self, "add", _operand(t1) * _operand(t2) * value, "addcmul_")


def addcdiv_(self: Tensor, t1: Tensor, t2: Tensor, value: Any = 1) -> Tensor:
    if _needs_graph(self, t1, t2):
        return _record(self, "addcdiv_", lambda s: s + t1 / t2 * value)
    return _ufunc_inplace(self, "add", _operand(t1) / _operand(t2) * value, "addcdiv_")


def clamp_(self: Tensor, min: Any = None, max: Any = None) -> Tensor:
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if _needs_graph(self, min, max):
        return _record(self, "clamp_", lambda s: s.clamp(min, max))
    xp = array_module(self._data)
    xp.clip(self._data, _operand(min), _operand(max), out=self._data)
    self._bump_version()
    return self


class Overwrite(Function):
    """``x``'s values replaced by ``src`` (broadcast): ``x`` gets no gradient, ``src`` gets it
    summed back to its shape. The recorded form of fill_/zero_/copy_ and the random fills."""

    _backward_name = "FillBackward2"

    @staticmethod
    def forward(ctx: Any, x: Tensor, src: Any) -> Any:
        xp = array_module(x._data)
        v = src._data if isinstance(src, Tensor) else src
        ctx.src_shape = getattr(v, "shape", None) if isinstance(src, Tensor) else None
        out = xp.empty_like(x._data)
        out[...] = v
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, Any]:

        nx, ns = ctx.needs_input_grad
        gx = g * 0.0 if nx else None
        gs = sum_to(g, ctx.src_shape) if ns else None
        return gx, gs


class _FillTensor(Overwrite):
    _backward_name = "FillBackward3"


class _Zero(Overwrite):
    _backward_name = "ZeroBackward0"


class _Copy(Overwrite):
    _backward_name = "CopyBackwards"


class _Uniform(Overwrite):
    _backward_name = "UniformBackward0"


class _Normal(Overwrite):
    _backward_name = "NormalBackward0"


def zero_(self: Tensor) -> Tensor:
    if _needs_graph(self):
        return _record(self, "zero_", lambda s: _Zero.apply(s, 0))
    self._data[...] = 0
    self._bump_version()
    return self


def fill_(self: Tensor, value: Any) -> Tensor:
    if isinstance(value, Tensor) and value._data.ndim:
        raise RuntimeError(
            "fill_ only supports 0-dimension value tensor but got tensor with "
            f"{value._data.ndim} dimensions."
        )
    if _needs_graph(self, value):
        fn = _FillTensor if isinstance(value, Tensor) else Overwrite
        return _record(self, "fill_", lambda s: fn.apply(s, value))
    self._data[...] = _operand(value)
    self._bump_version()
    return self


def copy_(self: Tensor, src: Tensor, non_blocking: bool = False) -> Tensor:
    from .. import backend

    if isinstance(src, Tensor) and src._data.shape != self._data.shape:
        msg = broadcast_message(self._data.shape, src._data.shape)
        if msg:
            raise RuntimeError(msg)
    if _needs_graph(self, src):
        moved = src.to(self.device) if isinstance(src, Tensor) else src
        return _record(self, "copy_", lambda s: _Copy.apply(s, moved))
    arr = backend.to_device(src._data, self.device) if isinstance(src, Tensor) else src
    kind = getattr(getattr(arr, "dtype", None), "kind", "")
    if kind == "c" and self._data.dtype.kind != "c":  # as PyTorch: warn, keep the real part
        warnings.warn("Casting complex values to real discards the imaginary part", stacklevel=2)
        arr = arr.real
    self._data[...] = arr
    self._bump_version()
    return self


def uniform_(self: Tensor, a: float = 0.0, b: float = 1.0, generator: Any = None) -> Tensor:
    xp = array_module(self._data)
    gen = generator or generator_for(xp)
    return _fill_random(self, gen.uniform(a, b, size=self._data.shape), _Uniform, "uniform_")


def normal_(self: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None) -> Tensor:
    xp = array_module(self._data)
    gen = generator or generator_for(xp)
    values = random_normal(gen, mean, std, self._data.shape)
    return _fill_random(self, values, _Normal, "normal_")


def random_(self: Tensor, from_: Any = None, to: Any = None, *, generator: Any = None,
            **kwargs: Any) -> Tensor:  # fmt: skip
    """Integers uniform on [from, to - 1]; ``random_(to)`` from 0; ``random_()`` on [0, 2**m]
    with m the mantissa bits of a float dtype (the dtype's maximum for integers)."""
    from_ = kwargs.pop("from", from_)
    if from_ is not None and to is None and "from" not in kwargs:
        from_, to = 0, from_
    lo = 0 if from_ is None else int(from_)
    if to is None:
        dt = self._data.dtype
        digits = {"float16": 11, "float32": 24, "float64": 53}.get(dt.name)
        to = (1 << digits) + 1 if digits else (1 if dt.kind == "b" else int(_iinfo_max(dt)) + 1)
    if int(to) <= lo:
        raise RuntimeError(
            f"random_ expects 'from' to be less than 'to', but got from={lo} >= to={int(to)}"
        )
    xp = array_module(self._data)
    gen = generator or generator_for(xp)
    values = gen.integers(lo, int(to), size=self._data.shape)
    return _fill_random(self, values.astype(self._data.dtype), _Uniform, "random_")


def _iinfo_max(dt: Any) -> int:
    import numpy as np

    return np.iinfo(dt).max


def _fill_random(self: Tensor, values: Any, fn: type[Overwrite], name: str) -> Tensor:
    if _needs_graph(self):
        values = values.astype(self._data.dtype, copy=False)
        return _record(self, name, lambda s: fn.apply(s, wrap(values)))
    self._data[...] = values
    self._bump_version()
    return self


def setitem(self: Tensor, key: Any, value: Any) -> None:
    """``self[key] = value``; recorded (CopySlices / IndexPutBackward0) when grad is needed."""
    from .indexing import _assign, _index_key, _stage, index_put, normalize_value

    k, basic = _index_key(key, self._data)
    k = k if basic else _stage(k)
    if _needs_graph(self, value):
        if basic and self._grad_fn is None and self._requires_grad:
            raise RuntimeError(  # PyTorch writes through a view of self here
                "a view of a leaf Variable that requires grad is being used in an in-place "
                "operation."
            )
        _record(self, "__setitem__", lambda s: index_put(s, k, value, basic))
        return
    _assign(self._data, k, normalize_value(self, k, value))
    self._bump_version()


TENSOR_METHODS: dict[str, Any] = {
    "__iadd__": add_,
    "__isub__": sub_,
    "__imul__": mul_,
    "__itruediv__": div_,
    "__setitem__": setitem,
    # add_/sub_/addcmul_/addcdiv_ are declared in ops.legacy (with PyTorch's deprecated overloads)
    "mul_": mul_,
    "div_": div_,
    "clamp_": clamp_,
    "clip_": clamp_,
    "zero_": zero_,
    "fill_": fill_,
    "copy_": copy_,
    "uniform_": uniform_,
    "normal_": normal_,
    "random_": random_,
}
