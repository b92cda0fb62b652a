"""``autogradcli.linalg``: PyTorch's ``torch.linalg`` norms (vector, matrix, and ``norm``)."""

from __future__ import annotations

from typing import Any

from ..ops._util import normalize_dims
from ..ops.linalg import matmul
from ..ops.statistics import Norm
from ..tensor.tensor import Tensor

__all__ = ["matmul", "matrix_norm", "norm", "vector_norm"]

_INF = float("inf")


def vector_norm(
    x: Tensor, ord: Any = 2, dim: Any = None, keepdim: bool = False, *, dtype: Any = None
) -> Tensor:
    """The vector ``ord``-norm of ``x`` over ``dim`` (all elements when None)."""
    if dtype is not None:
        x = x.to(dtype)
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.vector_norm: ord must be a number, got {ord!r}")
    if x._data.dtype.kind == "c":  # every p-norm of z is that of |z|
        x = x.abs()
    return Norm.apply(x, float(ord), normalize_dims(dim, x._data.ndim), keepdim)


def matrix_norm(
    x: Tensor,
    ord: Any = "fro",
    dim: tuple[int, int] = (-2, -1),
    keepdim: bool = False,
    *,
    dtype: Any = None,
) -> Tensor:
    """The matrix norm over the two dims ``dim``: ``'fro'``, 1, -1, inf or -inf."""
    if dtype is not None:
        x = x.to(dtype)
    if x._data.ndim < 2:
        raise RuntimeError(
            "linalg.matrix_norm: The input tensor A must have at least 2 dimensions."
        )
    r, c = (d % x._data.ndim for d in dim)
    if ord == "fro":
        return Norm.apply(x, 2.0, tuple(sorted((r, c))), keepdim)
    if ord in (1, -1, _INF, -_INF):
        # 1: the largest column sum of |x| (sum over rows); inf: the largest row sum
        summed, other = (r, c) if ord in (1, -1) else (c, r)
        sums = x.abs().sum(summed, keepdim=True)
        out = sums.amax(other, keepdim=True) if ord > 0 else sums.amin(other, keepdim=True)
        return out if keepdim else out.squeeze(max(r, c)).squeeze(min(r, c))
    raise RuntimeError(
        f"linalg.matrix_norm: ord={ord!r} is not supported here (supported: 'fro', 1, -1, inf, -inf)"
    )


def norm(
    x: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False, *, dtype: Any = None
) -> Tensor:
    """``torch.linalg.norm``: a vector norm, or a matrix norm for 2 dims (or a 2-D ``x``) with ord."""
    if isinstance(dim, int):
        dim = (dim,)
    if ord is None:
        return vector_norm(x, 2, dim, keepdim, dtype=dtype)
    if isinstance(ord, str) or (dim is not None and len(dim) == 2) or (dim is None and x.ndim == 2):
        return matrix_norm(
            x, ord, tuple(dim) if dim is not None else (-2, -1), keepdim, dtype=dtype
        )
    if dim is None and x.ndim != 1:
        raise RuntimeError(
            "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
            f"Got {x.ndim}D."
        )
    return vector_norm(x, ord, dim, keepdim, dtype=dtype)
