"""Index-driven selection and scattering: gather/scatter(_add), index_select, take_along_dim.

Each op's backward is built from the others (gather <-> scatter_add, index_select <-> indexing's
``IndexAddInto``), so gradients are differentiable again. The in-place spellings go through
``inplace.apply_inplace``, which keeps the graph and the version counter right.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..autograd.function import Function
from ..backend import scatter_add as _xp_scatter_add
from ..tensor.tensor import Tensor, wrap
from ._util import array_module, scalar_type_name, wrap_dim
from .indexing import IndexAddInto
from .inplace import apply_inplace
from .shape import expand

__all__ = ["gather", "index_add", "index_copy", "index_select", "scatter", "scatter_add"]
__all__ += ["index_fill", "take", "take_along_dim"]


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
    """The slices of the leading ``shape`` block of a larger array."""
    return tuple(slice(0, s) for s in shape)


def _pad_to(t: Tensor, shape: tuple[int, ...]) -> Tensor:
    """``t`` in the leading corner of zeros(shape) (a src larger than its index gets zeros)."""
    if t._data.shape == shape:
        return t
    return IndexAddInto.apply(t, shape, _region(t._data.shape), True)


def _as1d(arr: Any) -> Any:
    """``arr``, with a 0-d array seen as 1-d (gather/scatter treat a scalar as one element)."""
    return arr.reshape(1) if arr.ndim == 0 else arr


def _scatter_target(x: Tensor, dim: int, index: Tensor) -> tuple[Any, Any]:
    """A copy of ``x``'s array to scatter into and the bounds-checked index array."""
    out = _as1d(x._data).copy()
    idx = _as1d(index._data)
    _bounds(idx, out.shape[dim], dim)
    return out, idx


def _src_block(src: Tensor, idx: Any) -> Any:
    """The leading block of ``src`` that ``idx`` covers (src may be larger than the index)."""
    return _as1d(src._data)[_region(idx.shape)]


def _exceeds_self(ins: tuple[int, ...], xs: tuple[int, ...], d: int) -> bool:
    """Whether the index shape ``ins`` is larger than the input's ``xs`` off dimension ``d``."""
    return any(k != d and a > b for k, (a, b) in enumerate(zip(ins, xs)))


class Gather(Function):
    """Values picked along ``dim`` by ``index``; the gradient scatter-adds back."""

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
        zeros = wrap(xp.zeros(ctx.shape, dtype=g._data.dtype))
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
    """``x`` plus ``src`` added at ``index`` along ``dim``; src's gradient gathers back."""

    _backward_name = "ScatterAddBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, dim: int, index: Tensor, src: Tensor) -> Any:
        ctx.dim, ctx.index, ctx.src_shape = dim, index, src._data.shape
        out, idx = _scatter_target(x, dim, index)
        values = _src_block(src, idx).astype(out.dtype, copy=False)
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
        ctx.dim, ctx.index = dim, index
        ctx.src_shape = src._data.shape if isinstance(src, Tensor) else None
        out, idx = _scatter_target(x, dim, index)
        values = _src_block(src, idx) if isinstance(src, Tensor) else src
        out[_key(idx, dim)] = values
        return out.reshape(x._data.shape)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None, None, Any]:
        nx, _, _, ns = ctx.needs_input_grad
        gx = ScatterValue.apply(g, ctx.dim, ctx.index, 0.0) if nx else None
        gsrc = _pad_to(Gather.apply(g, ctx.dim, ctx.index), ctx.src_shape) if ns else None
        return gx, None, None, gsrc


class ScatterValue(Scatter):
    """Scatter of a number (``value``) rather than a tensor: PyTorch's other grad_fn name."""

    _backward_name = "ScatterBackward1"


def _check_scatter(name: str, x: Tensor, dim: int, index: Tensor, src: Any) -> int:
    """Validate a scatter's index against ``x`` and ``src`` as PyTorch does; the wrapped dim."""
    d = _check_index(name, x, dim, index)
    ins, xs = index._data.shape, x._data.shape
    if isinstance(src, Tensor):
        ss = src._data.shape
        if _exceeds_self(ins, xs, d) or any(a > b for a, b in zip(ins, ss)):
            raise RuntimeError(
                f"Expected index {list(ins)} to be no larger than self {list(xs)} apart from "
                f"dimension {d} and to be no larger size than src {list(ss)}"
            )
    elif _exceeds_self(ins, xs, d):
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
    """In-place :func:`scatter_add`."""
    return apply_inplace(x, "scatter_add_", lambda s: scatter_add(s, dim, index, src), src)


