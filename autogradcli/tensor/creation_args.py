"""Argument parsing shared by the creation functions: sizes, integers and dtypes as PyTorch reads
them, with PyTorch's error types (``TypeError`` for a wrong kind of argument, ``RuntimeError`` for
a bad value)."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import dtype as dtypes
from .tensor import Tensor, wrap

# PyTorch's names of the integer dtypes in its range errors ("out of bounds for unsigned char")
_C_NAMES = {
    "uint8": "unsigned char",
    "int8": "signed char",
    "int16": "short",
    "int32": "int",
    "int64": "long",
}


def as_int(value: Any, fn: str, arg: str) -> int:
    """``value`` as a Python int (ints, numpy ints, one-element integer tensors), else TypeError."""
    if isinstance(value, (bool, np.bool_, float, np.floating)):
        raise TypeError(f"{fn}(): argument '{arg}' must be int, not {type(value).__name__}")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(
            f"{fn}(): argument '{arg}' must be int, not {type(value).__name__}"
        ) from None


def _size_item(value: Any, fn: str, pos: int) -> int:
    if isinstance(value, (bool, np.bool_, float, np.floating)) or not hasattr(value, "__index__"):
        raise TypeError(
            f"{fn}(): argument 'size' must be tuple of ints, but found element of type "
            f"{type(value).__name__} at pos {pos}"
        )
    return operator.index(value)


def size_of(value: Any, fn: str) -> tuple[int, ...]:
    """A size given as one tuple, list or ``Size`` of ints (``size=``, ``full``'s first argument)."""
    if not isinstance(value, (tuple, list)):
        raise TypeError(
            f"{fn}(): argument 'size' must be tuple of ints, not {type(value).__name__}"
        )
    return check_sizes(tuple(_size_item(v, fn, i) for i, v in enumerate(value)))


def sizes_of(args: Sequence[Any], size: Any, fn: str) -> tuple[int, ...]:
    """The size of ``zeros(2, 3)``, ``zeros((2, 3))``, ``zeros([2, 3])`` or ``zeros(size=(2, 3))``."""
    if size is not None:
        if args:
            raise TypeError(f"{fn}(): pass the size positionally or as size=, not both")
        return size_of(size, fn)
    if not args:
        raise TypeError(f'{fn}() missing 1 required positional arguments: "size"')
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return size_of(args[0], fn)
    return check_sizes(tuple(_size_item(v, fn, i) for i, v in enumerate(args)))


def check_sizes(shape: tuple[int, ...]) -> tuple[int, ...]:
    """``shape``, or RuntimeError naming the negative dimension as PyTorch does."""
    for s in shape:
        if s < 0:
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {s}: {list(shape)}"
            )
    return shape


def np_dtype(dtype: Any, default: dtypes.DType | None = None) -> np.dtype:
    """The numpy dtype of ``dtype``, or of ``default`` (the default float dtype when None)."""
    if dtype is not None:
        return dtypes.to_dtype(dtype).np
    return (default or dtypes.get_default_dtype()).np


def torch_type_name(np_type: np.dtype) -> str:
    """PyTorch's scalar type name (``Long``, ``Float``...) for kernel-not-implemented errors."""
    return {
        "bool": "Bool",
        "uint8": "Byte",
        "int8": "Char",
        "int16": "Short",
        "int32": "Int",
        "int64": "Long",
        "float16": "Half",
        "float32": "Float",
        "float64": "Double",
    }.get(np_type.name, np_type.name)


def require_float(np_type: np.dtype, fn: str) -> None:
    """NotImplementedError (as PyTorch) when a floating-point sampler is asked for another dtype."""
    if np_type.kind not in "fV":
        raise NotImplementedError(
            f"{fn}() draws floating point values and is not implemented for dtype "
            f"'{torch_type_name(np_type)}' ({np_type.name}); pass a floating point dtype"
        )


def check_int_range(low: int, high: int, np_type: np.dtype) -> None:
    """RuntimeError, as PyTorch's ``random_``, for an empty range or one outside the dtype."""
    if low >= high:
        raise RuntimeError(
            f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
        )
    if np_type.kind in "iu":
        info = np.iinfo(np_type)
        name = _C_NAMES.get(np_type.name, np_type.name)
        if low < info.min:
            raise RuntimeError(f"from is out of bounds for {name}")
        if high - 1 > info.max:
            raise RuntimeError(f"to - 1 is out of bounds for {name}")


def finish(arr: Any, requires_grad: bool, fn: str, out: Any = None, layout: Any = None) -> Tensor:
    """The new tensor holding ``arr``. ``out=`` and layouts other than strided are refused with
    a clear error rather than ignored (PyTorch writes into ``out``; here the result is returned)."""
    if out is not None:
        raise TypeError(f"{fn}(): out= is not supported here; use the returned tensor")
    if layout is not None and getattr(layout, "name", None) != "strided":
        raise TypeError(f"{fn}(): only the strided layout is supported, got {layout!r}")
    t = wrap(arr)
    if requires_grad:
        t.requires_grad = True
    return t
