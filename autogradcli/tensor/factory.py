"""Tensor creation: ``tensor``, ``zeros``, ``randn``... with PyTorch's default dtypes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import backend
from . import dtype as dtypes
from .random import generator_for
from .tensor import Tensor, wrap


def _infer_dtype(data: Any) -> np.dtype | None:
    """PyTorch's inference for Python data: floats -> default float, ints -> int64, bools -> bool."""
    if isinstance(data, bool):
        return np.dtype(np.bool_)
    if isinstance(data, int):
        return np.dtype(np.int64)
    if isinstance(data, float):
        return dtypes.get_default_dtype().np
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
    if arr.dtype == np.float64 and not isinstance(data, (np.ndarray, np.float64)):
        arr = arr.astype(dtypes.get_default_dtype().np)
    return arr


def as_array(data: Any, dtype: Any = None, device: Any = None, copy: bool = False) -> Any:
    """Turn ``data`` (Python numbers, nested lists, numpy/cupy arrays, Tensors) into a backend array."""
    np_dtype = dtypes.to_dtype(dtype).np if dtype is not None else None
    if isinstance(data, Tensor):
        arr = data._data
    elif type(data) is np.ndarray or isinstance(data, np.ndarray):
        arr = data
    elif isinstance(data, (bool, int, float)):
        arr = np.asarray(data, dtype=np_dtype or _infer_dtype(data))
    elif isinstance(data, (list, tuple, np.generic)):
        if np_dtype is not None and np_dtype.kind == "f" and not _contains_tensor(data):
            arr = np.asarray(data, dtype=np_dtype)  # no detour through the default float dtype
        else:
            arr = _nested_to_numpy(data)
    else:
        try:
            backend.array_module(data)
            arr = data
        except TypeError:
            arr = np.asarray(data)
    if arr.dtype.kind not in "fiub":
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
    return wrap(as_array(data, dtype, device))


def from_numpy(arr: np.ndarray) -> Tensor:
    """A CPU tensor sharing memory with ``arr``."""
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(arr).__name__})")
    return wrap(as_array(arr))


def _shape(shape: Sequence[Any], size: Any = None) -> tuple[int, ...]:
    """The sizes given positionally (``zeros(2, 3)``, ``zeros((2, 3))``) or as ``size=``."""
    if size is not None:
        if shape:
            raise TypeError("pass the sizes positionally or as size=, not both")
        size = (size,) if isinstance(size, int) else tuple(size)
    else:
        size = shape
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    return tuple(int(s) for s in size)


def _finish(arr: Any, requires_grad: bool) -> Tensor:
    out = wrap(arr)
    if requires_grad:
        out.requires_grad = True
    return out


def _np_dtype(dtype: Any, default: dtypes.DType | None = None) -> np.dtype:
    return (
        dtypes.to_dtype(dtype).np
        if dtype is not None
        else (default or dtypes.get_default_dtype()).np
    )


