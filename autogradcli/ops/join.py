"""Joining and splitting: ``cat``/``stack`` and their adjoints ``split``/``chunk``/``unbind``.

``cat``'s backward is ``split`` and ``stack``'s is ``unbind`` (and the other way round), so
every gradient is built from these same Functions and double backward works. The pieces that
``split``, ``chunk`` and ``unbind`` return are views of their input, as in PyTorch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..autograd.function import Function
from ..autograd.grad_mode import STATE
from ..backend import device_of
from ..tensor.dtype import result_type
from ..tensor.tensor import Tensor, wrap_view
from ._util import array_module, wrap_dim

__all__ = ["cat", "chunk", "concat", "concatenate", "hstack", "split", "stack", "unbind", "vstack"]


def _check_same_device(tensors: Sequence[Tensor]) -> None:
    """PyTorch's error when the tensors live on different devices."""
    first = tensors[0]._data
    kind = type(first)
    for t in tensors[1:]:  # numpy arrays are all on the CPU: no device to compare
        arr = t._data
        if type(arr) is not kind or (kind is not np.ndarray and device_of(arr) != device_of(first)):
            raise RuntimeError(
                "Expected all tensors to be on the same device, but found at least two devices, "
                f"{device_of(first)} and {device_of(t._data)}!"
            )


def _tensor_list(tensors: Any, name: str) -> list[Tensor]:
    if isinstance(tensors, Tensor):
        raise TypeError(
            f"{name}(): argument 'tensors' must be tuple of Tensors, not Tensor "
            "(pass a list or tuple of tensors)"
        )
    out = list(tensors)
    for i, t in enumerate(out):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"{name}(): expected Tensor as element {i} in argument 0, but got "
                f"{type(t).__name__}"
            )
    return out


class Cat(Function):
    _backward_name = "CatBackward0"

    @staticmethod
    def forward(ctx: Any, dim: int, *tensors: Tensor) -> Any:
        arrays = [t._data for t in tensors]
        ctx.dim = dim
        ctx.sizes = sizes = [a.shape[dim] if a.ndim else 0 for a in arrays]
        # 1-D empties are left out (only a size of 0 can be one)
        ctx.skipped = [a.ndim == 1 and not a.shape[0] for a in arrays] if 0 in sizes else None
        kept = arrays
        if ctx.skipped is not None:
            kept = [a for a, s in zip(arrays, ctx.skipped) if not s] or arrays[:1]
        if len({a.dtype for a in arrays}) > 1:
            dt = result_type(*tensors)
            kept = [a.astype(dt) for a in kept]
        xp = array_module(kept[0])
        return xp.concatenate(kept, axis=dim) if len(kept) > 1 else kept[0].copy()

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, ...]:
        skipped = ctx.skipped or (False,) * len(ctx.sizes)
        live = [s for s, skip in zip(ctx.sizes, skipped) if not skip]
        if len(live) < 2:
            pieces = iter((g,))
        elif STATE.enabled:  # a graph of the gradient: through Split
            pieces = iter(Split.apply(g, live, ctx.dim))
        else:  # what Split gives unrecorded, without its node
            pieces = iter(_pieces(g, live, ctx.dim))
        grads: list[Any] = [None]
        for need, skip in zip(ctx.needs_input_grad[1:], skipped):
            piece = g.new_empty((0,)) if skip else next(pieces)  # a 1-D empty's is empty, as torch
            grads.append(piece if need else None)
        return tuple(grads)


def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Concatenate ``tensors`` along ``dim``; shapes must agree elsewhere (1-D empties are skipped)."""
    ts = _tensor_list(tensors, "cat")
    if not ts:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    _check_same_device(ts)
    for i, t in enumerate(ts):
        if t._data.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    kept = [(i, t) for i, t in enumerate(ts) if not (t._data.ndim == 1 and t._data.shape[0] == 0)]
    ref = kept[0][1] if kept else ts[0]
    d = wrap_dim(dim, ref._data.ndim)
    shape = ref._data.shape
    key = shape[:d] + shape[d + 1 :]  # what every shape must be, dim d left out
    for i, t in kept:
        other = t._data.shape
        if len(other) != len(shape) or other[:d] + other[d + 1 :] != key:
            _refuse_shapes(ts, shape, other, i, d)
    return Cat.apply(d, *ts)


def _refuse_shapes(ts: list[Tensor], shape: tuple, other: tuple, i: int, d: int) -> None:
    """torch's error for tensor ``i``'s shape ``other`` against the first's ``shape``."""
    if len(other) != len(shape):
        raise RuntimeError(
            f"Tensors must have same number of dimensions: got {len(shape)} and {len(other)}"
        )
    for k, (a, b) in enumerate(zip(shape, other)):
        if k != d and a != b:
            raise RuntimeError(
                f"Sizes of tensors must match except in dimension {d}. Expected size {a} but "
                f"got size {b} for tensor number {i} in the list. (shapes: "
                f"{[list(x._data.shape) for x in ts]})"
            )


concat = cat
concatenate = cat


