"""Helpers shared by the built-in ops: operand unwrapping, dtype promotion, dim handling."""

from __future__ import annotations

from typing import Any

from ..backend import array_module, device_of, is_cpu_array, to_device
from ..tensor.dtype import result_type
from ..tensor.tensor import Tensor, _wrap_dim, wrap

__all__ = [
    "array_module",
    "binary_operands",
    "load_mixed",
    "normalize_dims",
    "operator_method",
    "save_mixed",
    "scalar_type_name",
    "wrap",
    "wrap_dim",
]

wrap_dim = _wrap_dim

_FLOAT = float
_INT = int

# numpy dtype name -> PyTorch's C++ ScalarType name, as its dtype errors spell it
_SCALAR_TYPE = {
    "float16": "Half",
    "bfloat16": "BFloat16",
    "float32": "Float",
    "float64": "Double",
    "complex64": "ComplexFloat",
    "complex128": "ComplexDouble",
    "uint8": "Byte",
    "int8": "Char",
    "int16": "Short",
    "int32": "Int",
    "int64": "Long",
    "bool": "Bool",
}


def scalar_type_name(dtype: Any) -> str:
    """PyTorch's ScalarType name of numpy ``dtype`` ("Float", "Long"...), as its errors spell it."""
    return _SCALAR_TYPE.get(dtype.name, dtype.name)


def _device_error(x: Any, y: Any) -> RuntimeError:
    return RuntimeError(
        "Expected all tensors to be on the same device, but found at least two devices, "
        f"{device_of(x)} and {device_of(y)}!"
    )


def _align_devices(a: Tensor, b: Tensor) -> tuple[Any, Any]:
    """As in PyTorch, a 0-d CPU tensor (one that needs no gradient here) may join an op on
    another device, as a scalar would; other mixes raise."""
    x, y = a._data, b._data
    if x.ndim == 0 and is_cpu_array(x) and not a._requires_grad:
        return to_device(x, device_of(y)), y
    if y.ndim == 0 and is_cpu_array(y) and not b._requires_grad:
        return x, to_device(y, device_of(x))
    raise _device_error(x, y)


def binary_operands(a: Any, b: Any) -> tuple[Any, Any, Any]:
    """The two operands as arrays (or Python scalars) and the result dtype if numpy's would differ.

    The common cases (same dtypes; a Python number with a tensor of a kind that absorbs it)
    return ``None`` for the dtype at once; mixed kinds go through PyTorch's promotion rules.
    """
    if isinstance(a, Tensor):
        x = a._data
        if isinstance(b, Tensor):
            y = b._data
            if type(x) is not type(y):
                x, y = _align_devices(a, b)
            if x.dtype == y.dtype:
                return x, y, None
        else:
            y = b
            tb = type(b)
            kind = x.dtype.kind
            if (tb is _FLOAT and kind == "f") or (tb is _INT and kind in "fiu"):
                return x, y, None
    else:
        x, y = a, b._data
        ta = type(a)
        kind = y.dtype.kind
        if (ta is _FLOAT and kind == "f") or (ta is _INT and kind in "fiu"):
            return x, y, None
    return x, y, result_type(a, b)


def save_mixed(ctx: Any, *values: Any) -> None:
    """Save tensors for backward and keep non-tensor operands (Python numbers) as constants."""
    ctx.save_for_backward(*[v if isinstance(v, Tensor) else None for v in values])
    ctx.constants = tuple([None if isinstance(v, Tensor) else v for v in values])


def load_mixed(ctx: Any) -> tuple[Any, ...]:
    """The operands saved by ``save_mixed``: tensors (version-checked) and constants."""
    saved = ctx.saved_tensors
    return tuple(s if s is not None else c for s, c in zip(saved, ctx.constants))


def normalize_dims(dim: Any, ndim: int) -> tuple[int, ...] | None:
    """``dim`` (None, an int, or a sequence of ints) as a sorted tuple of non-negative dims."""
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            return None
        dims = tuple(sorted({_wrap_dim(int(d), ndim) for d in dim}))
        if len(dims) != len(dim):
            raise RuntimeError(f"dim {tuple(dim)} appears multiple times in the list of dims")
        return dims
    return (_wrap_dim(int(dim), ndim),)


OPERANDS = (
    Tensor,
    int,
    float,
    complex,
)  # what the built-in operators take; other types get NotImplemented


def operator_method(fn: Any, reflected: bool = False) -> Any:
    """``fn`` as a binary operator method (``fn(other, self)`` when ``reflected``): NotImplemented
    for operands it does not take, so that Python tries the other operand's method."""

    def method(self: Tensor, other: Any) -> Any:
        if isinstance(other, OPERANDS):
            return fn(other, self) if reflected else fn(self, other)
        return NotImplemented

    return method
