"""Index-driven ops: gather/scatter, index_select, masked_fill, narrow, repeat, flip, roll,
tril/triu, one_hot, take_along_dim.

Each op's backward is built from the others (gather <-> scatter_add, index_select <-> indexing's
``IndexAddInto``), so gradients are differentiable again. In-place spellings (``scatter_add_``,
``scatter_``, ``masked_fill_``) go through ``inplace.apply_inplace``, which keeps the graph and
the version counter right.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..autograd.function import Function
from ..backend import scatter_add as _xp_scatter_add
from ..tensor.tensor import Tensor, _make
from ._util import array_module, wrap_dim
from .indexing import IndexAddInto, getitem
from .inplace import apply_inplace
from .shape import expand, sum_to
from .unary import where

__all__ = [
    "flip",
    "gather",
    "index_select",
    "masked_fill",
    "narrow",
    "one_hot",
    "repeat",
    "roll",
    "scatter",
    "scatter_add",
    "take_along_dim",
    "tril",
    "triu",
]


def _check_index(name: str, x: Tensor, dim: int, index: Tensor) -> int:
    """Validate a gather/scatter index as PyTorch does; the wrapped ``dim``."""
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): argument 'index' must be Tensor, not {type(index).__name__}")
    d = wrap_dim(dim, x._data.ndim)
    if index._data.dtype.name not in ("int64", "int32"):
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    if max(index._data.ndim, 1) != max(x._data.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    return d


def _bounds(index: Any, n: int, d: int) -> None:
    """PyTorch's error for an index value outside ``[0, n)`` along dimension ``d``."""
    if index.size == 0:
        return
    bad = (index < 0) | (index >= n)
    if bool(bad.any()):
        value = int(index[bad].ravel()[0])
        raise RuntimeError(f"index {value} is out of bounds for dimension {d} with size {n}")


def _key(index: Any, dim: int) -> tuple[Any, ...]:
    """The advanced-indexing key that addresses ``x[..., index[p], ...]`` for every position p."""
    xp = array_module(index)
    nd = index.ndim
    parts = []
    for k in range(nd):
        if k == dim:
            parts.append(index)
        else:
            shape = [1] * nd
            shape[k] = index.shape[k]
            parts.append(xp.arange(index.shape[k]).reshape(shape))
    return tuple(parts)


def _region(shape: Sequence[int]) -> tuple[slice, ...]:
    return tuple(slice(0, s) for s in shape)


def _pad_to(t: Tensor, shape: tuple[int, ...]) -> Tensor:
    """``t`` in the leading corner of zeros(shape) (a src larger than its index gets zeros)."""
    if t._data.shape == shape:
        return t
    return IndexAddInto.apply(t, shape, _region(t._data.shape), True)


def _as1d(arr: Any) -> Any:
    return arr.reshape(1) if arr.ndim == 0 else arr


class Gather(Function):
    _backward_name = "GatherBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, dim: int, index: Tensor) -> Any:
        arr, idx = _as1d(x._data), _as1d(index._data)
        ctx.dim, ctx.index, ctx.shape = dim, index, x._data.shape
        _bounds(idx, arr.shape[dim], dim)
        return arr[_key(idx, dim)].reshape(index._data.shape)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None, None]:
        xp = array_module(g._data)
        zeros = _make(xp.zeros(ctx.shape, dtype=g._data.dtype))
        return ScatterAdd.apply(zeros, ctx.dim, ctx.index, g), None, None


def gather(x: Tensor, dim: int, index: Tensor) -> Tensor:
    """``out[i][j] = x[i][index[i][j]]`` (for dim=1): values picked along ``dim`` by ``index``."""
    d = _check_index("gather", x, dim, index)
    xs, ins = x._data.shape, index._data.shape
    for k, (a, b) in enumerate(zip(ins, xs)):
        if k != d and a > b:
            raise RuntimeError(
                f"Size does not match at dimension {k} expected index {list(ins)} to be no larger "
                f"than self {list(xs)} apart from dimension {d}"
            )
    return Gather.apply(x, d, index)


