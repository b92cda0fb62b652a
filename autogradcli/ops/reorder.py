"""Ops that rearrange entries without selecting by index: narrow, repeat, flip and roll; each
backward is the op's own inverse (or a sum over the tiles, for repeat)."""

from __future__ import annotations

from typing import Any

from ..autograd.function import Function
from ..tensor.tensor import Tensor
from ._util import array_module, scalar_type_name, wrap, wrap_dim
from .gather_scatter import index_select
from .indexing import getitem

__all__ = ["flip", "fliplr", "flipud", "narrow", "ravel", "repeat", "repeat_interleave", "roll"]
__all__ += ["diff", "rot90", "select", "tile"]


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
    """``x`` tiled by ``sizes``; the gradient sums over the tiles."""

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
    """``dims`` (an int or a sequence) wrapped to ``ndim``; PyTorch's error for repeats."""
    dims = tuple(dims) if isinstance(dims, (list, tuple)) else (dims,)
    out = tuple(wrap_dim(int(d), ndim) for d in dims)
    for i, d in enumerate(out):
        if d in out[:i]:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return out


class Flip(Function):
    """Entries reversed along ``dims``; its own adjoint."""

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
    """A cyclic shift; the gradient shifts back."""

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


def _repeat_counts(repeats: Tensor, n: int) -> Any:
    """The per-entry counts of a repeats tensor, checked as PyTorch checks them."""
    arr = repeats._data
    if arr.dtype.kind not in "iu":
        kind = scalar_type_name(arr.dtype)
        raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for '{kind}'")
    if arr.ndim > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    counts = arr.reshape(-1)
    if counts.size == 1 and n != 1:
        counts = array_module(arr).full((n,), counts[0], dtype=counts.dtype)
    if counts.size != n:
        raise RuntimeError(
            "repeats must have the same size as input along dim, but got "
            f"repeats.size(0) = {counts.size} and input.size(0) = {n}"
        )
    if n and bool((counts < 0).any()):
        raise RuntimeError("repeats can not be negative")
    return counts


def repeat_interleave(
    input: Tensor, repeats: Any = None, dim: int | None = None, *, output_size: int | None = None
) -> Tensor:
    """Each entry of ``input`` (flattened when ``dim`` is None) ``repeats`` times in a row
    along ``dim``; with only a 1-D count tensor, the indices 0, 1, ... repeated by it."""
    if repeats is None:
        counts = _repeat_counts(input, input._data.size)
        xp = array_module(counts)
        return wrap(xp.repeat(xp.arange(counts.size, dtype=counts.dtype), counts))
    if dim is None:
        input, dim = input.reshape(-1), 0
    d = wrap_dim(dim, max(input._data.ndim, 1))
    if input._data.ndim == 0:
        input = input.reshape(1)
    n = input._data.shape[d]
    if isinstance(repeats, Tensor):
        counts = _repeat_counts(repeats, n)
        total = int(counts.sum())
    else:
        if int(repeats) < 0:
            raise RuntimeError("Repeats must be non-negative")
        total = n * int(repeats)
    if output_size is not None and output_size != total:
        raise RuntimeError(
            f"repeat_interleave: Invalid output_size, expected {total} but got {output_size}"
        )
    if isinstance(repeats, Tensor):
        xp = array_module(counts)
        index = wrap(xp.repeat(xp.arange(n, dtype="int64"), counts))
        return index_select(input, d, index)
    shape = input._data.shape
    tiled = input.unsqueeze(d + 1).expand(*shape[: d + 1], int(repeats), *shape[d + 1 :])
    return tiled.reshape(*shape[:d], total, *shape[d + 1 :])


def select(input: Tensor, dim: int, index: int) -> Tensor:
    """The slice of ``input`` at ``index`` along ``dim`` (that dim removed), a view."""
    nd = input._data.ndim
    if nd == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, nd)
    n = input._data.shape[d]
    if not -n <= int(index) < n:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size "
            f"{list(input._data.shape)} at dimension {d}"
        )
    return getitem(input, (slice(None),) * d + (int(index),))


def rot90(input: Tensor, k: int = 1, dims: Any = (0, 1)) -> Tensor:
    """``input`` rotated by 90 degrees ``k`` times in the plane of ``dims`` (from the first
    towards the second)."""
    from .axes import swapdims

    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input._data.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input._data.ndim}")
    d0, d1 = (wrap_dim(d, input._data.ndim) for d in dims)
    if d0 == d1:
        raise RuntimeError(
            f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}"
        )
    k = k % 4
    if k == 1:
        return swapdims(flip(input, d1), d0, d1)
    if k == 2:
        return flip(input, d0, d1)
    if k == 3:
        return flip(swapdims(input, d0, d1), d1)
    return input.clone()


def diff(
    input: Tensor, n: int = 1, dim: int = -1, prepend: Any = None, append: Any = None
) -> Tensor:
    """The ``n``-th forward difference along ``dim`` (after joining ``prepend``/``append``)."""
    from .join import cat

    d = wrap_dim(dim, max(input._data.ndim, 1))
    parts = [p for p in (prepend, input, append) if p is not None]
    x = cat(parts, d) if len(parts) > 1 else input
    for _ in range(n):
        size = x._data.shape[d]
        if size == 0:
            break
        later, earlier = narrow(x, d, 1, size - 1), narrow(x, d, 0, size - 1)
        x = later ^ earlier if x._data.dtype.kind == "b" else later - earlier
    return x


def tile(input: Tensor, *dims: Any) -> Tensor:
    """``input`` repeated ``dims[i]`` times along each dim; missing leading dims count as 1."""
    if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
        dims = tuple(dims[0])
    return repeat(input, *((1,) * (input._data.ndim - len(dims)) + dims))


def fliplr(input: Tensor) -> Tensor:
    """``input`` reversed along dim 1 (left/right)."""
    if input._data.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, 1)


def flipud(input: Tensor) -> Tensor:
    """``input`` reversed along dim 0 (up/down)."""
    if input._data.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, 0)


def ravel(input: Tensor) -> Tensor:
    """``input`` flattened to one dim (a view when it can be)."""
    return input.reshape(-1)


def unfold(input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """The windows of ``size`` entries every ``step`` along ``dimension``: that dim becomes the
    window count and a new last dim holds each window (``Tensor.unfold``)."""
    from .axes import movedim
    from .join import stack

    nd = input._data.ndim
    d = wrap_dim(dimension, max(nd, 1))
    n = input._data.shape[d] if nd else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if nd == 0:
        return input.reshape(1)
    windows = [narrow(input, d, i * step, size) for i in range((n - size) // step + 1)]
    return movedim(stack(windows, d), d + 1, -1)


TENSOR_METHODS: dict[str, Any] = {
    "rot90": rot90,
    "diff": diff,
    "select": select,
    "tile": tile,
    "fliplr": fliplr,
    "flipud": flipud,
    "ravel": ravel,
    "unfold": unfold,
    "repeat_interleave": repeat_interleave,
    "narrow": narrow,
    "repeat": repeat,
    "flip": flip,
    "roll": roll,
}
