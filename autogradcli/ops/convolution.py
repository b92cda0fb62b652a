"""Convolution as im2col + one matrix product, channel-major (C, N, H, W) throughout.

``Im2Col`` turns an (N, C, H, W) input into columns of shape (C*kh*kw, N*Ho*Wo) through one
strided view and one copy; ``Col2Im`` is its adjoint (a loop over the kh*kw kernel offsets,
each a strided slab add, never over batch or pixels). Each is the other's backward, so conv2d,
built from Im2Col, matmul, reshape and permute, has grad-of-grad for free.

The channel-major layout makes the product's (O, N*Ho*Wo) result a free view of (N, O, Ho, Wo):
conv outputs are (N, O, Ho, Wo) tensors whose memory is (O, N, Ho, Wo), which elementwise ops
keep, pooling keeps, and the next Im2Col reads without a transpose copy.
"""

from __future__ import annotations

from typing import Any

from ..autograd.function import Function
from ..backend import as_strided
from ..tensor.tensor import Tensor
from ._util import array_module
from .linalg import matmul

Pair = tuple[int, int]
Pad = tuple[int, int, int, int]  # top, bottom, left, right

TENSOR_METHODS: dict[str, Any] = {}
__all__ = ["Col2Im", "Im2Col", "conv1d", "conv2d", "conv_geometry"]


def _pair(v: Any, name: str) -> Pair:
    if isinstance(v, (tuple, list)):
        if len(v) == 1:
            return (int(v[0]), int(v[0]))
        if len(v) != 2:
            raise ValueError(f"{name} must be an int or a pair of ints, got {v!r}")
        return (int(v[0]), int(v[1]))
    return (int(v), int(v))


def _out_size(size: int, k: int, s: int, lo: int, hi: int, d: int) -> int:
    return (size + lo + hi - d * (k - 1) - 1) // s + 1


def channel_major(arr: Any) -> Any:
    """``arr`` (N, C, ...) viewed as (C, N, ...), the layout the kernels work in (no copy)."""
    return arr.swapaxes(0, 1)


class Im2Col(Function):
    """(N, C, H, W) -> columns (C*kh*kw, N*Ho*Wo), rows ordered (c, i, j), columns (n, oh, ow)."""

    _backward_name = "Im2ColBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, kernel: Pair, stride: Pair, pad: Pad, dilation: Pair) -> Any:
        arr = x._data
        xp = array_module(arr)
        n, c, h, w = arr.shape
        (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
        pt, pb, pl, pr = pad
        ho = _out_size(h, kh, sh, pt, pb, dh)
        wo = _out_size(w, kw, sw, pl, pr, dw)
        ctx.geometry = (arr.shape, kernel, stride, pad, dilation)
        src = channel_major(arr)
        if pt or pb or pl or pr:
            buf = xp.zeros((c, n, h + pt + pb, w + pl + pr), dtype=arr.dtype)
            buf[:, :, pt : pt + h, pl : pl + w] = src
            src = buf
        s_c, s_n, s_h, s_w = src.strides
        view = as_strided(
            xp,
            src,
            (c, kh, kw, n, ho, wo),
            (s_c, s_h * dh, s_w * dw, s_n, s_h * sh, s_w * sw),
        )
        return view.reshape(c * kh * kw, n * ho * wo)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None, None, None, None]:
        return Col2Im.apply(g, *ctx.geometry), None, None, None, None


class Col2Im(Function):
    """The adjoint of Im2Col: columns summed back into an (N, C, H, W) image."""

    _backward_name = "Col2ImBackward0"

    @staticmethod
    def forward(
        ctx: Any,
        cols: Tensor,
        shape: tuple[int, ...],
        kernel: Pair,
        stride: Pair,
        pad: Pad,
        dilation: Pair,
    ) -> Any:
        arr = cols._data
        xp = array_module(arr)
        n, c, h, w = shape
        (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
        pt, pb, pl, pr = pad
        ho = _out_size(h, kh, sh, pt, pb, dh)
        wo = _out_size(w, kw, sw, pl, pr, dw)
        ctx.geometry = (kernel, stride, pad, dilation)
        c6 = arr.reshape(c, kh, kw, n, ho, wo)
        # disjoint windows along both dims: every target slab is written once, no accumulation
        disjoint = sh >= dh * (kh - 1) + 1 and sw >= dw * (kw - 1) + 1
        buf = xp.zeros((c, n, h + pt + pb, w + pl + pr), dtype=arr.dtype)
        for i in range(kh):
            for j in range(kw):
                target = buf[
                    :,
                    :,
                    i * dh : i * dh + sh * (ho - 1) + 1 : sh,
                    j * dw : j * dw + sw * (wo - 1) + 1 : sw,
                ]
                if disjoint:
                    target[...] = c6[:, i, j]
                else:
                    target += c6[:, i, j]
        return channel_major(buf[:, :, pt : pt + h, pl : pl + w])

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, ...]:
        return (Im2Col.apply(g, *ctx.geometry), None, None, None, None, None)


