"""Convolution in torch.nn.functional: conv1d, conv2d, conv3d, and unfold/fold (im2col/col2im)."""

from __future__ import annotations

from typing import Any

from ...ops.convolution import _pair, conv1d, conv2d
from ...ops.im2col import Col2Im, Im2Col, _out_size
from ...ops.volumetric import conv3d, conv_transpose3d
from ...tensor.tensor import Tensor

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose3d", "fold", "unfold"]


def _geometry(kernel_size: Any, dilation: Any, padding: Any, stride: Any) -> tuple[Any, ...]:
    k = _pair(kernel_size, "kernel_size")
    d = _pair(dilation, "dilation")
    p = _pair(padding, "padding")
    s = _pair(stride, "stride")
    return k, s, (p[0], p[0], p[1], p[1]), d


def unfold(
    input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1
) -> Tensor:
    """Sliding blocks of (N, C, H, W) ``input`` as (N, C*kh*kw, L) columns (torch's unfold)."""
    if input.ndim == 3:
        return unfold(input.unsqueeze(0), kernel_size, dilation, padding, stride).squeeze(0)
    if input.ndim != 4:
        raise NotImplementedError(
            f"Input Error: Only 3D or 4D input Tensors are supported (got {input.ndim}D)"
        )
    k, s, p, d = _geometry(kernel_size, dilation, padding, stride)
    n = input.shape[0]
    cols = Im2Col.apply(input, k, s, p, d)  # (C*kh*kw, N*L)
    return cols.reshape(cols.shape[0], n, -1).permute(1, 0, 2)


def fold(
    input: Tensor,
    output_size: Any,
    kernel_size: Any,
    dilation: Any = 1,
    padding: Any = 0,
    stride: Any = 1,
) -> Tensor:
    """Sum (N, C*kh*kw, L) columns back into (N, C, H, W) images (torch's fold)."""
    if input.ndim == 2:
        return fold(
            input.unsqueeze(0), output_size, kernel_size, dilation, padding, stride
        ).squeeze(0)
    if input.ndim != 3:
        raise NotImplementedError(
            f"Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported "
            f"(got {input.ndim}D)"
        )
    k, s, p, d = _geometry(kernel_size, dilation, padding, stride)
    h, w = _pair(output_size, "output_size")
    n, ck, n_blocks = input.shape
    if ck % (k[0] * k[1]):
        raise RuntimeError(
            "Expected size of input's dimension 1 to be divisible by the product of "
            f"kernel_size, but got input.size(1)={ck} and kernel_size={k}"
        )
    ho = _out_size(h, k[0], s[0], p[0], p[1], d[0])
    wo = _out_size(w, k[1], s[1], p[2], p[3], d[1])
    if ho * wo != n_blocks:
        raise RuntimeError(
            f"Given output_size={(h, w)}, kernel_size={k}, dilation={d}, padding={(p[0], p[2])}, "
            f"stride={s}, expected size of input's dimension 2 to match the calculated number of "
            f"sliding blocks {ho} * {wo} = {ho * wo}, but got input.size(2)={n_blocks}."
        )
    cols = input.permute(1, 0, 2).reshape(ck, n * n_blocks)
    return Col2Im.apply(cols, (n, ck // (k[0] * k[1]), h, w), k, s, p, d)
