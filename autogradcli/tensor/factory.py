"""Tensor creation: ``tensor``, ``zeros``, ``randn``... with PyTorch's default dtypes."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from .. import backend
from . import dtype as dtypes
from .creation_args import as_int, finish, np_dtype, size_of, sizes_of
from .random_factory import rand, rand_like, randint, randint_like, randn, randn_like, randperm
from .tensor import Tensor, wrap


def _infer_dtype(data: Any) -> np.dtype | None:
    """PyTorch's inference for Python data: floats -> default float, ints -> int64, bools -> bool."""
    if isinstance(data, bool):
        return np.dtype(np.bool_)
    if isinstance(data, int):
        return np.dtype(np.int64)
    if isinstance(data, float):
        return dtypes.get_default_dtype().np
    if isinstance(data, complex):
        return dtypes.default_complex().np
    return None


def _contains_tensor(data: Any) -> bool:
    if isinstance(data, Tensor):
        return True
    return isinstance(data, (list, tuple)) and any(_contains_tensor(d) for d in data)


def _nested_to_numpy(data: Any) -> np.ndarray:
    """Nested Python data as an array with PyTorch's inference (Python floats -> default float)."""
    if isinstance(data, Tensor):
        return backend.to_numpy(data._data)
    if _contains_tensor(data):
        return np.array([_nested_to_numpy(d) for d in data])
    arr = np.asarray(data)
    if arr.dtype == np.float64 and not _holds_numpy_float64(data):
        arr = arr.astype(dtypes.get_default_dtype().np)
    elif arr.dtype == np.complex128 and not _holds_numpy_float64(data):
        arr = arr.astype(dtypes.default_complex().np)
    return arr


def _holds_numpy_float64(data: Any) -> bool:
    """Whether nested data holds a numpy float64 (scalar or array): PyTorch then infers float64,
    where Python floats alone give the default dtype."""
    if isinstance(data, (np.ndarray, np.float64, np.complex128)):
        return data.dtype == np.float64 or data.dtype == np.complex128
    if isinstance(data, (list, tuple)):
        return any(_holds_numpy_float64(d) for d in data)
    return False


def as_array(data: Any, dtype: Any = None, device: Any = None, copy: bool = False) -> Any:
    """Turn ``data`` (Python numbers, nested lists, numpy/cupy arrays, Tensors) into a backend array."""
    np_dtype = dtypes.to_dtype(dtype).np if dtype is not None else None
    if isinstance(data, Tensor):
        arr = data._data
    elif type(data) is np.ndarray:
        arr = data
    elif isinstance(data, np.ndarray) and backend.is_cpu_array(data):
        # a subclass (np.memmap, np.matrix...) as a plain ndarray view of the same memory: no
        # copy, and every backend check (``type(arr) is np.ndarray``) holds for a tensor's array
        arr = data.view(np.ndarray)
    elif isinstance(data, np.ndarray):  # a device array type built on ndarray (test stand-ins)
        arr = data
    elif isinstance(data, np.generic):  # a numpy scalar keeps its dtype, as in PyTorch
        arr = np.asarray(data)
    elif isinstance(data, (bool, int, float, complex)):
        arr = np.asarray(data, dtype=np_dtype or _infer_dtype(data))
    elif isinstance(data, (list, tuple)):
        if np_dtype is not None and np_dtype.kind in "fV" and not _contains_tensor(data):
            arr = np.asarray(data, dtype=np_dtype)  # no detour through the default float dtype
        else:
            arr = _nested_to_numpy(data)
    else:
        try:
            backend.array_module(data)
            arr = data
        except TypeError:
            arr = np.asarray(data)
    if arr.dtype.kind not in "fiubcV":
        raise TypeError(
            f"can't convert data of type {arr.dtype} to a tensor (numbers and bools only)"
        )
    if arr.dtype == np.uint16 or arr.dtype == np.uint32 or arr.dtype == np.uint64:
        arr = arr.astype(np.int64)
    if device is not None:
        target = backend.as_device(device)
    elif isinstance(data, (Tensor, np.ndarray)) or not backend.is_cpu_array(arr):
        target = backend.device_of(arr)
    else:  # Python data goes to the default device
        target = backend.as_device(None)
    arr = backend.to_device(arr, target)
    if np_dtype is not None and arr.dtype != np_dtype:
        arr = arr.astype(np_dtype)
    elif copy:
        arr = arr.copy()
    return arr


