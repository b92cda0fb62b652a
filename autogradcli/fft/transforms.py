"""The three discrete Fourier transforms every ``torch.fft`` function is built from, one dim at a
time: complex-to-complex, real-to-complex (one-sided) and complex-to-real. Each backward is the
adjoint transform (with the dual normalisation), so gradients follow PyTorch's convention."""

from __future__ import annotations

from typing import Any

from ..autograd.function import Function
from ..ops._util import array_module, scalar_type_name, wrap_dim
from ..ops.complex_numbers import real
from ..ops.join import cat
from ..ops.reorder import narrow
from ..tensor import dtype as dtypes
from ..tensor.factory import zeros
from ..tensor.tensor import Tensor, wrap

_NORMS = ("backward", "ortho", "forward")
# the adjoint of a transform scaled by 1/n is the opposite transform scaled by 1/n
DUAL = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


def check_norm(norm: str | None) -> str:
    """``norm`` as one of PyTorch's modes (None is "backward")."""
    if norm is None:
        return "backward"
    if norm not in _NORMS:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return norm


def check_n(n: int | None, default: int) -> int:
    """The number of points of a transform: ``n``, or ``default`` when None."""
    if n is None:
        n = default
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return int(n)


def _complex_array(x: Tensor) -> Any:
    """``x``'s array as complex (float32 -> complex64, float64 -> complex128, ints -> default)."""
    arr = x._data
    if arr.dtype.kind == "c":
        return arr
    if arr.dtype.kind not in "f":
        arr = arr.astype(dtypes.get_default_dtype().np)
    return arr.astype(dtypes.promote_types(arr.dtype, dtypes.complex64.np))


def _resize(g: Tensor, dim: int, size: int) -> Tensor:
    """``g`` trimmed or zero-padded along ``dim`` to ``size`` (the adjoint of the other)."""
    have = g.shape[dim]
    if have == size:
        return g
    if have > size:
        return narrow(g, dim, 0, size)
    shape = list(g.shape)
    shape[dim] = size - have
    return cat([g, zeros(shape, dtype=g.dtype, device=g.device)], dim)


class FftC2C(Function):
    """``fft``/``ifft`` along one dim (``forward`` picks the sign of the exponent)."""

    _backward_name = "FftC2CBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, n: Any, dim: int, norm: str, forward: bool) -> Any:
        arr = _complex_array(x)
        dim = wrap_dim(dim, arr.ndim)
        n = check_n(n, arr.shape[dim])
        ctx.args = (arr.shape[dim], dim, norm, forward)
        fft = array_module(arr).fft
        out = (fft.fft if forward else fft.ifft)(arr, n, axis=dim, norm=norm)
        return out.astype(arr.dtype, copy=False)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, ...]:
        size, dim, norm, forward = ctx.args
        gx = FftC2C.apply(g, None, dim, DUAL[norm], not forward)
        return _resize(gx, dim, size), None, None, None, None


class FftR2CFull(FftC2C):
    """``fft`` of a real signal: all n frequencies (PyTorch records it as a real-to-complex
    transform; its gradient is the real part of the complex one's)."""

    _backward_name = "FftR2CBackward0"


class FftR2C(Function):
    """``rfft`` along one dim: the n // 2 + 1 non-negative frequencies of a real signal."""

    _backward_name = "FftR2CBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, n: Any, dim: int, norm: str) -> Any:
        arr = x._data
        if arr.dtype.kind == "c":
            raise RuntimeError(
                "rfft expects a real input tensor, but got " + scalar_type_name(arr.dtype)
            )
        target = _complex_array(x).dtype
        dim = wrap_dim(dim, arr.ndim)
        n = check_n(n, arr.shape[dim])
        ctx.args = (arr.shape[dim], n, dim, norm)
        return array_module(arr).fft.rfft(arr, n, axis=dim, norm=norm).astype(target, copy=False)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, ...]:
        size, n, dim, norm = ctx.args
        # the adjoint of "take the first n // 2 + 1 outputs of a full fft": zero-fill, then ifft
        gx = real(FftC2C.apply(_resize(g, dim, n), None, dim, DUAL[norm], False))
        return _resize(gx, dim, size), None, None, None


class FftC2R(Function):
    """``irfft`` along one dim: the real signal of length n from its one-sided spectrum."""

    _backward_name = "FftC2RBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, n: Any, dim: int, norm: str) -> Any:
        arr = _complex_array(x)
        dim = wrap_dim(dim, arr.ndim)
        n = check_n(n, 2 * (arr.shape[dim] - 1))
        ctx.args = (arr.shape[dim], n, dim, norm)
        out = array_module(arr).fft.irfft(arr, n, axis=dim, norm=norm)
        return out.astype(arr.real.dtype, copy=False)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, ...]:
        size, n, dim, norm = ctx.args
        gx = FftR2C.apply(g, None, dim, DUAL[norm])
        half = n // 2 + 1
        doubled = n - half  # the frequencies whose conjugate twins the one-sided input stands for
        if doubled > 0:
            xp = array_module(gx._data)
            shape = [1] * gx.ndim
            shape[dim] = half
            weight = xp.ones(half, gx._data.real.dtype)
            weight[1 : 1 + doubled] = 2.0
            gx = gx * wrap(weight.reshape(shape))
        return _resize(gx, dim, size), None, None, None
