"""Elementwise tests of floating-point classes (``isnan``, ``isinf``, ``isfinite``,
``isposinf``, ``isneginf``, ``isreal``): bool tensors, never part of a graph."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..tensor.tensor import Tensor
from ._util import array_module, wrap

__all__ = ["isfinite", "isin", "isinf", "isnan", "isneginf", "isposinf", "isreal"]


def _predicate(name: str, test: Callable[[Any, Any], Any], integer: bool) -> Callable[..., Tensor]:
    """``test(xp, arr)`` as the bool-valued op ``name``; on integer and bool inputs, whose
    values are all finite and real, every element gives ``integer``."""

    def fn(input: Tensor) -> Tensor:
        if not isinstance(input, Tensor):
            raise TypeError(
                f"{name}(): argument 'input' (position 1) must be Tensor, "
                f"not {type(input).__name__}"
            )
        arr = input._data
        xp = array_module(arr)
        if arr.dtype.kind in "iub":
            return wrap(xp.full(arr.shape, integer, dtype=bool))
        if arr.dtype.kind == "c" and name in ("isposinf", "isneginf"):
            raise RuntimeError(f"{name} does not support complex inputs.")
        return wrap(xp.asarray(test(xp, arr), dtype=bool))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise ``{name}`` as a bool tensor of ``input``'s shape."
    return fn


isnan = _predicate("isnan", lambda xp, a: xp.isnan(a), False)
isinf = _predicate("isinf", lambda xp, a: xp.isinf(a), False)
isfinite = _predicate("isfinite", lambda xp, a: xp.isfinite(a), True)
isposinf = _predicate("isposinf", lambda xp, a: a == float("inf"), False)
isneginf = _predicate("isneginf", lambda xp, a: a == float("-inf"), False)
isreal = _predicate("isreal", lambda xp, a: xp.imag(a) == 0, True)


def isin(elements: Any, test_elements: Any, *, assume_unique: bool = False, invert: bool = False
         ) -> Tensor:  # fmt: skip
    """Whether each of ``elements`` occurs in ``test_elements`` (``invert``: does not)."""
    ref = elements if isinstance(elements, Tensor) else test_elements
    xp = array_module(ref._data)
    a = elements._data if isinstance(elements, Tensor) else xp.asarray(elements)
    b = test_elements._data if isinstance(test_elements, Tensor) else xp.asarray(test_elements)
    return wrap(xp.isin(a, b, invert=invert))


TENSOR_METHODS: dict[str, Any] = {name: globals()[name] for name in __all__ if name != "isin"}
