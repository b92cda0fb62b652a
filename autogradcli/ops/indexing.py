"""Indexing: ``t[key]`` (ints, slices, None, Ellipsis, bool masks, integer index tensors/lists and
their combinations) and the out-of-place ``index_put`` that ``t[key] = value`` records.

Keys follow PyTorch's rules (which are numpy's, except that slice steps must be positive and index
tensors must be integer or bool). Basic keys (ints, slices, None, Ellipsis) give views sharing
memory and the version counter; the rest give copies. The backward of indexing scatters with
accumulation, so repeated indices add up.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..autograd.function import Function
from ..autograd.gradient_ops import sum_to
from ..backend import array_module, scatter_add, to_device
from ..tensor.tensor import Tensor, wrap, wrap_view

__all__ = ["argwhere", "getitem", "index_put", "nonzero"]

_INDEX_DTYPE_ERROR = "tensors used as indices must be long, int, byte or bool tensors"


def _as_index_array(k: Any, arr: Any) -> Any:
    """A Tensor/list/array index as an integer or bool array on ``arr``'s device."""
    a = k._data if isinstance(k, Tensor) else k
    if not hasattr(a, "dtype"):
        a = np.asarray(a)
        if a.size == 0:
            a = a.astype(np.int64)
    if a.dtype.kind not in "iub":
        raise IndexError(_INDEX_DTYPE_ERROR)
    if a.dtype.kind == "u" and a.dtype.itemsize == 1:
        a = a.astype(bool)  # a uint8 ("byte") index is a mask, as in PyTorch
    return to_device(a, _device(arr))


def _device(arr: Any) -> Any:
    from ..backend import device_of

    return device_of(arr)


def _slice(k: slice) -> slice:
    parts = [None if v is None else operator.index(v) for v in (k.start, k.stop, k.step)]
    if parts[2] == 0:
        raise ValueError("slice step cannot be zero")
    if parts[2] is not None and parts[2] < 0:
        raise ValueError("step must be greater than zero")
    return slice(*parts)


def _index_key(key: Any, arr: Any) -> tuple[tuple[Any, ...], bool]:
    """The key as a tuple numpy/cupy understand (tensors as arrays), and whether it is basic
    (ints, slices, None, Ellipsis only: the result is a view)."""
    if not isinstance(key, tuple):
        key = (key,)
    basic = True
    parts: list[Any] = []
    for k in key:
        if k is None or k is Ellipsis or type(k) is int:
            pass
        elif isinstance(k, slice):
            k = _slice(k)
        elif type(k) is bool or isinstance(k, np.bool_):
            basic = False
        elif isinstance(k, np.integer):
            k = int(k)
        elif isinstance(k, Tensor) and k._data.ndim == 0 and k._data.dtype.kind in "iu":
            k = int(k._data.item())
        elif isinstance(k, range):  # a Python range indexes like the list of its values
            k = _as_index_array(list(k), arr)
            basic = False
        elif isinstance(k, (Tensor, list, tuple)) or (hasattr(k, "dtype") and hasattr(k, "shape")):
            k = _as_index_array(k, arr)
            basic = False
        elif hasattr(k, "__index__"):
            k = operator.index(k)
        else:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                f"are valid indices (got {type(k).__name__})"
            )
        parts.append(k)
    if basic and not any(p is Ellipsis for p in parts):
        parts.append(Ellipsis)  # so an all-int key gives a 0-d view, not a numpy scalar
    return tuple(parts), basic


def _index_error(err: IndexError, arr: Any) -> IndexError:
    """numpy's indexing error in PyTorch's words."""
    msg = str(err)
    if msg.startswith("too many indices"):
        return IndexError(f"too many indices for tensor of dimension {arr.ndim}")
    if msg.startswith("boolean index did not match"):
        return IndexError(
            f"The shape of the mask does not match the shape of the indexed tensor "
            f"{list(arr.shape)} ({msg})"
        )
    return IndexError(msg.replace("for axis", "for dimension"))