class ScatterAdd(Function):
    _backward_name = "ScatterAddBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, dim: int, index: Tensor, src: Tensor) -> Any:
        out = _as1d(x._data).copy()
        idx = _as1d(index._data)
        ctx.dim, ctx.index, ctx.src_shape = dim, index, src._data.shape
        _bounds(idx, out.shape[dim], dim)
        values = _as1d(src._data)[_region(idx.shape)].astype(out.dtype, copy=False)
        _xp_scatter_add(array_module(out), out, _key(idx, dim), values)
        return out.reshape(x._data.shape)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None, None, Any]:
        gsrc = None
        if ctx.needs_input_grad[3]:
            gsrc = _pad_to(Gather.apply(g, ctx.dim, ctx.index), ctx.src_shape)
        return g, None, None, gsrc


class Scatter(Function):
    """``x`` with ``src`` (a tensor) written at the positions ``index`` names along ``dim``."""

    _backward_name = "ScatterBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, dim: int, index: Tensor, src: Any) -> Any:
        out = _as1d(x._data).copy()
        idx = _as1d(index._data)
        ctx.dim, ctx.index = dim, index
        ctx.src_shape = src._data.shape if isinstance(src, Tensor) else None
        _bounds(idx, out.shape[dim], dim)
        values = _as1d(src._data)[_region(idx.shape)] if isinstance(src, Tensor) else src
        out[_key(idx, dim)] = values
        return out.reshape(x._data.shape)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None, None, Any]:
        nx, _, _, ns = ctx.needs_input_grad
        gx = ScatterValue.apply(g, ctx.dim, ctx.index, 0.0) if nx else None
        gsrc = _pad_to(Gather.apply(g, ctx.dim, ctx.index), ctx.src_shape) if ns else None
        return gx, None, None, gsrc


class ScatterValue(Scatter):
    _backward_name = "ScatterBackward1"


def _check_scatter(name: str, x: Tensor, dim: int, index: Tensor, src: Any) -> int:
    d = _check_index(name, x, dim, index)
    ins, xs = index._data.shape, x._data.shape
    if isinstance(src, Tensor):
        ss = src._data.shape
        if any(k != d and a > b for k, (a, b) in enumerate(zip(ins, xs))) or any(
            a > b for a, b in zip(ins, ss)
        ):
            raise RuntimeError(
                f"Expected index {list(ins)} to be no larger than self {list(xs)} apart from "
                f"dimension {d} and to be no larger size than src {list(ss)}"
            )
    elif any(k != d and a > b for k, (a, b) in enumerate(zip(ins, xs))):
        raise RuntimeError(
            f"Expected index {list(ins)} to be no larger than self {list(xs)} apart from "
            f"dimension {d}"
        )
    return d


def scatter_add(x: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """``x`` plus ``src`` added at the positions ``index`` names along ``dim`` (repeats add up)."""
    d = _check_scatter("scatter", x, dim, index, src)
    return ScatterAdd.apply(x, d, index, src)


def scatter(
    x: Tensor, dim: int, index: Tensor, src: Any = None, value: Any = None, reduce: Any = None
) -> Tensor:
    """``x`` with ``src`` (a tensor) or ``value`` (a number) written where ``index`` says."""
    if reduce is not None:
        raise NotImplementedError("scatter(reduce=...) is not supported; use scatter_add")
    if src is None:
        src = value
    if src is None:
        raise TypeError("scatter() missing required argument 'src' or 'value'")
    d = _check_scatter("scatter", x, dim, index, src)
    if isinstance(src, Tensor):
        return Scatter.apply(x, d, index, src)
    return ScatterValue.apply(x, d, index, src)


def scatter_add_(x: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    return apply_inplace(x, "scatter_add_", lambda s: scatter_add(s, dim, index, src), src)


def scatter_(x: Tensor, dim: int, index: Tensor, src: Any = None, value: Any = None) -> Tensor:
    return apply_inplace(x, "scatter_", lambda s: scatter(s, dim, index, src, value), src)


def index_select(x: Tensor, dim: int, index: Tensor) -> Tensor:
    """The slices of ``x`` along ``dim`` at the positions in the 1-D ``index`` (a copy)."""
    d = wrap_dim(dim, x._data.ndim)
    if index._data.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index._data.dtype.name not in ("int64", "int32"):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    n = x._data.shape[d] if x._data.ndim else 1
    idx = _as1d(index._data)
    if idx.size and bool(((idx < 0) | (idx >= n)).any()):
        bad = int(idx[(idx < 0) | (idx >= n)][0])
        raise IndexError(f"index out of range in self: index {bad} is out of bounds for size {n}")
    if x._data.ndim == 0:
        return IndexSelect.apply(x.reshape(1), 0, (idx,)).reshape(index._data.shape)
    return IndexSelect.apply(x, d, (slice(None),) * d + (idx,))


class IndexSelect(Function):
    _backward_name = "IndexSelectBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, dim: int, key: tuple[Any, ...]) -> Any:
        ctx.key, ctx.shape = key, x._data.shape
        return x._data[key]

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None, None]:
        return IndexAddInto.apply(g, ctx.shape, ctx.key, False), None, None


class MaskedFill(Function):
    _backward_name = "MaskedFillBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, mask: Tensor, value: Any) -> Any:
        xp = array_module(x._data)
        v = value._data if isinstance(value, Tensor) else value
        ctx.save_for_backward(mask)
        ctx.x_shape = x._data.shape
        out = xp.where(mask._data, v, x._data)
        return out.astype(x._data.dtype, copy=False)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None, Any]:
        (mask,) = ctx.saved_tensors
        nx, _, nv = ctx.needs_input_grad
        gx = sum_to(where(mask, 0.0, g), ctx.x_shape) if nx else None
        gv = where(mask, g, 0.0).sum() if nv else None
        return gx, None, gv


