"""Shape ops: broadcasting (expand, sum_to), reshape/view, transpose/permute, squeeze/unsqueeze.

Views return numpy/cupy views, so they share memory and the version counter with their base.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autograd.function import Function
from ..autograd.gradient_ops import Expand
from ..tensor.dtype import to_dtype
from ..tensor.storage import array_offset
from ..tensor.tensor import Tensor, wrap_view
from ._util import normalize_dims, scalar_type_name, wrap_dim


def _shape_arg(shape: tuple[Any, ...]) -> tuple[int, ...]:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return tuple(int(s) for s in shape)


def expand(t: Tensor, *shape: Any) -> Tensor:
    shape = _shape_arg(shape)
    if t._data.shape == shape:
        return t
    return Expand.apply(t, shape)


def broadcast_to(t: Tensor, shape: Any) -> Tensor:
    return expand(t, *shape)


def _infer_shape(shape: tuple[int, ...], numel: int) -> tuple[int, ...]:
    if -1 not in shape:
        n = 1
        for s in shape:
            n *= s
        if n != numel:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        return shape
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            known *= s
    if known == 0 or numel % known:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(numel // known if s == -1 else s for s in shape)


def _viewed(arr: Any, shape: tuple[int, ...]) -> Any:
    """``arr`` as ``shape`` without a copy, or torch's error when its strides don't allow it
    (numpy 2.5 deprecates setting ``.shape``: ``reshape(copy=False)`` says it instead)."""
    if arr.flags.c_contiguous:
        return arr.reshape(shape)  # always a view
    try:
        if type(arr) is np.ndarray:
            return arr.reshape(shape, copy=False)
        out = arr.view()
        out.shape = shape  # cupy: raises AttributeError where a copy would be needed
        return out
    except (ValueError, AttributeError):
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least "
            "one dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        ) from None


class Reshape(Function):
    _backward_name = "ViewBackward0"

    @staticmethod
    def forward(ctx: Any, t: Tensor, shape: tuple[int, ...], view_only: bool) -> Any:
        arr = t._data
        ctx.in_shape = arr.shape
        shape = _infer_shape(shape, arr.size)
        if view_only:
            return wrap_view(_viewed(arr, shape), t)
        out = arr.reshape(shape)
        return wrap_view(out, t) if out.base is not None else out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None, None]:
        return g.reshape(ctx.in_shape), None, None


def reshape(t: Tensor, *shape: Any) -> Tensor:
    return Reshape.apply(t, _shape_arg(shape), False)


def view(t: Tensor, *shape: Any) -> Tensor:
    """``t`` with another shape, sharing its memory; ``view(dtype)`` reinterprets the bits."""
    if len(shape) == 1 and not isinstance(shape[0], (int, tuple, list)):
        return view_dtype(t, shape[0])
    return Reshape.apply(t, _shape_arg(shape), True)


def view_dtype(t: Tensor, dtype: Any) -> Tensor:
    """PyTorch's ``view(dtype)``: the same memory read as ``dtype``. With another element size
    the last dim is scaled by the size ratio; the result is not differentiable."""
    arr = t._data
    new = to_dtype(dtype).np
    old_size, new_size = arr.itemsize, new.itemsize
    if old_size != new_size:
        names = (
            f"{scalar_type_name(arr.dtype)} as {scalar_type_name(new)} (different element sizes)"
        )
        strides = [s // old_size for s in arr.strides]
        if arr.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 to view {names}")
        if old_size < new_size:
            ratio = new_size // old_size
            if arr.shape[-1] % ratio:
                raise RuntimeError(
                    f"self.size(-1) must be divisible by {ratio} to view {names}, but got "
                    f"{arr.shape[-1]}"
                )
        if strides[-1] != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 to view {names}, but got {strides[-1]}")
        if old_size < new_size:
            offset = array_offset(arr)
            if offset % ratio:
                raise RuntimeError(
                    f"self.storage_offset() must be divisible by {ratio} to view {names}, but "
                    f"got {offset}"
                )
            for i, stride in enumerate(strides[:-1]):
                if stride % ratio:
                    raise RuntimeError(
                        f"self.stride({i}) must be divisible by {ratio} to view {names}, but "
                        f"got {stride}"
                    )
    return wrap_view(arr.view(new), t)


def flatten(t: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    shape = t._data.shape
    if not shape:
        return reshape(t, 1)
    s, e = wrap_dim(start_dim, len(shape)), wrap_dim(end_dim, len(shape))
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    n = 1
    for d in shape[s : e + 1]:
        n *= d
    return reshape(t, shape[:s] + (n,) + shape[e + 1 :])


def unflatten(t: Tensor, dim: int, sizes: tuple[int, ...]) -> Tensor:
    shape = t._data.shape
    d = wrap_dim(dim, len(shape))
    return reshape(t, shape[:d] + tuple(sizes) + shape[d + 1 :])


class Permute(Function):
    _backward_name = "PermuteBackward0"

    @staticmethod
    def forward(ctx: Any, t: Tensor, dims: tuple[int, ...]) -> Any:
        arr = t._data
        ctx.dims = dims
        return wrap_view(arr.transpose(dims), t)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None]:
        inverse = [0] * len(ctx.dims)
        for i, d in enumerate(ctx.dims):
            inverse[d] = i
        return permute(g, *inverse), None


def permute(t: Tensor, *dims: Any) -> Tensor:
    dims = _shape_arg(dims)
    n = t._data.ndim
    if len(dims) != n:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {n} is not equal "
            f"to len(dims) = {len(dims)}"
        )
    dims = tuple(wrap_dim(d, n) for d in dims)
    if len(set(dims)) != n:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return Permute.apply(t, dims)


def transpose(t: Tensor, dim0: int, dim1: int) -> Tensor:
    n = t._data.ndim
    if n == 0:
        return t
    dims = list(range(n))
    d0, d1 = wrap_dim(dim0, n), wrap_dim(dim1, n)
    dims[d0], dims[d1] = dims[d1], dims[d0]
    return Permute.apply(t, tuple(dims))


def t(x: Tensor) -> Tensor:
    if x._data.ndim > 2:
        raise RuntimeError(
            f"t() expects a tensor with <= 2 dimensions, but self is {x._data.ndim}D"
        )
    return transpose(x, 0, 1) if x._data.ndim == 2 else x


def squeeze(x: Tensor, dim: Any = None) -> Tensor:
    shape = x._data.shape
    dims = normalize_dims(dim, len(shape)) if shape else None
    if dims is None:
        new = tuple(s for s in shape if s != 1)
    else:
        new = tuple(s for i, s in enumerate(shape) if not (i in dims and s == 1))
    return reshape(x, new) if new != shape else Reshape.apply(x, shape, True)


def unsqueeze(x: Tensor, dim: int) -> Tensor:
    shape = x._data.shape
    d = wrap_dim(dim, len(shape) + 1)
    return Reshape.apply(x, shape[:d] + (1,) + shape[d:], True)


def expand_as(x: Tensor, other: Tensor) -> Tensor:
    return expand(x, other._data.shape)


def view_as(x: Tensor, other: Tensor) -> Tensor:
    return view(x, other._data.shape)


def reshape_as(x: Tensor, other: Tensor) -> Tensor:
    return reshape(x, other._data.shape)


TENSOR_METHODS: dict[str, Any] = {
    "reshape": reshape,
    "view": view,
    "view_as": view_as,
    "reshape_as": reshape_as,
    "flatten": flatten,
    "unflatten": unflatten,
    "permute": permute,
    "transpose": transpose,
    "t": t,
    "T": property(lambda self: permute(self, *reversed(range(self._data.ndim)))),
    "mT": property(lambda self: transpose(self, -2, -1)),
    "squeeze": squeeze,
    "unsqueeze": unsqueeze,
    "expand": expand,
    "expand_as": expand_as,
    "broadcast_to": broadcast_to,
}
