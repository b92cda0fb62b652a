"""Sorting along a dim: ``sort``, ``argsort``, ``topk``, and the running product ``cumprod``.

Values are differentiable (the gradient goes back to the position each value came from); the
int64 indices are not. Sorts are stable, so ties keep their input order in both directions.
"""

from __future__ import annotations

import math
from collections import namedtuple
from typing import Any

from ..autograd.function import Function
from ..tensor.tensor import Tensor, wrap
from ._util import array_module, wrap_dim
from .complex_numbers import refuse_complex
from .join import cat

__all__ = ["argsort", "bucketize", "cumprod", "kthvalue", "median", "quantile", "searchsorted"]
__all__ += ["msort", "sort", "topk"]

SortResult = namedtuple("sort", ["values", "indices"])
TopkResult = namedtuple("topk", ["values", "indices"])
MedianResult = namedtuple("median", ["values", "indices"])
KthvalueResult = namedtuple("kthvalue", ["values", "indices"])


def _order(arr: Any, dim: int, descending: bool) -> Any:
    """Stable argsort along ``dim``; descending keeps ties in input order too."""
    if arr.dtype.kind == "c":
        raise RuntimeError(" Sort does not support complex dtypes on CPU")
    xp = array_module(arr)
    if not descending:
        return xp.argsort(arr, axis=dim, kind="stable")
    key = arr
    if arr.dtype.kind in "bu":
        key = arr.astype("int64")
    return xp.argsort(-key, axis=dim, kind="stable")


class Select(Function):
    """Values of ``x`` taken along ``dim`` at ``indices`` (a sort's or top-k's positions)."""

    _backward_name = "SortBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, dim: int, indices: Any) -> Any:
        ctx.dim, ctx.indices, ctx.in_shape = dim, indices, x._data.shape
        xp = array_module(x._data)
        return xp.take_along_axis(x._data, indices, axis=dim)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None, None]:
        from .gather_scatter import scatter_add

        xp = array_module(g._data)
        base = wrap(xp.zeros(ctx.in_shape, dtype=g._data.dtype))
        return scatter_add(base, ctx.dim, wrap(ctx.indices), g), None, None


def sort(
    x: Tensor, dim: int = -1, descending: bool = False, stable: bool = False, *, out: Any = None
) -> Any:
    """(values, indices) of ``x`` sorted along ``dim``."""
    if x._data.ndim == 0:
        return SortResult(x.clone(), _zeros_index(x))
    d = wrap_dim(int(dim), x._data.ndim)
    idx = _order(x._data, d, descending)
    return SortResult(Select.apply(x, d, idx), wrap(idx.astype("int64")))


def argsort(x: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
    """The indices that sort ``x`` along ``dim``."""
    if x._data.ndim == 0:
        return _zeros_index(x)
    d = wrap_dim(int(dim), x._data.ndim)
    return wrap(_order(x._data, d, descending).astype("int64"))


def topk(
    x: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True, *, out: Any = None
) -> Any:
    """The ``k`` largest (or smallest) entries along ``dim``, as (values, indices)."""
    nd = x._data.ndim
    d = wrap_dim(int(dim), nd) if nd else 0
    n = x._data.shape[d] if nd else 1
    k = int(k)
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    refuse_complex(x, " topk does not support complex dtypes on CPU", RuntimeError)
    if nd == 0:
        return TopkResult(x.clone(), _zeros_index(x))
    idx = _order(x._data, d, largest)
    idx = idx[tuple(slice(0, k) if i == d else slice(None) for i in range(nd))]
    return TopkResult(Select.apply(x, d, idx), wrap(idx.astype("int64")))


def _zeros_index(x: Tensor) -> Tensor:
    xp = array_module(x._data)
    return wrap(xp.zeros((), dtype="int64"))


class Cumprod(Function):
    """Running product along ``dim``; the gradient is exact where the input has zeros too."""

    _backward_name = "CumprodBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, dim: int) -> Any:
        ctx.dim = dim
        ctx.save_for_backward(x)
        xp = array_module(x._data)
        return xp.cumprod(x._data, axis=dim)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None]:
        (x,) = ctx.saved_tensors
        d = ctx.dim
        n = x.shape[d]
        # d out_j / d x_i = prod_{m <= j, m != i} x_m for j >= i: built from products that skip
        # x_i (no division, so zeros are handled); O(n^2) along dim, fine at program sizes
        parts = []
        for i in range(n):
            ones = x.narrow(d, i, 1) * 0 + 1
            skipped = cumprod(cat([x.narrow(d, 0, i), ones, x.narrow(d, i + 1, n - i - 1)], d), d)
            contrib = (g.narrow(d, i, n - i) * skipped.narrow(d, i, n - i)).sum(d, keepdim=True)
            parts.append(contrib)
        return cat(parts, d), None