def zeros(
    *shape: Any,
    size: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    xp = backend.module_for(device)
    return _finish(xp.zeros(_shape(shape, size), dtype=_np_dtype(dtype)), requires_grad)


def ones(
    *shape: Any,
    size: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    xp = backend.module_for(device)
    return _finish(xp.ones(_shape(shape, size), dtype=_np_dtype(dtype)), requires_grad)


def empty(
    *shape: Any,
    size: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    xp = backend.module_for(device)
    return _finish(xp.empty(_shape(shape, size), dtype=_np_dtype(dtype)), requires_grad)


def full(
    size: Sequence[int],
    fill_value: Any,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    xp = backend.module_for(device)
    if dtype is None:
        inferred = _infer_dtype(fill_value)
        np_dtype = inferred if inferred is not None else dtypes.get_default_dtype().np
    else:
        np_dtype = _np_dtype(dtype)
    return _finish(xp.full(_shape((size,)), fill_value, dtype=np_dtype), requires_grad)


def arange(
    start: Any,
    end: Any = None,
    step: Any = 1,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    if end is None:
        start, end = 0, start
    if dtype is None:
        is_float = any(isinstance(v, float) for v in (start, end, step))
        np_dtype = dtypes.get_default_dtype().np if is_float else np.dtype(np.int64)
    else:
        np_dtype = _np_dtype(dtype)
    xp = backend.module_for(device)
    return _finish(xp.arange(start, end, step).astype(np_dtype), requires_grad)


def linspace(
    start: float,
    end: float,
    steps: int,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    xp = backend.module_for(device)
    return _finish(xp.linspace(start, end, steps).astype(_np_dtype(dtype)), requires_grad)


def eye(
    n: int, m: int | None = None, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Tensor:
    xp = backend.module_for(device)
    return _finish(xp.eye(n, m, dtype=_np_dtype(dtype)), requires_grad)


def _like(t: Tensor, dtype: Any, device: Any) -> tuple[Any, tuple[int, ...], np.dtype]:
    xp = backend.module_for(device) if device is not None else backend.array_module(t._data)
    np_dtype = dtypes.to_dtype(dtype).np if dtype is not None else t._data.dtype
    return xp, t._data.shape, np_dtype


def zeros_like(
    t: Tensor, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Tensor:
    xp, shape, np_dtype = _like(t, dtype, device)
    return _finish(xp.zeros(shape, dtype=np_dtype), requires_grad)


def ones_like(
    t: Tensor, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Tensor:
    xp, shape, np_dtype = _like(t, dtype, device)
    return _finish(xp.ones(shape, dtype=np_dtype), requires_grad)


def empty_like(
    t: Tensor, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Tensor:
    xp, shape, np_dtype = _like(t, dtype, device)
    return _finish(xp.empty(shape, dtype=np_dtype), requires_grad)


def full_like(
    t: Tensor, fill_value: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Tensor:
    xp, shape, np_dtype = _like(t, dtype, device)
    return _finish(xp.full(shape, fill_value, dtype=np_dtype), requires_grad)


def randn(
    *shape: Any,
    size: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    xp = backend.module_for(device)
    np_dtype = _np_dtype(dtype)
    arr = generator_for(xp).standard_normal(
        _shape(shape, size), dtype=np_dtype if np_dtype.itemsize >= 4 else np.float32
    )
    return _finish(arr.astype(np_dtype, copy=False), requires_grad)


def rand(
    *shape: Any,
    size: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    xp = backend.module_for(device)
    np_dtype = _np_dtype(dtype)
    arr = generator_for(xp).random(
        _shape(shape, size), dtype=np_dtype if np_dtype.itemsize >= 4 else np.float32
    )
    return _finish(arr.astype(np_dtype, copy=False), requires_grad)


def randint(
    low: int,
    high: int | None = None,
    size: Sequence[int] = (),
    dtype: Any = None,
    device: Any = None,
) -> Tensor:
    if high is None:
        low, high = 0, low
    xp = backend.module_for(device)
    arr = generator_for(xp).integers(low, high, size=tuple(size))
    return wrap(xp.asarray(arr).astype(_np_dtype(dtype, dtypes.int64)))


def randperm(n: int, dtype: Any = None, device: Any = None) -> Tensor:
    xp = backend.module_for(device)
    perm = backend.random_permutation(xp, generator_for(xp), n)
    return wrap(xp.asarray(perm).astype(_np_dtype(dtype, dtypes.int64)))


def randn_like(
    t: Tensor, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Tensor:
    return randn(
        *t._data.shape,
        dtype=dtype or t.dtype,
        device=device or t.device,
        requires_grad=requires_grad,
    )


def rand_like(
    t: Tensor, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Tensor:
    return rand(
        *t._data.shape,
        dtype=dtype or t.dtype,
        device=device or t.device,
        requires_grad=requires_grad,
    )
