"""Products built on ``matmul``: ``mv``, ``addmv``/``baddbmm``/``addbmm`` (beta * input
+ alpha * product), ``inner``, ``tensordot``, ``kron`` and the 3-vector ``cross``."""

from __future__ import annotations

import warnings
from typing import Any

from ..tensor.tensor import Tensor
from ._util import wrap_dim
from .linalg import bmm, matmul, mm

__all__ = ["addbmm", "addmv", "baddbmm", "cross", "inner", "kron", "matrix_power", "mv"]
__all__ += ["tensordot"]


def _scaled_sum(input: Tensor, product: Tensor, beta: Any, alpha: Any) -> Tensor:
    """beta * input + alpha * product, with beta = 0 ignoring input (nan and inf included)."""
    scaled = product if alpha == 1 else product * alpha
    if beta == 0:
        return scaled
    return (input if beta == 1 else input * beta) + scaled


def mv(input: Tensor, vec: Tensor) -> Tensor:
    """Matrix (n, m) times vector (m,)."""
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}")
    return matmul(input, vec)


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """beta * input + alpha * (mat @ vec)."""
    return _scaled_sum(input, mv(mat, vec), beta, alpha)


def baddbmm(
    input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1
) -> Tensor:
    """beta * input + alpha * (batch1 @ batch2), batch by batch."""
    return _scaled_sum(input, bmm(batch1, batch2), beta, alpha)


def addbmm(
    input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1
) -> Tensor:
    """beta * input + alpha * the sum over batches of batch1 @ batch2."""
    return _scaled_sum(input, bmm(batch1, batch2).sum(0), beta, alpha)


def inner(input: Tensor, other: Tensor) -> Tensor:
    """The sum over the last dims of ``input`` and ``other`` (a product for 0-d operands)."""
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    return tensordot(input, other, ([-1], [-1]))


def tensordot(a: Tensor, b: Tensor, dims: Any = 2) -> Tensor:
    """The sum over ``dims`` (a count of a's last and b's first dims, or two lists of dims)."""
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        da, db = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        da, db = (list(d) if isinstance(d, (list, tuple)) else [d] for d in dims)
    da = [wrap_dim(int(d), a.ndim) for d in da]
    db = [wrap_dim(int(d), b.ndim) for d in db]
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    for x, y in zip(da, db):
        if a.shape[x] != b.shape[y]:
            raise RuntimeError(
                f"contracted dimensions need to match, but first has size {a.shape[x]} in dim "
                f"{x} and second has size {b.shape[y]} in dim {y}"
            )
    free_a = [d for d in range(a.ndim) if d not in da]
    free_b = [d for d in range(b.ndim) if d not in db]
    k = 1
    for d in da:
        k *= a.shape[d]
    left = a.permute(*free_a, *da).reshape(-1, k)
    right = b.permute(*db, *free_b).reshape(k, -1)
    shape = [a.shape[d] for d in free_a] + [b.shape[d] for d in free_b]
    return mm(left, right).reshape(shape)


def matrix_power(input: Tensor, n: int) -> Tensor:
    """``input`` (square matrices in the last two dims) multiplied by itself ``n`` >= 0 times
    (n = 0: the identity), by repeated squaring."""
    if input.ndim < 2 or input.shape[-1] != input.shape[-2]:
        raise RuntimeError(
            "linalg.matrix_power: A must be batches of square matrices, but they are "
            f"{input.shape[-2] if input.ndim > 1 else 1} by {input.shape[-1]} matrices"
        )
    if n < 0:
        raise NotImplementedError("matrix_power with a negative n needs a matrix inverse, "
                                  "which autogradcli does not have yet")  # fmt: skip
    from ..tensor.factory import eye

    result = None
    base = input
    while n:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    if result is None:
        return eye(input.shape[-1], dtype=input.dtype, device=input.device).expand(*input.shape)
    return result if result is not input else input * 1


def kron(input: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product: every entry of ``input`` times the whole of ``other``."""
    nd = max(input.ndim, other.ndim)
    a = input.reshape((1,) * (nd - input.ndim) + tuple(input.shape))
    b = other.reshape((1,) * (nd - other.ndim) + tuple(other.shape))
    a_view, b_view = [], []
    for sa, sb in zip(a.shape, b.shape):
        a_view += [sa, 1]
        b_view += [1, sb]
    shape = [sa * sb for sa, sb in zip(a.shape, b.shape)]
    return (a.reshape(a_view) * b.reshape(b_view)).reshape(shape)


def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """The cross product of 3-vectors along ``dim`` (left out: the first dim of size 3, with
    PyTorch's deprecation warning)."""
    if dim is None:
        warnings.warn(
            "Using torch.cross without specifying the dim arg is deprecated.\nPlease either "
            "pass the dim explicitly or simply use torch.linalg.cross.\nThe default value of "
            "dim will change to agree with that of linalg.cross in a future release.",
            UserWarning,
            stacklevel=2,
        )
        dim = next((i for i, s in enumerate(input.shape) if s == 3), -1)
    d = wrap_dim(dim, input.ndim)
    if input.shape[d] != 3 or other.shape[wrap_dim(dim, other.ndim)] != 3:
        raise RuntimeError(
            f"linalg.cross: inputs dimension {dim} must have length 3. Got "
            f"{input.shape[d]} and {other.shape[wrap_dim(dim, other.ndim)]}"
        )
    a = [input.select(d, i) for i in range(3)]
    b = [other.select(wrap_dim(dim, other.ndim), i) for i in range(3)]
    from .join import stack

    return stack(
        [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]], d
    )


# loaded on first use: its Tensor methods are ops/lazy_methods.py's stubs, and addmm's is here
TENSOR_METHODS: dict[str, Any] = {}