class Stack(Function):
    _backward_name = "StackBackward0"

    @staticmethod
    def forward(ctx: Any, dim: int, *tensors: Tensor) -> Any:
        arrays = [t._data for t in tensors]
        if len({a.dtype for a in arrays}) > 1:
            dt = result_type(*tensors)
            arrays = [a.astype(dt) for a in arrays]
        ctx.dim = dim
        return array_module(arrays[0]).stack(arrays, axis=dim)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, ...]:
        pieces = Unbind.apply(g, ctx.dim)
        if not isinstance(pieces, tuple):
            pieces = (pieces,)
        return (None,) + tuple(p if n else None for p, n in zip(pieces, ctx.needs_input_grad[1:]))


def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Join equally shaped ``tensors`` along a new dimension ``dim``."""
    ts = _tensor_list(tensors, "stack")
    if not ts:
        raise RuntimeError("stack expects a non-empty TensorList")
    _check_same_device(ts)
    shape = ts[0]._data.shape
    for i, t in enumerate(ts[1:], 1):
        if t._data.shape != shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(shape)} at entry 0 "
                f"and {list(t._data.shape)} at entry {i}"
            )
    return Stack.apply(wrap_dim(dim, len(shape) + 1), *ts)


def hstack(tensors: Sequence[Tensor]) -> Tensor:
    """Concatenate along dim 1 (dim 0 for 1-D tensors)."""
    ts = _tensor_list(tensors, "hstack")
    return cat(ts, 0 if ts and ts[0]._data.ndim == 1 else 1)


def vstack(tensors: Sequence[Tensor]) -> Tensor:
    """Concatenate along dim 0 after making 0-D/1-D tensors rows."""
    ts = _tensor_list(tensors, "vstack")
    return cat([t.reshape(1, -1) if t._data.ndim < 2 else t for t in ts], 0)


class Split(Function):
    """Views of consecutive pieces of ``x`` along ``dim`` with the given sizes."""

    _backward_name = "SplitBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, sizes: Sequence[int], dim: int) -> Any:
        ctx.dim = dim
        return _pieces(x, sizes, dim)

    @staticmethod
    def backward(ctx: Any, *grads: Tensor) -> tuple[Any, None, None]:
        return Cat.apply(ctx.dim, *grads), None, None


def _pieces(x: Tensor, sizes: Sequence[int], dim: int) -> tuple[Tensor, ...]:
    """Views of consecutive pieces of ``x`` along ``dim`` with the given sizes."""
    arr = x._data
    out, start = [], 0
    lead = (slice(None),) * dim
    for s in sizes:
        out.append(wrap_view(arr[lead + (slice(start, start + s),)], x))
        start += s
    return tuple(out)


class SplitWithSizes(Split):
    _backward_name = "SplitWithSizesBackward0"


class Unbind(Function):
    """Views of each slice of ``x`` along ``dim`` (that dimension removed)."""

    _backward_name = "UnbindBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, dim: int) -> Any:
        arr = x._data
        ctx.dim = dim
        lead = (slice(None),) * dim
        return tuple(wrap_view(arr[lead + (i, Ellipsis)], x) for i in range(arr.shape[dim]))

    @staticmethod
    def backward(ctx: Any, *grads: Tensor) -> tuple[Any, None]:
        return Stack.apply(ctx.dim, *grads), None


def split(
    x: Tensor, split_size_or_sections: int | Sequence[int], dim: int = 0
) -> tuple[Tensor, ...]:
    """Pieces of ``x`` along ``dim``: of ``split_size`` each (the last may be smaller), or of the
    listed sizes. The pieces are views of ``x``."""
    if x._data.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, x._data.ndim)
    n = x._data.shape[d]
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = [int(s) for s in split_size_or_sections]
        if any(s < 0 for s in sizes) or sum(sizes) != n:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size "
                f"at dimension {d}), but got split_sizes={sizes}"
            )
        return tuple(SplitWithSizes.apply(x, sizes, d))
    size = int(split_size_or_sections)
    if size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={size}")
    if size == 0:
        if n != 0:
            raise RuntimeError(
                f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}"
            )
        return tuple(Split.apply(x, [0], d))
    sizes = [size] * (n // size) + ([n % size] if n % size else [])
    return tuple(Split.apply(x, sizes or [0], d))


def chunk(x: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """At most ``chunks`` views of ``x`` along ``dim``, each of size ceil(n / chunks)."""
    if x._data.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = wrap_dim(dim, x._data.ndim)
    n = x._data.shape[d]
    if n == 0:  # PyTorch gives ``chunks`` empty pieces
        return tuple(Split.apply(x, [0] * chunks, d))
    return split(x, -(-n // chunks), dim)


def unbind(x: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    """The slices of ``x`` along ``dim``, as views with that dimension removed."""
    if x._data.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = wrap_dim(dim, x._data.ndim)
    if x._data.shape[d] == 0:
        return ()
    out = Unbind.apply(x, d)
    return out if isinstance(out, tuple) else (out,)


TENSOR_METHODS: dict[str, Any] = {"split": split, "chunk": chunk, "unbind": unbind}