def cumprod(x: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """The running product along ``dim``."""
    if dtype is not None:
        x = x.to(dtype)
    if x._data.ndim == 0:
        return x.clone()
    return Cumprod.apply(x, wrap_dim(int(dim), x._data.ndim))


def median(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:
    """The lower median (of an even count, the smaller middle value): of all entries, or along
    ``dim`` as (values, indices)."""
    if dim is None:
        flat = input.reshape(-1)
        n = flat._data.size
        if n == 0:
            return wrap(array_module(input._data).asarray(float("nan"), dtype=input._data.dtype))
        return sort(flat).values[(n - 1) // 2]
    d = wrap_dim(dim, max(input._data.ndim, 1))
    if input._data.ndim == 0:
        return MedianResult(input * 1, wrap(array_module(input._data).asarray(0)))
    k = (input._data.shape[d] - 1) // 2
    ordered = sort(input, d)
    values = ordered.values.narrow(d, k, 1)
    indices = ordered.indices.narrow(d, k, 1)
    if not keepdim:
        values, indices = values.squeeze(d), indices.squeeze(d)
    return MedianResult(values, indices)


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> Any:
    """The ``k``-th smallest entry (1-based) along ``dim``, as (values, indices)."""
    d = wrap_dim(dim, max(input._data.ndim, 1))
    n = input._data.shape[d] if input._data.ndim else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    if input._data.ndim == 0:
        return KthvalueResult(input * 1, wrap(array_module(input._data).asarray(0)))
    ordered = sort(input, d)
    values, indices = ordered.values.narrow(d, k - 1, 1), ordered.indices.narrow(d, k - 1, 1)
    if not keepdim:
        values, indices = values.squeeze(d), indices.squeeze(d)
    return KthvalueResult(values, indices)


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def quantile(input: Tensor, q: Any, dim: int | None = None, keepdim: bool = False, *,
             interpolation: str = "linear") -> Tensor:  # fmt: skip
    """The ``q``-quantiles (a number or a 1-D tensor in [0, 1]) along ``dim`` (all entries when
    None), interpolating between the sorted entries as ``interpolation`` says."""
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(
            "quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, "
            f"but got {interpolation}"
        )
    if input._data.dtype.kind != "f":
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    qs = q._data.reshape(-1).tolist() if isinstance(q, Tensor) else [float(q)]
    bad = [v for v in qs if not 0 <= v <= 1]
    if bad:
        if isinstance(q, Tensor):
            raise RuntimeError("quantile() q values must be in the range [0, 1]")
        raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {bad[0]}")
    x = input.reshape(-1) if dim is None else input
    d = 0 if dim is None else wrap_dim(dim, x._data.ndim)
    values = sort(x, d).values
    n = x._data.shape[d]
    out = []
    for v in qs:
        pos = v * (n - 1)
        lo, hi = math.floor(pos), math.ceil(pos)
        frac = pos - lo
        if interpolation == "lower" or (interpolation == "nearest" and round(pos) == lo):
            hi, frac = lo, 0.0
        elif interpolation in ("higher", "nearest"):
            lo, frac = hi, 0.0
        elif interpolation == "midpoint":
            frac = 0.5 if hi != lo else 0.0
        low = values.narrow(d, lo, 1)
        pick = low if hi == lo or frac == 0 else low + (values.narrow(d, hi, 1) - low) * frac
        out.append(pick if keepdim and dim is not None else pick.squeeze(d))
    if dim is None and keepdim:
        out = [o.reshape((1,) * input._data.ndim) for o in out]
    from .join import stack

    return stack(out, 0) if isinstance(q, Tensor) and q._data.ndim else out[0]


def msort(input: Tensor) -> Tensor:
    """``input`` sorted along its first dim."""
    return sort(input, 0).values


def searchsorted(
    sorted_sequence: Tensor,
    input: Any,
    *,
    out_int32: bool = False,
    right: bool = False,
    side: str | None = None,
    sorter: Tensor | None = None,
) -> Tensor:
    """For each value, the index where it would go in ``sorted_sequence`` (per row of the
    innermost dim when that is N-D) to keep it sorted; ``right``: after equal entries."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(
                f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}"
            )
        if right and side == "left":
            raise RuntimeError(
                "torch.searchsorted(): side and right can't be set to opposites, got side of "
                "left while right was True"
            )
        right = side == "right"
    seq = sorted_sequence._data
    xp = array_module(seq)
    if sorter is not None:
        seq = xp.take_along_axis(seq, sorter._data, axis=-1)
    scalar = not isinstance(input, Tensor)
    values = xp.asarray(input) if scalar else input._data
    how = "right" if right else "left"
    if seq.ndim == 1:
        out = xp.searchsorted(seq, values, side=how)
    else:
        if values.shape[:-1] != seq.shape[:-1]:
            raise RuntimeError(
                "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                "dimensions of boundaries tensor and input value tensor must match, but we got "
                f"boundaries tensor {list(seq.shape)} and input value tensor {list(values.shape)}"
            )
        rows_seq = seq.reshape(-1, seq.shape[-1])
        rows_val = values.reshape(-1, values.shape[-1])
        out = xp.stack([xp.searchsorted(a, v, side=how) for a, v in zip(rows_seq, rows_val)])
        out = out.reshape(values.shape)
    return wrap(out.astype("int32" if out_int32 else "int64"))


def bucketize(
    input: Any, boundaries: Tensor, *, out_int32: bool = False, right: bool = False
) -> Tensor:
    """The bucket of each value: i with boundaries[i-1] < x <= boundaries[i] (``right``:
    boundaries[i-1] <= x < boundaries[i])."""
    if boundaries._data.ndim != 1:
        raise RuntimeError(
            f"boundaries tensor must be 1 dimension, but got dim({boundaries._data.ndim})"
        )
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


TENSOR_METHODS: dict[str, Any] = {name: globals()[name] for name in __all__}
TENSOR_METHODS.pop("searchsorted")