def scatter_(x: Tensor, dim: int, index: Tensor, src: Any = None, value: Any = None) -> Tensor:
    """In-place :func:`scatter`."""
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
    """``x[key]`` for a precomputed advanced-indexing key; the gradient adds back into zeros."""

    _backward_name = "IndexSelectBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, dim: int, key: tuple[Any, ...]) -> Any:
        ctx.key, ctx.shape = key, x._data.shape
        return x._data[key]

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None, None]:
        return IndexAddInto.apply(g, ctx.shape, ctx.key, False), None, None


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


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1) -> Tensor:
    """``input`` with ``alpha * source``'s slices along ``dim`` added at the rows in ``index``
    (repeated indices accumulate)."""
    d = wrap_dim(dim, max(input._data.ndim, 1))
    if index._data.ndim > 1:
        raise IndexError("index_add_(): Index is supposed to be a vector")
    if index._data.dtype.name not in ("int64", "int32"):
        raise IndexError("index_add_(): Expected dtype int32/int64 for index but got: "
                         f"{index.dtype}".replace("autogradcli.", "torch."))  # fmt: skip
    n = input._data.shape[d] if input._data.ndim else 1
    idx = _as1d(index._data)
    if source._data.ndim and source._data.shape[d] != idx.size:
        raise RuntimeError(
            f"index_add_(): Number of indices ({idx.size}) should be equal to source.size(dim): "
            f"({source._data.shape[d]}), for dim: {d}"
        )
    if idx.size and bool(((idx < -n) | (idx >= n)).any()):
        bad = int(idx[(idx < -n) | (idx >= n)][0])
        raise IndexError(f"index out of range in self: index {bad} is out of bounds for size {n}")
    key = (slice(None),) * d + (idx,)
    added = source if alpha == 1 else source * alpha
    return input + IndexAddInto.apply(added, input._data.shape, key, False)


def index_add_(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1) -> Tensor:
    """In-place :func:`index_add`."""
    return apply_inplace(
        input, "index_add_", lambda s: index_add(s, dim, index, source, alpha=alpha), source
    )


def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """``input`` with its slices along ``dim`` at ``index`` replaced by ``source``'s."""
    from .indexing import index_put

    d = wrap_dim(dim, max(input._data.ndim, 1))
    if index._data.ndim > 1:
        raise IndexError(
            f"index_copy_(): Index should have dimension 1 or 0 (got {index._data.ndim})"
        )
    if index._data.dtype.name != "int64":
        raise RuntimeError(
            "index_copy_(): Expected a long tensor for index, but got "
            f"{scalar_type_name(index._data.dtype)}"
        )
    if source._data.ndim and source._data.shape[d] != index._data.size:
        raise IndexError(
            f"index_copy_(): Number of indices ({index._data.size}) should be equal to "
            f"source.size(dim) ({source._data.shape[d]})"
        )
    return index_put(input, (slice(None),) * d + (index.reshape(-1),), source)


def index_copy_(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """In-place :func:`index_copy`."""
    return apply_inplace(input, "index_copy_", lambda s: index_copy(s, dim, index, source), source)


def take(input: Tensor, index: Tensor) -> Tensor:
    """The entries of ``input`` (read as 1-D) at ``index``, in ``index``'s shape."""
    n = input._data.size
    idx = index._data
    if idx.size and bool(((idx < -n) | (idx >= n)).any()):
        bad = int(idx[(idx < -n) | (idx >= n)].reshape(-1)[0])
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} elements.")
    return input.reshape(-1)[index]


def index_fill(input: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """``input`` with its slices along ``dim`` at ``index`` set to ``value``."""
    from .indexing import index_put

    d = wrap_dim(dim, max(input._data.ndim, 1))
    return index_put(input, (slice(None),) * d + (index.reshape(-1),), value)


def index_fill_(input: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """In-place :func:`index_fill`."""
    return apply_inplace(input, "index_fill_", lambda s: index_fill(s, dim, index, value), value)


TENSOR_METHODS: dict[str, Any] = {
    "take": take,
    "index_fill": index_fill,
    "index_fill_": index_fill_,
    "index_copy": index_copy,
    "index_copy_": index_copy_,
    "index_add": index_add,
    "index_add_": index_add_,
    "gather": gather,
    "scatter": scatter,
    "scatter_": scatter_,
    "scatter_add": scatter_add,
    "scatter_add_": scatter_add_,
    "index_select": index_select,
    "take_along_dim": take_along_dim,
}
