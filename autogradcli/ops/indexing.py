"""Indexing: ``t[key]`` (ints, slices, None, Ellipsis, bool masks, integer index tensors) and
``t[key] = value``."""

from __future__ import annotations

from typing import Any

from ..autograd.function import Function
from ..backend import scatter_add
from ..tensor.tensor import Tensor, _make
from ._util import array_module
from .shape import _as_view, sum_to

_BASIC = (int, slice, type(None), type(Ellipsis))


def _index_key(key: Any) -> tuple[Any, bool]:
    """The key with tensors as arrays, and whether it is basic (a view, no copy)."""
    if not isinstance(key, tuple):
        key = (key,)
    basic = True
    parts = []
    for k in key:
        if isinstance(k, Tensor):
            arr = k._data
            if arr.ndim == 0 and arr.dtype.kind in "iu":
                k = int(arr.item())
            else:
                k = arr
                basic = False
        elif isinstance(k, (list, tuple)) or type(k) is bool or not isinstance(k, _BASIC):
            basic = False
        parts.append(k)
    return tuple(parts), basic


class GetItem(Function):
    _backward_name = "IndexBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, key: Any, basic: bool) -> Any:
        arr = x._data
        ctx.key, ctx.basic, ctx.in_shape = key, basic, arr.shape
        try:
            out = arr[key]
        except IndexError as err:
            raise IndexError(f"{err} (indexing a tensor of shape {tuple(arr.shape)})") from None
        if basic:
            return _as_view(ctx, x, out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None, None]:
        return IndexAddInto.apply(g, ctx.in_shape, ctx.key, ctx.basic), None, None


class IndexAddInto(Function):
    """zeros(shape) with ``g`` added at ``key``: the adjoint of indexing."""

    _backward_name = "IndexAddIntoBackward"

    @staticmethod
    def forward(ctx: Any, g: Tensor, shape: tuple[int, ...], key: Any, basic: bool) -> Any:
        ctx.key, ctx.basic = key, basic
        xp = array_module(g._data)
        out = xp.zeros(shape, dtype=g._data.dtype)
        if basic:
            out[key] = g._data
        else:
            scatter_add(xp, out, key, g._data)
        return out

    @staticmethod
    def backward(ctx: Any, gg: Tensor) -> tuple[Any, None, None, None]:
        return GetItem.apply(gg, ctx.key, ctx.basic), None, None, None


class IndexPut(Function):
    """``x`` with ``x[key] = value``, out of place (in-place ``__setitem__`` builds on it)."""

    _backward_name = "IndexPutBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, key: Any, value: Any) -> Any:
        out = x._data.copy()
        v = value._data if isinstance(value, Tensor) else value
        out[key] = v
        ctx.key = key
        ctx.value_shape = v.shape if hasattr(v, "shape") else ()
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None, Any]:
        nx, _, nv = ctx.needs_input_grad
        gx = gv = None
        if nx:
            xp = array_module(g._data)
            mask = xp.ones(g._data.shape, dtype=g._data.dtype)
            mask[ctx.key] = 0
            gx = g * _make(mask)
        if nv:
            gv = sum_to(g[ctx.key], ctx.value_shape)
        return gx, None, gv


def getitem(x: Tensor, key: Any) -> Tensor:
    k, basic = _index_key(key)
    return GetItem.apply(x, k if len(k) != 1 else k[0], basic)


def index_put(x: Tensor, key: Any, value: Any) -> Tensor:
    k, _ = _index_key(key)
    return IndexPut.apply(x, k if len(k) != 1 else k[0], value)


def nonzero(x: Tensor, as_tuple: bool = False) -> Any:
    xp = array_module(x._data)
    idx = xp.nonzero(x._data)
    if as_tuple:
        return tuple(_make(i.astype("int64")) for i in idx)
    return _make(xp.stack(idx, axis=1).astype("int64") if idx else xp.zeros((0, 0), dtype="int64"))
