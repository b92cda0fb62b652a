"""Comparing whole tensors: ``equal``, ``isclose``, ``allclose`` (PyTorch's tolerances)."""

from __future__ import annotations

from typing import Any

from ..tensor.tensor import Tensor, wrap
from ._util import array_module, scalar_type_name

__all__ = ["allclose", "equal", "isclose"]


def equal(a: Tensor, b: Tensor) -> bool:
    """True when ``a`` and ``b`` have the same shape and the same values."""
    if a._data.shape != b._data.shape:
        return False
    xp = array_module(a._data)
    return bool(xp.all(a._data == b._data))


def isclose(
    a: Tensor, b: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> Tensor:
    """Elementwise ``|a - b| <= atol + rtol * |b|`` (and equal infinities)."""
    if not isinstance(b, Tensor):
        raise TypeError(
            f"isclose(): argument 'other' (position 2) must be Tensor, not {type(b).__name__}"
        )
    if a.dtype != b.dtype:
        raise RuntimeError(f"{scalar_type_name(a.dtype)} did not match {scalar_type_name(b.dtype)}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    xp = array_module(a._data)
    x, y = a._data, b._data
    if x.dtype.kind == "b":
        return wrap(x == y)
    close = x == y
    if x.dtype.kind in "fV":
        with_tol = xp.abs(x - y) <= atol + rtol * xp.abs(y)
        close = close | (with_tol & xp.isfinite(x) & xp.isfinite(y))
        if equal_nan:
            close = close | (xp.isnan(x) & xp.isnan(y))
    else:  # integers in float64; complex numbers as they are (|x - y| is real)
        wide = "complex128" if x.dtype.kind == "c" else "float64"
        diff = xp.abs(x.astype(wide) - y.astype(wide))
        close = close | (diff <= atol + rtol * xp.abs(y.astype(wide)))
    return wrap(close)


def allclose(
    a: Tensor, b: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> bool:
    """True when every element of ``a`` is close to ``b``'s (see ``isclose``)."""
    xp = array_module(a._data)
    return bool(xp.all(isclose(a, b, rtol, atol, equal_nan)._data))


TENSOR_METHODS: dict[str, Any] = {name: globals()[name] for name in __all__}
