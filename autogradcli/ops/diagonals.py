"""``diag`` (a vector to a diagonal matrix and back), ``diagonal``, ``trace``, and the vector
products ``dot`` and ``outer``."""

from __future__ import annotations

from typing import Any

from ..autograd.function import Function
from ..tensor.tensor import Tensor
from ._util import array_module, scalar_type_name, wrap, wrap_dim

__all__ = ["block_diag", "diag", "diag_embed", "diagflat", "diagonal", "dot", "ger", "outer"]
__all__ += ["trace"]


class DiagEmbed(Function):
    """A 1-D input placed on diagonal ``k`` of a square matrix; the gradient reads it back."""

    _backward_name = "DiagEmbedBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, k: int) -> Any:
        ctx.k = k
        xp = array_module(x._data)
        return xp.diag(x._data, k)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None]:
        return DiagOf.apply(g, ctx.k), None


class DiagOf(Function):
    """Diagonal ``k`` of a matrix as a new vector; the gradient is placed back on it."""

    _backward_name = "DiagonalBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, k: int) -> Any:
        ctx.k, ctx.shape = k, x._data.shape
        xp = array_module(x._data)
        return xp.diagonal(x._data, k).copy()

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None]:
        from .padding import pad

        square = DiagEmbed.apply(g, ctx.k)  # (n + |k|) square; crop or pad it to the input
        rows, cols = square.shape
        want_r, want_c = ctx.shape
        square = square[:want_r, :want_c]
        if rows < want_r or cols < want_c:
            square = pad(square, (0, max(0, want_c - cols), 0, max(0, want_r - rows)))
        return square, None


def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """PyTorch's ``torch.diag``: vector -> diagonal matrix, matrix -> diagonal vector."""
    if input._data.ndim not in (1, 2):
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input._data.ndim}D")
    cls = DiagEmbed if input._data.ndim == 1 else DiagOf
    return cls.apply(input, int(diagonal))


class Dot(Function):
    """The inner product of two 1-D tensors of the same length and dtype."""

    _backward_name = "DotBackward0"

    @staticmethod
    def forward(ctx: Any, a: Tensor, b: Tensor) -> Any:
        ctx.save_for_backward(a, b)
        xp = array_module(a._data)
        return xp.asarray(xp.dot(a._data, b._data))

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, Any]:
        a, b = ctx.saved_tensors
        ga = g * b if ctx.needs_input_grad[0] else None
        gb = g * a if ctx.needs_input_grad[1] else None
        return ga, gb


def dot(input: Tensor, tensor: Tensor) -> Tensor:
    """``torch.dot``: 1-D tensors only, equal lengths and dtypes, as PyTorch requires."""
    a, b = input._data, tensor._data
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] to "
            f"have the same number of elements, but got {a.shape[0]} and {b.shape[0]} elements "
            "respectively"
        )
    if a.dtype != b.dtype:
        raise RuntimeError(
            "dot : expected both vectors to have same dtype, but found "
            f"{scalar_type_name(a.dtype)} and "
            f"{scalar_type_name(b.dtype)}"
        )
    return Dot.apply(input, tensor)


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal ``offset`` of the (dim1, dim2) planes, as the last dim of the result."""
    from .axes import movedim

    nd = input._data.ndim
    d1, d2 = wrap_dim(dim1, nd), wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    planes = movedim(input, (d1, d2), (-2, -1))
    rows, cols = planes._data.shape[-2:]
    first_row, first_col = max(-offset, 0), max(offset, 0)
    n = max(0, min(rows - first_row, cols - first_col))
    xp = array_module(input._data)
    r = wrap(xp.arange(first_row, first_row + n))
    c = wrap(xp.arange(first_col, first_col + n))
    return planes[..., r, c]


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Matrices (in dims ``dim1``, ``dim2`` of the result) with the last dim of ``input`` on
    their diagonal ``offset``, zeros elsewhere."""
    from .axes import movedim
    from .linalg import matmul

    n = input._data.shape[-1] + abs(offset)
    xp = array_module(input._data)
    rows = xp.arange(n - abs(offset)) + max(-offset, 0)
    cols = xp.arange(n - abs(offset)) + max(offset, 0)
    place = xp.zeros((n - abs(offset), n, n), dtype=input._data.dtype)
    place[xp.arange(n - abs(offset)), rows, cols] = 1
    out = matmul(input, wrap(place.reshape(n - abs(offset), n * n)))
    out = out.reshape(*input._data.shape[:-1], n, n)
    nd = out._data.ndim
    return movedim(out, (nd - 2, nd - 1), (wrap_dim(dim1, nd), wrap_dim(dim2, nd)))


def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """A square matrix with the flattened ``input`` on diagonal ``offset``."""
    return diag(input.reshape(-1), offset)


def block_diag(*tensors: Tensor) -> Tensor:
    """The tensors (0-, 1- or 2-D) as blocks along the diagonal of one matrix."""
    from .join import cat
    from .padding import pad

    blocks = [t.reshape(1, -1) if t.ndim < 2 else t for t in tensors]
    width = sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        rows.append(pad(b, (left, width - left - b.shape[1])))
        left += b.shape[1]
    return cat(rows, 0)


def fill_diagonal_(input: Tensor, fill_value: Any, wrap: bool = False) -> Tensor:
    """Fill the main diagonal of a matrix (or of an all-equal-sides tensor) in place; ``wrap``
    starts again below a tall matrix's square, after one skipped row."""
    from .inplace import setitem

    shape = input._data.shape
    if input._data.ndim < 2 or (input._data.ndim > 2 and len(set(shape)) > 1):
        raise RuntimeError("all dimensions of input must be of equal length" if input._data.ndim > 2
                           else "dimensions must larger than 1")  # fmt: skip
    xp = array_module(input._data)
    n = min(shape)
    idx = [xp.arange(n)] * input._data.ndim
    if wrap and input._data.ndim == 2 and shape[0] > shape[1] + 1:
        rows = xp.arange(0, shape[0])
        rows = rows[(rows % (shape[1] + 1)) < shape[1]]
        idx = [rows, rows % (shape[1] + 1)]
    setitem(input, tuple(_index_tensor(i) for i in idx), fill_value)
    return input


def _index_tensor(arr: Any) -> Tensor:
    """``wrap`` (shadowed inside ``fill_diagonal_`` by its ``wrap`` argument)."""
    return wrap(arr)


def trace(input: Tensor) -> Tensor:
    """The sum of the main diagonal of a matrix."""
    if input._data.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input._data.ndim}")
    return diagonal(input).sum()


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """The outer product ``input[i] * vec2[j]`` of two vectors."""
    for name, v in (("self", input), ("vec2", vec2)):
        if v._data.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {v._data.ndim}-D")
    return input.reshape(-1, 1) * vec2.reshape(1, -1)


ger = outer

TENSOR_METHODS: dict[str, Any] = {name: globals()[name] for name in __all__ if name != "block_diag"}
TENSOR_METHODS["fill_diagonal_"] = fill_diagonal_
