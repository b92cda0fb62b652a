"""Matrix products: ``matmul`` (with batching and broadcasting), ``mm``, ``bmm``."""

from __future__ import annotations

from typing import Any

from ..autograd.function import Function
from ..autograd.gradient_ops import sum_to
from ..backend import dots
from ..tensor.tensor import Tensor
from ._util import array_module, binary_operands, operator_method


class MatMul(Function):
    _backward_name = "MmBackward0"

    @staticmethod
    def forward(ctx: Any, a: Tensor, b: Tensor) -> Any:
        x, y, dt = binary_operands(a, b)
        if x.ndim == 0 or y.ndim == 0:
            raise RuntimeError(
                "both arguments to matmul need to be at least 1D, but they are "
                f"{x.ndim}D and {y.ndim}D"
            )
        na, nb = ctx.needs_input_grad
        ctx.save_for_backward(a if nb else None, b if na else None)
        ctx.shapes = (x.shape, y.shape)
        try:
            out = dots.matmul(array_module(x), x, y)
        except ValueError:
            raise RuntimeError(
                f"mat1 and mat2 shapes cannot be multiplied ({_fmt(x.shape)} and {_fmt(y.shape)})"
            ) from None
        return out if dt is None or out.dtype == dt else out.astype(dt)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, Any]:
        a, b = ctx.saved_tensors
        if g._data.dtype.kind == "c":  # the adjoint of a complex product uses conjugates
            from .complex_numbers import conj_grad

            a, b = conj_grad(a), conj_grad(b)
        na, nb = ctx.needs_input_grad
        ga = gb = None
        if na:
            ga = _grad_left(g, b, ctx)
        if nb:
            gb = _grad_right(g, a, ctx)
        return ga, gb


def _fmt(shape: tuple[int, ...]) -> str:
    return "x".join(str(s) for s in shape)


def _grad_left(g: Tensor, b: Tensor, ctx: Any) -> Tensor:
    """d(a @ b)/da for all of matmul's 1-D, 2-D and batched cases."""
    a_shape = ctx.shapes[0]
    if b.ndim == 1:  # a @ v: out[..., i] = sum_k a[..., i, k] v[k]
        return sum_to(g.unsqueeze(-1) * b, a_shape)
    if len(a_shape) == 1:  # v @ B: the 1-D operand acts as a row
        return sum_to(matmul(g.unsqueeze(-2), b.transpose(-1, -2)).squeeze(-2), a_shape)
    return sum_to(matmul(g, b.transpose(-1, -2)), a_shape)


def _grad_right(g: Tensor, a: Tensor, ctx: Any) -> Tensor:
    b_shape = ctx.shapes[1]
    if a.ndim == 1:  # v @ B: out[..., j] = sum_k v[k] B[..., k, j]
        gb = a * g if g.ndim == 0 else a.unsqueeze(-1) * g.unsqueeze(-2)
        return sum_to(gb, b_shape)
    if len(b_shape) == 1:  # A @ v: out[..., i] = sum_k A[..., i, k] v[k]
        return sum_to(a * g.unsqueeze(-1), b_shape)
    return sum_to(matmul(a.transpose(-1, -2), g), b_shape)


class MatVec(MatMul):
    """matrix @ vector (PyTorch's mv)."""

    _backward_name = "MvBackward0"


class Dot(MatMul):
    """vector @ vector (PyTorch's dot)."""

    _backward_name = "DotBackward0"


class BatchedMatMul(MatMul):
    """Batched products (PyTorch's bmm)."""

    _backward_name = "BmmBackward0"


def matmul(input: Tensor, other: Tensor) -> Tensor:
    """``input @ other`` with NumPy's/PyTorch's rules for 1-D, 2-D and batched operands."""
    a, b = input, other
    na = a._data.ndim if isinstance(a, Tensor) else 0
    nb = b._data.ndim if isinstance(b, Tensor) else 0
    if na == 2 and nb == 2:
        return MatMul.apply(a, b)
    if na == 2 and nb == 1:
        return MatVec.apply(a, b)
    if na == 1 and nb == 1:
        return Dot.apply(a, b)
    return (BatchedMatMul if na == nb == 3 else MatMul).apply(a, b)


def mm(a: Tensor, b: Tensor) -> Tensor:
    if a.ndim != 2 or b.ndim != 2:
        raise RuntimeError(f"mm: expected 2D tensors, got {a.ndim}D and {b.ndim}D")
    return MatMul.apply(a, b)


def bmm(a: Tensor, b: Tensor) -> Tensor:
    if a.ndim != 3 or b.ndim != 3:
        raise RuntimeError(f"bmm: expected 3D tensors, got {a.ndim}D and {b.ndim}D")
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(f"bmm: batch sizes differ: {a.shape[0]} and {b.shape[0]}")
    return BatchedMatMul.apply(a, b)


TENSOR_METHODS: dict[str, Any] = {
    "__matmul__": operator_method(matmul),
    "__rmatmul__": operator_method(matmul, reflected=True),
    "matmul": matmul,
    "mm": mm,
    "bmm": bmm,
}
