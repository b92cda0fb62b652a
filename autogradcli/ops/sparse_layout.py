"""Sparse COO tensors (``sparse_coo_tensor``, ``to_sparse``, ``to_dense``, ``spmm``), held dense.

A ``SparseCooTensor`` is a Tensor whose layout reads ``sparse_coo`` and which answers PyTorch's
sparse queries (``indices()``, ``values()``, ``_nnz()``, ``coalesce()``, its repr), but it stores
every element: ops on it compute as on a dense tensor and return dense (strided) results, as
PyTorch's sparse @ dense products do. That keeps graph programs (GCN, GAT) running with the same
numbers; it saves no memory, so it suits graphs of thousands of nodes, not millions.
"""

from __future__ import annotations

from typing import Any

from ..autograd.function import Function
from ..backend import module_for
from ..tensor import dtype as dtypes
from ..tensor.tensor import Tensor, wrap
from ._util import array_module

__all__ = ["layout", "sparse_coo", "sparse_coo_tensor", "spmm", "strided"]


class Layout:
    """A memory layout, as ``torch.layout`` (``strided`` or ``sparse_coo``)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"autogradcli.{self.name}"


layout = Layout  # torch.layout: the type of torch.strided and torch.sparse_coo
strided = Layout("strided")
sparse_coo = Layout("sparse_coo")


class SparseCooTensor(Tensor):
    """A tensor in the sparse COO layout (stored dense: see the module docstring)."""

    __slots__ = ()

    @property
    def layout(self) -> Layout:
        return sparse_coo

    @property
    def is_sparse(self) -> bool:
        return True

    def _nonzero_positions(self) -> Any:
        xp = array_module(self._data)
        return xp.nonzero(self._data)

    def indices(self) -> Tensor:
        """The coordinates of the stored (non-zero) elements, (ndim, nnz), int64, row-major."""
        xp = array_module(self._data)
        pos = self._nonzero_positions()
        if not pos:
            return wrap(xp.zeros((0, 1), dtype="int64"))
        return wrap(xp.stack([p.astype("int64") for p in pos]))

    def values(self) -> Tensor:
        """The stored elements, in ``indices()`` order."""
        return self.to_dense()[
            tuple(Tensor.__getitem__(self.indices(), i) for i in range(self.ndim))
        ]

    _indices = indices
    _values = values

    def _nnz(self) -> int:
        return int(array_module(self._data).count_nonzero(self._data))

    def coalesce(self) -> SparseCooTensor:
        return self

    def is_coalesced(self) -> bool:
        return True

    def to_dense(self, dtype: Any = None, masked_grad: Any = None) -> Tensor:
        out = ToDense.apply(self)
        return out if dtype is None else out.to(dtype)

    def to_sparse(self, *args: Any, **kwargs: Any) -> SparseCooTensor:
        return self

    def __repr__(self) -> str:
        pad = " " * len("tensor(indices=")
        indices = repr(self.indices()).replace("\n", "\n" + pad)
        values = repr(self.values().detach()).replace("\n", "\n       ")
        size = tuple(self.shape)
        extra = ""
        if self._data.dtype != dtypes.get_default_dtype().np and self._data.dtype.kind in "fV":
            extra = f", dtype={self.dtype}"
        grad = ""
        if self.grad_fn is not None:
            grad = f", grad_fn=<{type(self.grad_fn).__name__}>"
        elif self.requires_grad:
            grad = ", requires_grad=True"
        return (
            f"tensor(indices={indices},\n       values={values},\n       size={size}, "
            f"nnz={self._nnz()}{extra}, layout={sparse_coo}{grad})"
        )


def _as_sparse(t: Tensor) -> SparseCooTensor:
    t.__class__ = SparseCooTensor
    return t  # type: ignore[return-value]


class ToSparse(Function):
    _backward_name = "ToSparseBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Any:
        return x._data.copy()

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        return g


class SparseMM(Function):
    """``torch.sparse.mm(sparse, dense)``: a dense product whose gradient for the sparse operand
    keeps its pattern (the stored elements only), as PyTorch's sparse gradient does."""

    _backward_name = "SparseAddmmBackward0"

    @staticmethod
    def forward(ctx: Any, a: Tensor, b: Tensor) -> Any:
        ctx.save_for_backward(a, b)
        ctx.pattern = a._data != 0
        return a._data @ b._data

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, Any]:
        a, b = ctx.saved_tensors
        ga = gb = None
        if ctx.needs_input_grad[0]:
            ga = (g @ b.transpose(0, 1)) * wrap(ctx.pattern.astype(g._data.dtype))
        if ctx.needs_input_grad[1]:
            gb = a.transpose(0, 1) @ g
        return ga, gb