class Staged(tuple):
    """An advanced key with integers, as PyTorch applies it: ``(pre, rest)``, where ``pre`` does
    the integer selects (a view) and ``rest`` the advanced part on what is left. (numpy would
    treat the integers as advanced indices too, which reorders dims: ``x[1, :, [0, 3]]``.)"""


def _stage(parts: tuple[Any, ...]) -> Any:
    """``parts`` unchanged, or a ``Staged`` pair when an advanced key also holds integers."""
    if not any(type(p) is int for p in parts):
        return parts
    pre: list[Any] = []
    rest: list[Any] = []
    for p in parts:
        if type(p) is int:
            pre.append(p)
            continue
        rest.append(p)
        if p is Ellipsis:
            pre.append(p)
        elif isinstance(p, slice):
            pre.append(slice(None))
        elif hasattr(p, "dtype"):
            pre.extend([slice(None)] * (p.ndim if p.dtype.kind == "b" else 1))
    return Staged((tuple(pre), tuple(rest)))


def _lookup(arr: Any, key: Any) -> Any:
    try:
        if type(key) is Staged:
            return arr[key[0]][key[1]]
        return arr[key]
    except IndexError as err:
        raise _index_error(err, arr) from None


def _assign(arr: Any, key: Any, value: Any) -> None:
    """``arr[key] = value`` for a plain or ``Staged`` key."""
    if type(key) is Staged:
        arr[key[0]][key[1]] = value
    else:
        arr[key] = value


def _select(g: Tensor, key: Any, basic: bool) -> Tensor:
    """``g[key]`` through GetItem (differentiable) for a plain or ``Staged`` key."""
    if type(key) is Staged:
        return GetItem.apply(GetItem.apply(g, key[0], True), key[1], False)
    return GetItem.apply(g, key, basic)


class GetItem(Function):
    _backward_name = "IndexBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, key: Any, basic: bool) -> Any:
        arr = x._data
        ctx.key, ctx.basic, ctx.in_shape = key, basic, arr.shape
        out = _lookup(arr, key)
        if basic:
            return wrap_view(out, x)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None, None]:
        return IndexAddInto.apply(g, ctx.in_shape, ctx.key, ctx.basic), None, None


class _Select(GetItem):
    _backward_name = "SelectBackward0"


class _Slice(GetItem):
    _backward_name = "SliceBackward0"


class _Unsqueeze(GetItem):
    _backward_name = "UnsqueezeBackward0"


class _Alias(GetItem):
    _backward_name = "AliasBackward0"


def _getitem_fn(parts: tuple[Any, ...], basic: bool) -> type[GetItem]:
    """The Function whose grad_fn name PyTorch gives: that of the last view op the key applies."""
    if not basic:
        return GetItem
    last: type[GetItem] = _Alias
    for p in parts:
        if p is None:
            last = _Unsqueeze
        elif isinstance(p, int):
            last = _Select
        elif isinstance(p, slice) and (p != slice(None) or last is _Alias):
            last = _Slice
    return last


def _bools_as_ints(xp: Any, key: Any) -> Any:
    """``key`` with each boolean mask replaced by its ``nonzero`` index arrays (same meaning;
    scatter-add implementations take integer indices)."""
    parts = key if isinstance(key, tuple) else (key,)
    if not any(getattr(p, "dtype", None) is not None and p.dtype.kind == "b" for p in parts):
        return key
    out: list[Any] = []
    for p in parts:
        if getattr(p, "dtype", None) is not None and p.dtype.kind == "b":
            out.extend(xp.nonzero(p))
        else:
            out.append(p)
    return tuple(out)


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
            scatter_add(xp, out, _bools_as_ints(xp, key), g._data)
        return out

    @staticmethod
    def backward(ctx: Any, gg: Tensor) -> tuple[Any, None, None, None]:
        return GetItem.apply(gg, ctx.key, ctx.basic), None, None, None