def masked_fill(x: Tensor, mask: Tensor, value: Any) -> Tensor:
    """``x`` with ``value`` wherever the boolean ``mask`` (broadcast) is True."""
    if mask._data.dtype.kind != "b":
        raise RuntimeError(
            "masked_fill_ only supports boolean masks, but got mask with dtype "
            f"{mask.dtype.name if mask._data.dtype.kind != 'f' else 'float'}"
        )
    if isinstance(value, Tensor) and value._data.ndim:
        raise RuntimeError(
            "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
            f"{value._data.ndim} dimension(s)."
        )
    return MaskedFill.apply(x, mask, value)


def masked_fill_(x: Tensor, mask: Tensor, value: Any) -> Tensor:
    return apply_inplace(x, "masked_fill_", lambda s: masked_fill(s, mask, value), value)


def narrow(x: Tensor, dim: int, start: Any, length: int) -> Tensor:
    """A view of ``length`` entries of ``x`` along ``dim`` from ``start``."""
    if x._data.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, x._data.ndim)
    n = x._data.shape[d]
    start = int(start)
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if not -n <= start <= n:
        raise IndexError(
            f"start out of range (expected to be in range of [{-n}, {n}], but got {start})"
        )
    if start < 0:
        start += n
    if start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return getitem(x, (slice(None),) * d + (slice(start, start + length),))


class Repeat(Function):
    _backward_name = "RepeatBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, sizes: tuple[int, ...]) -> Any:
        arr = x._data
        padded = (1,) * (len(sizes) - arr.ndim) + arr.shape
        ctx.sizes, ctx.padded, ctx.shape = sizes, padded, arr.shape
        return array_module(arr).tile(arr.reshape(padded), sizes)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None]:
        inter = []
        for r, s in zip(ctx.sizes, ctx.padded):
            inter += [r, s]
        axes = tuple(range(0, 2 * len(ctx.sizes), 2))
        return g.reshape(inter).sum(axes).reshape(ctx.shape), None


def repeat(x: Tensor, *sizes: Any) -> Tensor:
    """``x`` tiled ``sizes[i]`` times along each dimension (new leading dims allowed)."""
    if len(sizes) == 1 and isinstance(sizes[0], (list, tuple)):
        sizes = tuple(sizes[0])
    sizes = tuple(int(s) for s in sizes)
    if len(sizes) < x._data.ndim:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions "
            "of tensor"
        )
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(sizes)}")
    return Repeat.apply(x, sizes)


def _dims(dims: Any, ndim: int) -> tuple[int, ...]:
    dims = tuple(dims) if isinstance(dims, (list, tuple)) else (dims,)
    out = tuple(wrap_dim(int(d), ndim) for d in dims)
    for i, d in enumerate(out):
        if d in out[:i]:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return out


class Flip(Function):
    _backward_name = "FlipBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, dims: tuple[int, ...]) -> Any:
        ctx.dims = dims
        return array_module(x._data).flip(x._data, dims).copy()

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None]:
        return Flip.apply(g, ctx.dims), None


