"""``autogradcli.fft``: PyTorch's ``torch.fft`` (fft, ifft, rfft, irfft, hfft, ihfft, the 2-D and n-D
forms, fftfreq, rfftfreq, fftshift, ifftshift), differentiable as in PyTorch."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..ops._util import wrap_dim
from ..ops.complex_numbers import conj
from ..ops.reorder import roll
from ..tensor.creation_args import np_dtype
from ..tensor.factory import tensor as _tensor
from ..tensor.tensor import Tensor
from .transforms import DUAL, FftC2C, FftC2R, FftR2C, FftR2CFull, check_norm

__all__ = [
    "fft",
    "fft2",
    "fftfreq",
    "fftn",
    "fftshift",
    "hfft",
    "ifft",
    "ifft2",
    "ifftn",
    "ifftshift",
    "ihfft",
    "irfft",
    "irfft2",
    "irfftn",
    "rfft",
    "rfft2",
    "rfftfreq",
    "rfftn",
]


def fft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The discrete Fourier transform along ``dim`` (zero-padded or trimmed to ``n`` points)."""
    op = FftC2C if input._data.dtype.kind == "c" else FftR2CFull
    return op.apply(input, n, dim, check_norm(norm), True)


def ifft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The inverse discrete Fourier transform along ``dim``."""
    return FftC2C.apply(input, n, dim, check_norm(norm), False)


def rfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The n // 2 + 1 non-negative frequencies of the transform of a real signal."""
    return FftR2C.apply(input, n, dim, check_norm(norm))


def irfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The real signal of length ``n`` (default 2 * (m - 1)) whose ``rfft`` is ``input``."""
    return FftC2R.apply(input, n, dim, check_norm(norm))


def hfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The real transform of a Hermitian-symmetric signal given by its first half."""
    return FftC2R.apply(conj(input), n, dim, DUAL[check_norm(norm)])


def ihfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The inverse of ``hfft``: the one-sided inverse transform of a real signal."""
    return conj(FftR2C.apply(input, n, dim, DUAL[check_norm(norm)]))


def _plan(x: Tensor, s: Any, dim: Any) -> list[tuple[int, int | None]]:
    """(dim, points) pairs of an n-D transform, with PyTorch's defaults for ``s`` and ``dim``."""
    ndim = x.ndim
    if dim is None:
        dims = list(range(ndim)) if s is None else list(range(ndim - len(s), ndim))
    else:
        dims = [dim] if isinstance(dim, int) else list(dim)
    dims = [wrap_dim(d, ndim) for d in dims]
    if len(set(dims)) != len(dims):
        raise RuntimeError("FFT dims must be unique")
    if s is None:
        return [(d, None) for d in dims]
    if len(s) != len(dims):
        raise RuntimeError(
            f"When given, dim and shape arguments must have the same length, got {len(dims)} "
            f"dims and {len(s)} shape entries"
        )
    return [(d, None if n == -1 else n) for d, n in zip(dims, s)]


def _c2c(out: Tensor, plan: list[tuple[int, int | None]], norm: str, forward: bool) -> Tensor:
    """One complex transform per (dim, points) of ``plan``: together, the n-D transform."""
    for d, n in plan:
        out = FftC2C.apply(out, n, d, norm, forward)
    return out


def fftn(
    input: Tensor, s: Sequence[int] | None = None, dim: Any = None, norm: str | None = None
) -> Tensor:
    """The n-D transform over ``dim`` (all dims by default)."""
    return _c2c(input, _plan(input, s, dim), check_norm(norm), True)


def ifftn(
    input: Tensor, s: Sequence[int] | None = None, dim: Any = None, norm: str | None = None
) -> Tensor:
    """The n-D inverse transform over ``dim`` (all dims by default)."""
    return _c2c(input, _plan(input, s, dim), check_norm(norm), False)


def rfftn(
    input: Tensor, s: Sequence[int] | None = None, dim: Any = None, norm: str | None = None
) -> Tensor:
    """The n-D transform of a real signal, one-sided in the last of ``dim``."""
    norm = check_norm(norm)
    plan = _plan(input, s, dim)
    (last, n_last), rest = plan[-1], plan[:-1]
    return _c2c(FftR2C.apply(input, n_last, last, norm), rest, norm, True)


def irfftn(
    input: Tensor, s: Sequence[int] | None = None, dim: Any = None, norm: str | None = None
) -> Tensor:
    """The real n-D signal whose ``rfftn`` is ``input``."""
    norm = check_norm(norm)
    plan = _plan(input, s, dim)
    (last, n_last), rest = plan[-1], plan[:-1]
    return FftC2R.apply(_c2c(input, rest, norm, False), n_last, last, norm)


def fft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None) -> Tensor:
    """The 2-D transform over the last two dims."""
    return fftn(input, s, dim, norm)


def ifft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None) -> Tensor:
    """The 2-D inverse transform over the last two dims."""
    return ifftn(input, s, dim, norm)


def rfft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None) -> Tensor:
    """The 2-D transform of a real signal (one-sided in the last dim)."""
    return rfftn(input, s, dim, norm)


def irfft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None) -> Tensor:
    """The real 2-D signal whose ``rfft2`` is ``input``."""
    return irfftn(input, s, dim, norm)


def _frequencies(values: list[float], dtype: Any, device: Any, requires_grad: bool) -> Tensor:
    out = _tensor(values, dtype=np_dtype(dtype), device=device)
    return out.requires_grad_() if requires_grad else out


def fftfreq(
    n: int,
    d: float = 1.0,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The sample frequencies of an ``fft`` of ``n`` points spaced ``d`` apart."""
    k = [i if i < (n + 1) // 2 else i - n for i in range(n)]
    return _frequencies([i / (d * n) for i in k], dtype, device, requires_grad)


def rfftfreq(
    n: int,
    d: float = 1.0,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The sample frequencies of an ``rfft`` of ``n`` points spaced ``d`` apart."""
    return _frequencies([i / (d * n) for i in range(n // 2 + 1)], dtype, device, requires_grad)


def _shift(input: Tensor, dim: Any, sign: int) -> Tensor:
    dims = list(range(input.ndim)) if dim is None else [dim] if isinstance(dim, int) else dim
    dims = [wrap_dim(d, input.ndim) for d in dims]
    return roll(input, [sign * (input.shape[d] // 2) for d in dims], dims)


def fftshift(input: Tensor, dim: Any = None) -> Tensor:
    """Roll the zero frequency to the centre of ``dim`` (all dims by default)."""
    return _shift(input, dim, 1)


def ifftshift(input: Tensor, dim: Any = None) -> Tensor:
    """The inverse of ``fftshift``."""
    return _shift(input, dim, -1)
