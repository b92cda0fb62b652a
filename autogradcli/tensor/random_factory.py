"""Random creation: ``rand``, ``randn``, ``randint``, ``randperm`` and their ``*_like`` forms, with
PyTorch's overloads (``randint(high, size)`` and ``randint(low, high, size)``), defaults and
errors. Draws come from the global generator or ``generator=``; the streams are not torch's."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import backend
from . import dtype as dtypes
from .creation_args import (
    as_int,
    check_int_range,
    check_sizes,
    finish,
    np_dtype,
    require_float,
    size_of,
    sizes_of,
)
from .random import rng_for
from .tensor import Tensor


def _float_draw(
    draw: str,
    fn: str,
    shape: tuple[int, ...],
    dtype: Any,
    device: Any,
    generator: Any,
    requires_grad: bool,
    out: Any,
    layout: Any,
) -> Tensor:
    """``shape`` draws of ``Generator.<draw>`` in a floating ``dtype`` (float16 via float32)."""
    xp = backend.module_for(device)
    target = np_dtype(dtype)
    if target.kind == "c":  # both parts drawn; randn's of variance 1/2 each, as PyTorch
        part = np.dtype(f"float{target.itemsize * 4}")
        parts = _float_draw(draw, fn, (*shape, 2), part, device, generator, False, None, layout)
        arr = parts._data * (0.5**0.5 if draw == "standard_normal" else 1.0)
        arr = arr[..., 0] + arr[..., 1] * xp.asarray(1j, target)
        return finish(arr.astype(target, copy=False), requires_grad, fn, out, layout)
    require_float(target, fn)
    drawn = target if target.itemsize >= 4 else np.dtype(np.float32)
    arr = getattr(rng_for(xp, generator), draw)(shape, dtype=drawn)
    return finish(xp.asarray(arr).astype(target, copy=False), requires_grad, fn, out, layout)


def randn(
    *shape: Any,
    size: Any = None,
    generator: Any = None,
    out: Any = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """Standard normal draws of the given size (``randn(2, 3)``, ``randn((2, 3))``, ``size=``)."""
    dims = sizes_of(shape, size, "randn")
    return _float_draw(
        "standard_normal", "randn", dims, dtype, device, generator, requires_grad, out, layout
    )


def rand(
    *shape: Any,
    size: Any = None,
    generator: Any = None,
    out: Any = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """Uniform draws from [0, 1) of the given size."""
    dims = sizes_of(shape, size, "rand")
    return _float_draw("random", "rand", dims, dtype, device, generator, requires_grad, out, layout)


def _randint_bounds(args: tuple[Any, ...], low: Any, high: Any, size: Any) -> tuple[Any, ...]:
    """(low, high, size) from the positional and keyword forms of ``randint``."""
    if size is None:
        if not args or len(args) == 1:
            raise TypeError(
                "randint() received an invalid combination of arguments: expected "
                "(int high, tuple of ints size) or (int low, int high, tuple of ints size)"
            )
        *args_list, size = args
        args = tuple(args_list)
        if not isinstance(size, (tuple, list)):
            raise TypeError(
                f"randint(): argument 'size' (position {len(args) + 1}) must be tuple of ints, "
                f"not {type(size).__name__}"
            )
    slots = list(args)
    if high is not None:
        if len(slots) > 1 or (slots and low is not None):
            raise TypeError("randint() got multiple values for argument 'high'")
        low = slots[0] if slots else low
    elif len(slots) == 1 and low is None:
        high = slots[0]
    elif len(slots) == 2 and low is None:
        low, high = slots
    else:
        raise TypeError(
            "randint() received an invalid combination of arguments: expected "
            "(int high, tuple of ints size) or (int low, int high, tuple of ints size)"
        )
    return (0 if low is None else low), high, size


def randint(
    *args: Any,
    low: Any = None,
    high: Any = None,
    size: Any = None,
    generator: Any = None,
    out: Any = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """Integers drawn uniformly from [low, high): ``randint(high, size)`` or
    ``randint(low, high, size)``, int64 unless ``dtype`` says otherwise."""
    lo, hi, shape = _randint_bounds(args, low, high, size)
    lo, hi = as_int(lo, "randint", "low"), as_int(hi, "randint", "high")
    shape = size_of(shape, "randint")
    arr = _integers(lo, hi, shape, dtype, dtypes.int64, device, generator)
    return finish(arr, requires_grad, "randint", out, layout)


def _integers(
    lo: int,
    hi: int,
    shape: tuple[int, ...],
    dtype: Any,
    default: Any,
    device: Any,
    generator: Any,
) -> Any:
    """The array of ``shape`` integers from [lo, hi) in ``dtype`` (or ``default``)."""
    target = np_dtype(dtype, default)
    check_int_range(lo, hi, target)
    xp = backend.module_for(device)
    arr = rng_for(xp, generator).integers(lo, hi, size=shape, dtype=np.int64)
    return xp.asarray(arr).astype(target)


def randperm(
    n: Any,
    *,
    generator: Any = None,
    out: Any = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """A random permutation of ``0..n-1``, int64 unless ``dtype`` says otherwise."""
    (count,) = check_sizes((as_int(n, "randperm", "n"),))
    xp = backend.module_for(device)
    perm = backend.random_permutation(xp, rng_for(xp, generator), count)
    arr = xp.asarray(perm).astype(np_dtype(dtype, dtypes.int64))
    return finish(arr, requires_grad, "randperm", out, layout)


def rand_like(
    input: Tensor,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    memory_format: Any = None,
    generator: Any = None,
) -> Tensor:
    """Uniform draws from [0, 1) with ``input``'s shape, dtype and device unless given."""
    return rand(
        tuple(input._data.shape),
        dtype=input.dtype if dtype is None else dtype,
        device=input.device if device is None else device,
        requires_grad=requires_grad,
        generator=generator,
        layout=layout,
    )


def randn_like(
    input: Tensor,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    memory_format: Any = None,
    generator: Any = None,
) -> Tensor:
    """Standard normal draws with ``input``'s shape, dtype and device unless given."""
    return randn(
        tuple(input._data.shape),
        dtype=input.dtype if dtype is None else dtype,
        device=input.device if device is None else device,
        requires_grad=requires_grad,
        generator=generator,
        layout=layout,
    )


def randint_like(
    input: Tensor,
    low: Any = None,
    high: Any = None,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    memory_format: Any = None,
    generator: Any = None,
) -> Tensor:
    """Integers from [low, high) (``randint_like(x, high)`` or ``(x, low, high)``) with
    ``input``'s shape, dtype and device unless given."""
    if high is None:
        if low is None:
            raise TypeError("randint_like() missing required argument 'high'")
        low, high = 0, low
    lo = as_int(0 if low is None else low, "randint_like", "low")
    hi = as_int(high, "randint_like", "high")
    arr = _integers(
        lo,
        hi,
        tuple(input._data.shape),
        dtype,
        input.dtype,
        input.device if device is None else device,
        generator,
    )
    return finish(arr, requires_grad, "randint_like", layout=layout)
