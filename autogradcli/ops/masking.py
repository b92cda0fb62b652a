"""Masking ops: masked_fill (and its in-place spelling), tril/triu and one_hot."""

from __future__ import annotations

from typing import Any

from ..autograd.function import Function
from ..autograd.grad_mode import STATE
from ..autograd.gradient_ops import sum_to
from ..backend.select import where as select_where
from ..tensor.tensor import Tensor, wrap
from ._util import array_module
from .clamp_where import where
from .inplace import apply_inplace

__all__ = [
    "masked_fill",
    "masked_select",
    "one_hot",
    "tril",
    "tril_indices",
    "triu",
    "triu_indices",
]


class MaskedFill(Function):
    """``value`` where ``mask``, else ``x``; a tensor ``value`` gets the masked gradient sum."""

    _backward_name = "MaskedFillBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, mask: Tensor, value: Any) -> Any:
        xp = array_module(x._data)
        v = value._data if isinstance(value, Tensor) else value
        ctx.save_for_backward(mask)
        arr, m = x._data, mask._data
        ctx.x_shape = arr.shape
        return select_where(xp, m, v, arr).astype(arr.dtype, copy=False)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None, Any]:
        (mask,) = ctx.saved_tensors
        nx, _, nv = ctx.needs_input_grad
        ga, m = g._data, mask._data
        if nx and not nv and not STATE.enabled and ga.shape == ctx.x_shape:
            gx = select_where(array_module(ga), m, 0, ga)  # no create_graph: on the arrays
            if gx.shape == ga.shape:
                return wrap(gx), None, None
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
    """In-place :func:`masked_fill`."""
    return apply_inplace(x, "masked_fill_", lambda s: masked_fill(s, mask, value), value)


class Tril(Function):
    """The lower (or, with ``upper``, upper) triangle; the gradient is masked the same way."""

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
    """:class:`Tril` with ``upper=True`` under PyTorch's grad_fn name."""

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


def tril_(x: Tensor, diagonal: int = 0) -> Tensor:
    """In-place :func:`tril`."""
    return apply_inplace(x, "tril_", lambda s: tril(s, diagonal))


def triu_(x: Tensor, diagonal: int = 0) -> Tensor:
    """In-place :func:`triu`."""
    return apply_inplace(x, "triu_", lambda s: triu(s, diagonal))


def _triangle_indices(row: int, col: int, offset: int, upper: bool, dtype: Any, device: Any):
    from ..tensor.factory import ones

    mask = ones(row, col, dtype="bool", device=device)
    mask = triu(mask, offset) if upper else tril(mask, offset)
    rows, cols = array_module(mask._data).nonzero(mask._data)
    out = array_module(mask._data).stack([rows, cols])
    return wrap(out).to("int64" if dtype is None else dtype)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None,
                 layout: Any = None) -> Tensor:  # fmt: skip
    """The (2, N) row and column indices of the lower triangle of a row x col matrix."""
    return _triangle_indices(row, col, offset, False, dtype, device)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None,
                 layout: Any = None) -> Tensor:  # fmt: skip
    """The (2, N) row and column indices of the upper triangle of a row x col matrix."""
    return _triangle_indices(row, col, offset, True, dtype, device)


def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    """The entries of ``input`` where ``mask`` (broadcast with it) is True, as a 1-D tensor."""
    if mask._data.dtype.kind != "b":
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    from ..ops.shape import broadcast_to

    shape = array_module(input._data).broadcast_shapes(input._data.shape, mask._data.shape)
    return broadcast_to(input, shape)[broadcast_to(mask, shape)]


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
    return wrap((arr[..., None] == xp.arange(num_classes)).astype(arr.dtype))


TENSOR_METHODS: dict[str, Any] = {
    "masked_fill": masked_fill,
    "masked_fill_": masked_fill_,
    "tril": tril,
    "triu": triu,
    "tril_": tril_,
    "masked_select": masked_select,
    "triu_": triu_,
}
