"""In-place ops (``add_``, ``mul_``, ``__setitem__``...).

Without a graph to record they write straight into the tensor's array (the optimizers' hot path).
When the graph must see them, the out-of-place Function runs on a snapshot that carries the
tensor's history, and the result is written back into the tensor's storage, which then takes
the new node as its ``grad_fn``: one mechanism for both, and views of the storage see the change.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..autograd.function import _check_dirty
from ..autograd.grad_mode import STATE
from ..tensor.random import generator_for
from ..tensor.tensor import Tensor, _make
from ._util import array_module


def _needs_graph(self: Tensor, *others: Any) -> bool:
    if not STATE.enabled:
        return False
    return self._requires_grad or any(isinstance(o, Tensor) and o._requires_grad for o in others)


class _InplaceCtx:
    """Stands in for a node's name in the errors ``_check_dirty`` raises."""

    def __init__(self, name: str) -> None:
        self._name = name

    def name(self) -> str:
        return self._name


def _record(self: Tensor, name: str, op: Callable[[Tensor], Tensor]) -> Tensor:
    """Apply out-of-place ``op`` to a snapshot of ``self`` and make the result ``self``'s value and history."""
    _check_dirty(_InplaceCtx(name), self, True)  # type: ignore[arg-type]
    snapshot = _make(self._data.copy(), self._requires_grad)
    snapshot._grad_fn, snapshot._output_nr = self._grad_fn, self._output_nr
    result = op(snapshot)
    _write(self, result._data, name)
    self._grad_fn, self._output_nr = result._grad_fn, result._output_nr
    self._requires_grad = result._requires_grad
    self._bump_version()
    return self


def _write(self: Tensor, arr: Any, name: str) -> None:
    if arr.dtype != self._data.dtype and not _can_cast(arr.dtype, self._data.dtype):
        raise RuntimeError(
            f"{name}: result type {arr.dtype} can't be cast to the desired output type "
            f"{self._data.dtype}"
        )
    self._data[...] = arr


def _can_cast(src: Any, dst: Any) -> bool:
    order = "biuf"
    return order.index(src.kind if src.kind in order else "f") <= order.index(dst.kind)


def _operand(other: Any) -> Any:
    return other._data if isinstance(other, Tensor) else other


def _ufunc_inplace(self: Tensor, ufunc_name: str, other: Any, name: str) -> Tensor:
    arr = self._data
    xp = array_module(arr)
    y = _operand(other)
    if hasattr(y, "dtype") and not _can_cast(y.dtype, arr.dtype):
        raise RuntimeError(
            f"{name}: result type {y.dtype} can't be cast to the desired output type {arr.dtype}"
        )
    if isinstance(y, float) and arr.dtype.kind != "f":
        raise RuntimeError(
            f"{name}: result type Float can't be cast to the desired output type {arr.dtype}"
        )
    getattr(xp, ufunc_name)(arr, y, out=arr, casting="unsafe")
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
    if self._data.dtype.kind != "f":
        raise RuntimeError(
            f"div_: result type Float can't be cast to the desired output type {self._data.dtype}"
        )
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
    if _needs_graph(self, min, max):
        return _record(self, "clamp_", lambda s: s.clamp(min, max))
    xp = array_module(self._data)
    xp.clip(self._data, _operand(min), _operand(max), out=self._data)
    self._bump_version()
    return self


def zero_(self: Tensor) -> Tensor:
    return fill_(self, 0)


def fill_(self: Tensor, value: Any) -> Tensor:
    if _needs_graph(self, value):
        return _record(self, "fill_", lambda s: s * 0 + value)
    self._data[...] = _operand(value)
    self._bump_version()
    return self


def copy_(self: Tensor, src: Tensor, non_blocking: bool = False) -> Tensor:
    if _needs_graph(self, src):
        return _record(self, "copy_", lambda s: s * 0 + src.to(self.device))
    from .. import backend

    arr = backend.to_device(src._data, self.device) if isinstance(src, Tensor) else src
    try:
        self._data[...] = arr
    except ValueError:
        raise RuntimeError(
            f"copy_: the source of shape {tuple(getattr(arr, 'shape', ()))} cannot be broadcast to "
            f"the destination of shape {tuple(self._data.shape)}"
        ) from None
    self._bump_version()
    return self


def uniform_(self: Tensor, a: float = 0.0, b: float = 1.0, generator: Any = None) -> Tensor:
    xp = array_module(self._data)
    gen = generator or generator_for(xp)
    return _fill_random(self, gen.uniform(a, b, size=self._data.shape), "uniform_")


def normal_(self: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None) -> Tensor:
    xp = array_module(self._data)
    gen = generator or generator_for(xp)
    return _fill_random(self, gen.normal(mean, std, size=self._data.shape), "normal_")


def _fill_random(self: Tensor, values: Any, name: str) -> Tensor:
    if _needs_graph(self):
        _check_dirty(_InplaceCtx(name), self, True)  # type: ignore[arg-type]
    self._data[...] = values
    self._bump_version()
    return self


def setitem(self: Tensor, key: Any, value: Any) -> None:
    from .indexing import _index_key, index_put

    if _needs_graph(self, value):
        _record(self, "__setitem__", lambda s: index_put(s, key, value))
        return
    k, _ = _index_key(key)
    v = value._data if isinstance(value, Tensor) else value
    self._data[k if len(k) != 1 else k[0]] = v
    self._bump_version()