def conv_geometry(
    in_hw: Pair, kernel: Pair, stride: Any, padding: Any, dilation: Any
) -> tuple[Pair, Pad, Pair]:
    """Normalise stride/padding/dilation (ints, pairs, 'same', 'valid') to (stride, pad, dilation)."""
    st = _pair(stride, "stride")
    dil = _pair(dilation, "dilation")
    if isinstance(padding, str):
        if padding == "valid":
            return st, (0, 0, 0, 0), dil
        if padding != "same":
            raise ValueError(
                f"Invalid padding string '{padding}', should be one of {{'valid', 'same'}}"
            )
        if st != (1, 1):
            raise ValueError("padding='same' is not supported for strided convolutions")
        pads = []
        for k, d in zip(kernel, dil):
            total = d * (k - 1)
            pads += [total // 2, total - total // 2]
        return st, (pads[0], pads[1], pads[2], pads[3]), dil
    ph, pw = _pair(padding, "padding")
    if ph < 0 or pw < 0:
        raise RuntimeError("negative padding is not supported")
    if min(st) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if min(dil) <= 0:
        raise RuntimeError("dilation should be greater than zero")
    return st, (ph, ph, pw, pw), dil


def conv2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    """2-D convolution (cross-correlation) of (N, C, H, W) or (C, H, W) ``input``, as torch's."""
    if input.ndim == 3:
        return conv2d(input.unsqueeze(0), weight, bias, stride, padding, dilation, groups).squeeze(
            0
        )
    if input.ndim != 4 or weight.ndim != 4:
        raise RuntimeError(
            f"Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: "
            f"{list(input.shape)}"
        )
    n, c, h, w = input.shape
    o, cg, kh, kw = weight.shape
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if c != cg * groups or o % groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
            f"{list(input.shape)} to have {cg * groups} channels, but got {c} channels instead"
        )
    st, pad, dil = conv_geometry((h, w), (kh, kw), stride, padding, dilation)
    ho = _out_size(h, kh, st[0], pad[0], pad[1], dil[0])
    wo = _out_size(w, kw, st[1], pad[2], pad[3], dil[1])
    if ho <= 0 or wo <= 0:
        raise RuntimeError(
            f"Calculated padded input size per channel: ({h + pad[0] + pad[1]} x "
            f"{w + pad[2] + pad[3]}). Kernel size: ({dil[0] * (kh - 1) + 1} x "
            f"{dil[1] * (kw - 1) + 1}). Kernel size can't be greater than actual input size"
        )
    cols = Im2Col.apply(input, (kh, kw), st, pad, dil)  # (C*kh*kw, N*Ho*Wo)
    k = cg * kh * kw
    if groups == 1:
        out = matmul(weight.reshape(o, k), cols)
    else:
        out = matmul(weight.reshape(groups, o // groups, k), cols.reshape(groups, k, -1))
        out = out.reshape(o, n * ho * wo)
    if bias is not None:
        out = out + bias.reshape(o, 1)
    return out.reshape(o, n, ho, wo).permute(1, 0, 2, 3)


def conv1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    """1-D convolution of (N, C, L) or (C, L) ``input``: conv2d over a height-1 image."""
    if input.ndim == 2:
        return conv1d(input.unsqueeze(0), weight, bias, stride, padding, dilation, groups).squeeze(
            0
        )
    if input.ndim != 3 or weight.ndim != 3:
        raise RuntimeError(
            f"Expected 2D (unbatched) or 3D (batched) input to conv1d, but got input of size: "
            f"{list(input.shape)}"
        )

    def one(v: Any, name: str) -> int:
        return _pair(v, name)[0]

    pad2: Any = padding if isinstance(padding, str) else (0, one(padding, "padding"))
    out = conv2d(
        input.unsqueeze(2),
        weight.unsqueeze(2),
        bias,
        (1, one(stride, "stride")),
        pad2,
        (1, one(dilation, "dilation")),
        groups,
    )
    return out.squeeze(2)
