"""Padding (torch's ``F.pad``): constant, reflect, replicate and circular modes.

Constant padding is one Function (a filled array with the input copied in; its backward is a
slice). The other modes gather the input along each padded dim with an index (index_select),
so their gradients, scatter-adds of the border back, and grad-of-grad come from index_select's.
Negative pads crop, as in torch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..autograd.function import Function
from ..tensor.factory import tensor
from ..tensor.tensor import Tensor
from ._util import array_module

TENSOR_METHODS: dict[str, Any] = {}
__all__ = ["ConstantPad", "pad"]

_MODES = ("constant", "reflect", "replicate", "circular")


class ConstantPad(Function):
    """``x`` placed inside an array of ``value``: ``pads`` is ((before, after), ...) per dim."""

    _backward_name = "ConstantPadNdBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, pads: tuple[tuple[int, int], ...], value: float) -> Any:
        arr = x._data
        xp = array_module(arr)
        shape = tuple(s + a + b for s, (a, b) in zip(arr.shape, pads))
        out = xp.full(shape, value, dtype=arr.dtype)
        inner = tuple(slice(a, a + s) for s, (a, _) in zip(arr.shape, pads))
        out[inner] = arr
        ctx.inner = inner
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None, None]:
        return g[ctx.inner], None, None


def _pairs(pad: Sequence[int], ndim: int) -> list[tuple[int, int]]:
    """torch's flat (last_lo, last_hi, prev_lo, prev_hi, ...) as (lo, hi) per dim, first dim first."""
    pairs = [(0, 0)] * ndim
    for i in range(len(pad) // 2):
        pairs[ndim - 1 - i] = (int(pad[2 * i]), int(pad[2 * i + 1]))
    return pairs


def _crop(x: Tensor, pairs: list[tuple[int, int]]) -> tuple[Tensor, list[tuple[int, int]]]:
    """Negative pads as a slice of ``x``; returns it with the pads that remain (all >= 0)."""
    if all(a >= 0 and b >= 0 for a, b in pairs):
        return x, pairs
    index = []
    for s, (a, b) in zip(x.shape, pairs):
        lo, hi = max(0, -a), s - max(0, -b)
        if hi < lo:
            raise RuntimeError("narrow(): length must be non-negative.")
        index.append(slice(lo, hi))
    return x[tuple(index)], [(max(0, a), max(0, b)) for a, b in pairs]


def _source_index(mode: str, n: int, lo: int, hi: int) -> list[int]:
    """For each output position of a dim padded by (lo, hi), the input position it copies."""
    idx = range(-lo, n + hi)
    if mode == "replicate":
        return [min(max(i, 0), n - 1) for i in idx]
    if mode == "circular":
        return [i % n for i in idx]
    return [(n - 1) - abs((n - 1) - abs(i)) for i in idx]  # reflect (the edge not repeated)


def _check_nonconstant(x: Tensor, mode: str, pad: Sequence[int]) -> None:
    k = len(pad) // 2
    if len(pad) not in (2, 4, 6) or x.ndim not in (k + 1, k + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {x.ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
        )
    for i in range(k):
        dim = x.ndim - 1 - i
        n, lo, hi = x.shape[dim], pad[2 * i], pad[2 * i + 1]
        if mode == "reflect" and (lo >= n or hi >= n):
            raise RuntimeError(
                "Argument #4: Padding size should be less than the corresponding input "
                f"dimension, but got: padding ({lo}, {hi}) at dimension {dim} of input "
                f"{list(x.shape)}"
            )
        if mode == "circular" and (lo > n or hi > n):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if mode == "replicate" and n == 0:
            raise RuntimeError(
                f"Expected input's dimension {dim} to be non-empty for replication padding"
            )


def pad(
    input: Tensor, pad: Sequence[int], mode: str = "constant", value: float | None = None
) -> Tensor:
    """Pad the last ``len(pad) // 2`` dims of ``input``: ``pad`` is (last_lo, last_hi, ...)."""
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > 2 * input.ndim:
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input dimension but "
            f"got padding length {len(pad)} and input of dimension {input.ndim}"
        )
    if mode not in _MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if mode != "constant" and value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if mode == "constant":
        x, pairs = _crop(input, _pairs(pad, input.ndim))
        if not any(a or b for a, b in pairs):
            return x if x is not input else x.clone()
        return ConstantPad.apply(x, tuple(pairs), 0.0 if value is None else value)
    _check_nonconstant(input, mode, pad)
    out = input
    for i in range(len(pad) // 2):
        dim = input.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if lo == 0 and hi == 0:
            continue
        src = _source_index(mode, out.shape[dim], lo, hi)
        out = out.index_select(dim, tensor(src, dtype="int64", device=input.device))
    return out