class ToDense(Function):
    _backward_name = "ToDenseBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Any:
        return x._data.copy()

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        return to_sparse(g)


def to_sparse(x: Tensor, *args: Any, **kwargs: Any) -> SparseCooTensor:
    """``x`` in the sparse COO layout (differentiable; the gradient is dense)."""
    return _as_sparse(ToSparse.apply(x))


def to_dense(x: Tensor, dtype: Any = None, masked_grad: Any = None) -> Tensor:
    """A strided tensor is its own dense form, as in PyTorch."""
    return x if dtype is None else x.to(dtype)


def sparse_coo_tensor(
    indices: Any,
    values: Any,
    size: Any = None,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    check_invariants: Any = None,
    is_coalesced: Any = None,
) -> SparseCooTensor:
    """A sparse tensor with ``values`` at the columns of ``indices`` (ndim, nnz); repeated
    coordinates add up, as PyTorch's coalesce sums them."""
    idx = indices._data if isinstance(indices, Tensor) else indices
    vals = values._data if isinstance(values, Tensor) else values
    xp = array_module(idx) if isinstance(indices, Tensor) else module_for(device)
    idx = xp.asarray(idx).astype("int64")
    vals = xp.asarray(vals)
    if vals.ndim != 1:
        raise NotImplementedError(
            "sparse_coo_tensor: values with dense trailing dims (hybrid sparse tensors) are not "
            "supported yet"
        )
    if idx.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(idx.shape)}")
    if idx.shape[1] != vals.shape[0]:
        raise RuntimeError(
            f"indices and values must have same nnz, but got nnz from indices: {idx.shape[1]}"
            f", nnz from values: {vals.shape[0]}"
        )
    if size is None:
        size = tuple(int(m) + 1 for m in idx.max(axis=1)) if idx.shape[1] else (0,) * idx.shape[0]
    size = tuple(int(s) for s in size)
    if idx.shape[1] and any(int(idx[d].max()) >= size[d] for d in range(idx.shape[0])):
        raise RuntimeError("size is inconsistent with indices")
    if idx.shape[1] and bool((idx < 0).any()):
        raise RuntimeError("found negative index")
    if dtype is not None:
        np_dtype = dtypes.to_dtype(dtype).np
    elif vals.dtype.kind in "fV" and not isinstance(values, Tensor):
        np_dtype = dtypes.get_default_dtype().np
    else:
        np_dtype = vals.dtype
    if len(size) != idx.shape[0]:
        raise RuntimeError(
            f"number of dimensions must be sparse_dim ({idx.shape[0]}) + dense_dim (0), but got "
            f"{len(size)}"
        )
    count = 1
    for s in size:
        count *= s
    flat = xp.ravel_multi_index(tuple(idx), size) if idx.shape[1] else idx[0]
    # repeated coordinates add up (bincount sums the weights of equal positions)
    summed = xp.bincount(flat, weights=vals.astype("float64"), minlength=count)
    out = wrap(summed.astype(np_dtype).reshape(size))
    if requires_grad:
        out.requires_grad = True
    return _as_sparse(out)


def spmm(input: Tensor, mat2: Tensor) -> Tensor:
    """``input @ mat2`` for a sparse ``input`` (a dense result)."""
    from .linalg import mm

    return mm(input, mat2)


TENSOR_METHODS: dict[str, Any] = {
    "to_sparse": to_sparse,
    "to_dense": to_dense,
    "layout": property(lambda self: strided),
    "is_sparse": property(lambda self: False),
}
