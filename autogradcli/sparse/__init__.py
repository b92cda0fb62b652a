"""``torch.sparse``: products with sparse COO tensors (held dense here: see
``autogradcli.ops.sparse_layout``)."""

from ..ops.linalg import mm as _mm
from ..ops.sparse_layout import SparseMM, spmm
from ..tensor.tensor import Tensor


def mm(mat1: Tensor, mat2: Tensor, reduce: str = "sum") -> Tensor:
    """``mat1 @ mat2`` with ``mat1`` sparse (a dense result; ``mat1``'s gradient keeps its
    pattern, as PyTorch's); with two dense operands, ``mm``."""
    if reduce != "sum":
        raise NotImplementedError(f"torch.sparse.mm: reduce={reduce!r} is not supported yet")
    if getattr(mat1, "is_sparse", False):
        if mat1.ndim != 2 or mat2.ndim != 2:
            raise RuntimeError(f"mm: expected 2D tensors, got {mat1.ndim}D and {mat2.ndim}D")
        return SparseMM.apply(mat1, mat2)
    return _mm(mat1, mat2)


def sum(input: Tensor, dim: object = None) -> Tensor:
    """The sum of a sparse tensor's elements (over ``dim``)."""
    return input.to_dense().sum() if dim is None else input.to_dense().sum(dim)


__all__ = ["mm", "spmm", "sum"]