_NOT_WRITABLE = (
    "The given NumPy array is not writable, and autogradcli shares its memory: an in-place "
    "operation on this tensor raises an error. Copy the array (or the tensor: .clone()) or make "
    "it writable (a memmap opened with mode='r+' or 'c') to write to it."
)


def tensor(data: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data``."""
    out = wrap(as_array(data, dtype, device, copy=True))
    if requires_grad:
        out.requires_grad = True
    return out


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """Like ``tensor`` but shares memory with ``data`` where it can."""
    if isinstance(data, Tensor) and dtype is None and device is None:
        return data
    arr = as_array(data, dtype, device)
    shared = type(arr) is np.ndarray and isinstance(data, np.ndarray)
    if shared and not data.flags.writeable and np.may_share_memory(arr, data):
        warnings.warn(_NOT_WRITABLE, UserWarning, stacklevel=2)
    return wrap(arr)


def from_numpy(arr: np.ndarray) -> Tensor:
    """A CPU tensor sharing memory with ``arr`` (any ndarray, ``np.memmap`` included: the file is
    not read into memory). A read-only array warns, as in PyTorch."""
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(arr).__name__})")
    if not arr.flags.writeable:
        warnings.warn(_NOT_WRITABLE, UserWarning, stacklevel=2)
    return wrap(as_array(arr))


def _filled(
    make: str,
    shape: tuple[int, ...],
    dtype: Any,
    device: Any,
    requires_grad: bool,
    out: Any,
    layout: Any,
) -> Tensor:
    xp = backend.module_for(device)
    arr = getattr(xp, make)(shape, dtype=np_dtype(dtype))
    return finish(arr, requires_grad, make, out, layout)


def zeros(
    *shape: Any,
    size: Any = None,
    out: Any = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """Zeros of the given size: ``zeros(2, 3)``, ``zeros((2, 3))``, ``zeros(size=(2, 3))``."""
    shape = sizes_of(shape, size, "zeros")
    return _filled("zeros", shape, dtype, device, requires_grad, out, layout)


def ones(
    *shape: Any,
    size: Any = None,
    out: Any = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """Ones of the given size (the size overloads of ``zeros``)."""
    shape = sizes_of(shape, size, "ones")
    return _filled("ones", shape, dtype, device, requires_grad, out, layout)


def empty(
    *shape: Any,
    size: Any = None,
    out: Any = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
    memory_format: Any = None,
) -> Tensor:
    """An uninitialised tensor of the given size (the size overloads of ``zeros``)."""
    shape = sizes_of(shape, size, "empty")
    return _filled("empty", shape, dtype, device, requires_grad, out, layout)


def _fill_dtype(fill_value: Any) -> np.dtype:
    """``full``'s dtype when none is given: bool, int64 or the default float, from the fill."""
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    if isinstance(fill_value, (bool, np.bool_)):
        return np.dtype(np.bool_)
    if isinstance(fill_value, (int, np.integer)):
        return np.dtype(np.int64)
    if isinstance(fill_value, (complex, np.complexfloating)):
        return dtypes.default_complex().np
    return dtypes.get_default_dtype().np


def full(
    size: Any,
    fill_value: Any,
    *,
    out: Any = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """``fill_value`` everywhere; without ``dtype``, bool, int64 or the default float as the fill."""
    shape = size_of(size, "full")
    target = _fill_dtype(fill_value) if dtype is None else np_dtype(dtype)
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    xp = backend.module_for(device)
    return finish(xp.full(shape, fill_value, dtype=target), requires_grad, "full", out, layout)


def _number(value: Any) -> Any:
    """A Python number from a number, numpy scalar or one-element tensor (arange's bounds)."""
    if isinstance(value, Tensor):
        return value.item()
    if isinstance(value, np.generic):
        return value.item()
    if not isinstance(value, (int, float)):
        raise TypeError(f"arange(): expected a number, got {type(value).__name__}")
    return value


def arange(
    start: Any = None,
    end: Any = None,
    step: Any = 1,
    *,
    out: Any = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """``[start, end)`` by ``step`` (``arange(end)`` starts at 0): ``ceil((end - start) / step)``
    values, int64 unless a bound or the step is a float."""
    if start is None and end is None:
        raise TypeError("arange() missing required argument 'end'")
    if end is None:
        start, end = 0, start
    elif start is None:
        start = 0
    lo, hi, by = _number(start), _number(end), _number(step)
    if dtype is None:
        is_float = any(isinstance(v, float) for v in (lo, hi, by))
        target = dtypes.get_default_dtype().np if is_float else np.dtype(np.int64)
    else:
        target = np_dtype(dtype)
    if by == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"unsupported range: {lo} -> {hi}")
    if (by > 0 and hi < lo) or (by < 0 and hi > lo):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    xp = backend.module_for(device)
    if target.kind in "iub":  # bounds and step truncate to integers first, as in PyTorch
        lo, hi, by = int(lo), int(hi), int(by)
        if by == 0:
            raise ValueError("step must be nonzero")
        arr = xp.arange(lo, hi, by, dtype=np.int64)
    else:  # start + i * step in float64, then rounded once to the dtype
        n = max(math.ceil((hi - lo) / by), 0)
        arr = lo + by * xp.arange(n, dtype=np.float64)
    return finish(arr.astype(target), requires_grad, "arange", out, layout)


def _steps(steps: Any, fn: str) -> int:
    n = as_int(steps, fn, "steps")
    if n < 0:
        raise RuntimeError("number of steps must be non-negative")
    return n


def linspace(
    start: Any,
    end: Any,
    steps: Any,
    *,
    out: Any = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    n = _steps(steps, "linspace")
    xp = backend.module_for(device)
    arr = xp.linspace(_number(start), _number(end), n)
    return finish(arr.astype(np_dtype(dtype)), requires_grad, "linspace", out, layout)


def logspace(
    start: Any,
    end: Any,
    steps: Any,
    base: float = 10.0,
    *,
    out: Any = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """``base ** linspace(start, end, steps)``."""
    n = _steps(steps, "logspace")
    xp = backend.module_for(device)
    arr = float(base) ** xp.linspace(_number(start), _number(end), n)
    return finish(arr.astype(np_dtype(dtype)), requires_grad, "logspace", out, layout)


def eye(
    n: Any,
    m: Any = None,
    *,
    out: Any = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """A 2-D tensor with ones on the diagonal: ``n`` rows, ``m`` (default ``n``) columns."""
    rows = as_int(n, "eye", "n")
    cols = rows if m is None else as_int(m, "eye", "m")
    for name, v in (("n", rows), ("m", cols)):
        if v < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {v}")
    xp = backend.module_for(device)
    return finish(xp.eye(rows, cols, dtype=np_dtype(dtype)), requires_grad, "eye", out, layout)


def _like(t: Tensor, dtype: Any, device: Any) -> tuple[Any, tuple[int, ...], np.dtype]:
    xp = backend.module_for(device) if device is not None else backend.array_module(t._data)
    target = dtypes.to_dtype(dtype).np if dtype is not None else t._data.dtype
    return xp, t._data.shape, target


def zeros_like(
    input: Tensor,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    memory_format: Any = None,
) -> Tensor:
    """Zeros with ``input``'s shape, dtype and device unless given."""
    xp, shape, target = _like(input, dtype, device)
    return finish(xp.zeros(shape, dtype=target), requires_grad, "zeros_like", layout=layout)


def ones_like(
    input: Tensor,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    memory_format: Any = None,
) -> Tensor:
    """Ones with ``input``'s shape, dtype and device unless given."""
    xp, shape, target = _like(input, dtype, device)
    return finish(xp.ones(shape, dtype=target), requires_grad, "ones_like", layout=layout)


def empty_like(
    input: Tensor,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    memory_format: Any = None,
) -> Tensor:
    """An uninitialised tensor with ``input``'s shape, dtype and device unless given."""
    xp, shape, target = _like(input, dtype, device)
    return finish(xp.empty(shape, dtype=target), requires_grad, "empty_like", layout=layout)


def full_like(
    input: Tensor,
    fill_value: Any,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    memory_format: Any = None,
) -> Tensor:
    """``fill_value`` (cast to the dtype) with ``input``'s shape, dtype and device unless given."""
    xp, shape, target = _like(input, dtype, device)
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    arr = xp.full(shape, fill_value, dtype=target)
    return finish(arr, requires_grad, "full_like", layout=layout)


__all__ = [
    "arange",
    "as_array",
    "as_tensor",
    "empty",
    "empty_like",
    "eye",
    "from_numpy",
    "full",
    "full_like",
    "linspace",
    "logspace",
    "ones",
    "ones_like",
    "rand",
    "rand_like",
    "randint",
    "randint_like",
    "randn",
    "randn_like",
    "randperm",
    "tensor",
    "zeros",
    "zeros_like",
]
