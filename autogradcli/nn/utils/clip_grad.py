"""Gradient clipping (``torch.nn.utils``'s ``clip_grad_norm_``, ``clip_grad_value_``...).

The gradients are scaled or clamped in place on their arrays, without recording a graph; the
clipping coefficient stays a 0-d device array, so clipping on CUDA never waits for the device
unless ``error_if_nonfinite`` asks for a check.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from ...backend import array_module
from ...tensor.dtype import get_default_dtype
from ...tensor.tensor import Tensor, wrap

__all__ = [
    "clip_grad_norm",
    "clip_grad_norm_",
    "clip_grad_value_",
    "clip_grads_with_norm_",
    "get_total_norm",
]

_Params = Tensor | Iterable[Tensor]


def _as_list(tensors: _Params) -> list[Tensor]:
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def _vector_norm(xp: Any, arr: Any, p: float) -> Any:
    """The ``p``-norm of all elements of ``arr`` as a 0-d array of its dtype."""
    if p == 2.0:
        flat = arr.ravel()
        return xp.sqrt(xp.dot(flat, flat)) if arr.size else xp.zeros((), dtype=arr.dtype)
    a = xp.abs(arr)
    if p == math.inf:
        return a.max() if arr.size else xp.zeros((), dtype=arr.dtype)
    if p == -math.inf:
        return a.min() if arr.size else xp.asarray(math.inf, dtype=arr.dtype)
    if p == 0.0:
        return (a != 0).sum().astype(arr.dtype)
    if p == 1.0:
        return a.sum()
    return (a**p).sum() ** (1.0 / p)


def get_total_norm(
    tensors: _Params,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """The norm of the norms of ``tensors`` (as if they were concatenated into one vector)."""
    tensors = [t for t in _as_list(tensors) if t is not None]
    norm_type = float(norm_type)
    if not tensors:
        return wrap(np.zeros((), dtype=get_default_dtype().np))
    xp = array_module(tensors[0]._data)
    norms = xp.stack([xp.asarray(_vector_norm(xp, t._data, norm_type)) for t in tensors])
    total = xp.asarray(_vector_norm(xp, norms, norm_type))
    if error_if_nonfinite and not bool(xp.isfinite(total)):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
            "so it cannot be clipped. To disable this error and scale the gradients by the "
            "non-finite norm anyway, set `error_if_nonfinite=False`"
        )
    return wrap(total)


def clip_grads_with_norm_(
    parameters: _Params, max_norm: float, total_norm: Tensor, foreach: bool | None = None
) -> None:
    """Scale the gradients of ``parameters`` by ``min(1, max_norm / (total_norm + 1e-6))``."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    total = total_norm._data
    xp = array_module(total)
    coef = xp.minimum(float(max_norm) / (total + 1e-6), 1.0)
    with np.errstate(invalid="ignore"):  # a non-finite norm scales inf * 0 into nan silently
        for g in grads:
            arr = g._data
            xp.multiply(arr, coef.astype(arr.dtype, copy=False), out=arr)
            g._bump_version()


def clip_grad_norm_(
    parameters: _Params,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Rescale the gradients in place so their total ``norm_type``-norm is at most ``max_norm``.

    Returns the total norm of the gradients before clipping (a 0-d tensor).
    """
    params = _as_list(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(params, max_norm, total, foreach)
    return total


def clip_grad_norm(
    parameters: _Params,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Deprecated alias of ``clip_grad_norm_``."""
    import warnings

    warnings.warn(
        "`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
        "`torch.nn.utils.clip_grad_norm_`.",
        FutureWarning,
        stacklevel=2,
    )
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters: _Params, clip_value: float, foreach: bool | None = None) -> None:
    """Clamp every gradient element of ``parameters`` into ``[-clip_value, clip_value]``."""
    clip_value = float(clip_value)
    for p in _as_list(parameters):
        g = p.grad
        if g is None:
            continue
        arr = g._data
        array_module(arr).clip(arr, -clip_value, clip_value, out=arr)
        g._bump_version()