def flip(x: Tensor, *dims: Any) -> Tensor:
    """A copy of ``x`` with the order of entries along ``dims`` reversed."""
    if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
        dims = tuple(dims[0])
    return Flip.apply(x, _dims(dims, x._data.ndim) if x._data.ndim else ())


class Roll(Function):
    _backward_name = "RollBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, shifts: tuple[int, ...], dims: Any) -> Any:
        ctx.shifts, ctx.dims = shifts, dims
        xp = array_module(x._data)
        if dims is None:
            return xp.roll(x._data, shifts[0])
        return xp.roll(x._data, shifts, dims)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None, None]:
        return Roll.apply(g, tuple(-s for s in ctx.shifts), ctx.dims), None, None


def roll(x: Tensor, shifts: Any, dims: Any = None) -> Tensor:
    """``x`` with entries shifted cyclically by ``shifts`` along ``dims`` (flattened if None)."""
    shifts = tuple(shifts) if isinstance(shifts, (list, tuple)) else (shifts,)
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
        return Roll.apply(x, (int(shifts[0]),), None)
    dims = tuple(dims) if isinstance(dims, (list, tuple)) else (dims,)
    if len(shifts) != len(dims):
        raise RuntimeError(
            f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}"
        )
    nd = x._data.ndim
    return Roll.apply(x, tuple(int(s) for s in shifts), tuple(wrap_dim(d, nd) for d in dims))


class Tril(Function):
    _backward_name = "TrilBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, diagonal: int, upper: bool) -> Any:
        ctx.diagonal, ctx.upper = diagonal, upper
        xp = array_module(x._data)
        return (xp.triu if upper else xp.tril)(x._data, diagonal)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None, None]:
        cls = Triu if ctx.upper else Tril
        return cls.apply(g, ctx.diagonal, ctx.upper), None, None


class Triu(Tril):
    _backward_name = "TriuBackward0"


def tril(x: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle (``j <= i + diagonal``) of the last two dims; zeros above."""
    if x._data.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    return Tril.apply(x, int(diagonal), False)


def triu(x: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle (``j >= i + diagonal``) of the last two dims; zeros below."""
    if x._data.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    return Triu.apply(x, int(diagonal), True)


def one_hot(index: Tensor, num_classes: int = -1) -> Tensor:
    """int64 tensor of shape ``index.shape + (num_classes,)`` with a 1 at each index value."""
    arr = index._data
    if arr.dtype.name != "int64":
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    xp = array_module(arr)
    if num_classes == -1:
        if arr.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(arr.max()) + 1
    if arr.size:
        if int(arr.min()) < 0:
            raise RuntimeError("Class values must be non-negative.")
        if int(arr.max()) >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    return _make((arr[..., None] == xp.arange(num_classes)).astype(arr.dtype))


def take_along_dim(x: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """Values of ``x`` at ``indices`` along ``dim`` (both broadcast elsewhere); flat if None."""
    if dim is None:
        return gather(x.reshape(-1), 0, indices.reshape(-1))
    xs, ins = x._data.shape, indices._data.shape
    if len(xs) != len(ins):
        raise RuntimeError(
            "torch.take_along_dim(): input and indices should have the same number of "
            f"dimensions, but got {len(xs)} dimensions for input, and {len(ins)} dimensions "
            "for indices"
        )
    d = wrap_dim(dim, len(xs))
    shape = []
    for k, (a, b) in enumerate(zip(xs, ins)):
        if k != d and a != b and 1 not in (a, b):
            raise RuntimeError(
                f"The size of tensor a ({a}) must match the size of tensor b ({b}) at "
                f"non-singleton dimension {k}"
            )
        shape.append(max(a, b))
    xb = expand(x, tuple(xs[k] if k == d else s for k, s in enumerate(shape)))
    ib = expand(indices, tuple(ins[k] if k == d else s for k, s in enumerate(shape)))
    return gather(xb, d, ib)


TENSOR_METHODS: dict[str, Any] = {
    "gather": gather,
    "scatter": scatter,
    "scatter_": scatter_,
    "scatter_add": scatter_add,
    "scatter_add_": scatter_add_,
    "index_select": index_select,
    "masked_fill": masked_fill,
    "masked_fill_": masked_fill_,
    "narrow": narrow,
    "repeat": repeat,
    "flip": flip,
    "roll": roll,
    "tril": tril,
    "triu": triu,
    "take_along_dim": take_along_dim,
}