def normalize_value(x: Tensor, key: Any, value: Any) -> Any:
    """The array (or number) to assign at ``x[key]``, on ``x``'s device, with PyTorch's error when
    its shape can't broadcast to the indexed region."""
    if not isinstance(value, Tensor):
        return value
    v = to_device(value._data, _device(x._data))
    target = _lookup(x._data, key).shape
    vs = v.shape
    while len(vs) > len(target) and vs[0] == 1:  # PyTorch drops leading unit dims of the value
        vs = vs[1:]
    ok = len(vs) <= len(target) and all(a in (1, b) for a, b in zip(reversed(vs), reversed(target)))
    if not ok:
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(v.shape)} cannot be broadcast to "
            f"indexing result of shape {list(target)}"
        )
    return v.reshape(vs)


class IndexPut(Function):
    """``x`` with ``x[key] = value``, out of place (``__setitem__`` records it in place)."""

    _backward_name = "IndexPutBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, key: Any, value: Any, basic: bool) -> Any:
        out = x._data.copy()
        v = normalize_value(x, key, value)
        _assign(out, key, v)
        ctx.key, ctx.basic = key, basic
        ctx.value_shape = value._data.shape if isinstance(value, Tensor) else ()
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None, Any, None]:
        nx, _, nv, _ = ctx.needs_input_grad
        gx = gv = None
        if nx:
            xp = array_module(g._data)
            mask = xp.ones(g._data.shape, dtype=g._data.dtype)
            _assign(mask, ctx.key, 0)
            gx = g * wrap(mask)
        if nv:
            gsel = _select(g, ctx.key, ctx.basic)
            lead = len(ctx.value_shape) - gsel._data.ndim
            if lead > 0:
                gsel = gsel.reshape((1,) * lead + tuple(gsel._data.shape))
            gv = sum_to(gsel, ctx.value_shape)
        return gx, None, gv, None


class _CopySlices(IndexPut):
    _backward_name = "CopySlices"


def getitem(x: Tensor, key: Any) -> Tensor:
    """``x[key]``: a view for basic keys, a copy for advanced ones."""
    if type(key) is int:  # x[i], the commonest key: what _index_key and _getitem_fn make of it
        parts = (key, Ellipsis)
        return _Select.apply(x, parts, True)
    parts, basic = _index_key(key, x._data)
    if not basic:
        staged = _stage(parts)
        if type(staged) is Staged:
            x = GetItem.apply(x, staged[0], True)
            parts = staged[1]
    return _getitem_fn(parts, basic).apply(x, parts, basic)


def index_put(x: Tensor, key: Any, value: Any, basic: bool | None = None) -> Tensor:
    """``x`` with ``x[key] = value`` as a new tensor (``key`` raw or already normalised)."""
    if basic is None:
        parts, basic = _index_key(key, x._data)
        key = parts if basic else _stage(parts)
    return (_CopySlices if basic else IndexPut).apply(x, key, value, basic)


def nonzero(x: Tensor, as_tuple: bool = False) -> Any:
    """Indices of the non-zero entries: an (n, ndim) int64 tensor, or one 1-D tensor per dim."""
    xp = array_module(x._data)
    if x._data.ndim == 0:  # a scalar is indexed as a one-element vector
        hits = int(bool(x._data))
        if as_tuple:
            return (wrap(xp.zeros(hits, dtype="int64")),)
        return wrap(xp.zeros((hits, 0), dtype="int64"))
    idx = xp.nonzero(x._data)
    if as_tuple:
        return tuple(wrap(i.astype("int64")) for i in idx)
    return wrap(xp.stack(idx, axis=1).astype("int64"))


def argwhere(input: Tensor) -> Tensor:
    """``nonzero(input)``: the (n, ndim) indices of the non-zero entries."""
    return nonzero(input)


def _iter(self: Tensor) -> Any:
    if self._data.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    return (getitem(self, i) for i in range(self._data.shape[0]))


TENSOR_METHODS: dict[str, Any] = {
    "__getitem__": getitem,
    "__iter__": _iter,
    "nonzero": nonzero,
    "argwhere": argwhere,
}
