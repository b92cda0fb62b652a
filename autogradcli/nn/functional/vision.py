"""Rearranging and comparing feature maps in torch.nn.functional: ``pixel_shuffle``,
``pixel_unshuffle`` (reshapes and one permute), ``normalize``, ``cosine_similarity``,
``pairwise_distance`` and ``rms_norm`` (Tensor ops, so gradients follow)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np  # dtype metadata only (machine epsilon)

from ...tensor.tensor import Tensor

__all__ = [
    "cosine_similarity",
    "normalize",
    "pairwise_distance",
    "pixel_shuffle",
    "pixel_unshuffle",
    "rms_norm",
]


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C * r^2, H, W) -> (*, C, H * r, W * r): channel blocks spread into space."""
    r = int(upscale_factor)
    if input.ndim < 3:
        raise RuntimeError(
            "pixel_shuffle expects input to have at least 3 dimensions, but got input with "
            f"{input.ndim} dimension(s)"
        )
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square "
            f"of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}"
        )
    b = len(lead)
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    x = x.permute(*range(b), b, b + 3, b + 1, b + 4, b + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H * r, W * r) -> (*, C * r^2, H, W): the inverse of ``pixel_shuffle``."""
    r = int(downscale_factor)
    if input.ndim < 3:
        raise RuntimeError(
            "pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
            f"{input.ndim} dimension(s)"
        )
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    *lead, c, h, w = input.shape
    for name, size, dim in (("height", h, -2), ("width", w, -1)):
        if size % r:
            raise RuntimeError(
                f"pixel_unshuffle expects {name} to be divisible by downscale_factor, but "
                f"input.size({dim})={size} is not divisible by {r}"
            )
    b = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    x = x.permute(*range(b), b, b + 2, b + 4, b + 1, b + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)


def normalize(
    input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: None = None
) -> Tensor:
    """``input / max(||input||_p, eps)`` along ``dim``."""
    if out is not None:
        raise NotImplementedError("normalize: out= is not supported")
    denom = input.norm(p, dim, keepdim=True).clamp(min=eps)
    return input / denom


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """Cosine of the angle between ``x1`` and ``x2`` along ``dim`` (each norm at least ``eps``).

    As torch, each input is divided by its clamped norm; the clamp itself passes gradients
    through unchanged."""
    n1 = x1.norm(2, dim, keepdim=True)
    n2 = x2.norm(2, dim, keepdim=True)
    n1 = n1 + (n1.detach().clamp(min=eps) - n1.detach())  # value clamped, gradient of the norm
    n2 = n2 + (n2.detach().clamp(min=eps) - n2.detach())
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(
    x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Tensor:
    """The p-norm of ``x1 - x2 + eps`` over the last dim."""
    return (x1 - x2 + eps).norm(p, -1, keepdim=keepdim)


def rms_norm(
    input: Tensor,
    normalized_shape: int | Sequence[int],
    weight: Tensor | None = None,
    eps: float | None = None,
) -> Tensor:
    """``input / sqrt(mean(input^2) + eps) * weight`` over the trailing ``normalized_shape``
    dims; ``eps`` defaults to the dtype's machine epsilon, as torch."""
    norm = (
        (int(normalized_shape),) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    )
    k = len(norm)
    if k == 0 or input.ndim < k or tuple(input.shape[input.ndim - k :]) != norm:
        raise RuntimeError(
            f"Given normalized_shape={list(norm)}, expected input with shape "
            f"[*{', '.join(str(s) for s in norm)}], but got input of size{list(input.shape)}"
        )
    if eps is None:
        eps = float(np.finfo(str(input.dtype).split(".")[-1]).eps)
    dims = tuple(range(input.ndim - k, input.ndim))
    out = input * ((input * input).mean(dims, keepdim=True) + eps).rsqrt()
    return out if weight is None else out * weight
