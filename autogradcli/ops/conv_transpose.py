"""Transposed convolution (torch's ``conv_transpose1d/2d``) on the convolution machinery.

The forward of a transposed convolution is conv2d's input gradient: one product of the weight
with the input laid out as columns, then ``Col2Im`` sums the columns into the output image.
Built from matmul and Col2Im (whose adjoint is Im2Col), so its gradients (conv2d of the
upstream gradient for the input, an im2col product for the weight) and grad-of-grad follow.
"""

from __future__ import annotations

from typing import Any

from ..autograd.composed import composed_gradients
from ..autograd.function import Function
from ..autograd.grad_mode import STATE
from ..tensor.tensor import Tensor, wrap
from ._util import array_module
from .conv_images import _blas_held, _blocked_backward, _blocked_forward, image_plan, input_gradient
from .convolution import _check_batched, _one, _pair
from .im2col import Col2Im, Pair
from .linalg import matmul
from .padding import pad as _pad

TENSOR_METHODS: dict[str, Any] = {}
__all__ = ["conv_transpose1d", "conv_transpose2d", "conv_transpose_output_size"]


def conv_transpose_output_size(
    size: int, kernel: int, stride: int, padding: int, output_padding: int, dilation: int
) -> int:
    """(size - 1) * stride - 2 * padding + dilation * (kernel - 1) + output_padding + 1."""
    return (size - 1) * stride - 2 * padding + dilation * (kernel - 1) + output_padding + 1


# input pixels an image from which the image blocks pay (DCGAN's layers, batch 64, fwd+bwd, one
# thread: 8x8 inputs 84.8 -> 90.1 ms, their per-image products too narrow; 16x16 99.5 -> 90.1;
# 32x32 18.9 -> 15.2)
_BLOCK_PIXELS = 256


def _check_geometry(st: Any, pd: Any, op: Any, dil: Any) -> None:
    if min(pd) < 0:
        raise RuntimeError("negative padding is not supported")
    if min(st) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if min(dil) <= 0:
        raise RuntimeError("dilation should be greater than zero")
    if min(op) < 0 or any(o >= s and o >= d for o, s, d in zip(op, st, dil)):
        raise RuntimeError(
            "output padding must be smaller than either stride or dilation, but got "
            f"output_padding_height: {op[0]} output_padding_width: {op[1]} "
            f"stride_height: {st[0]} stride_width: {st[1]} "
            f"dilation_height: {dil[0]} dilation_width: {dil[1]}"
        )


def conv_transpose2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> Tensor:
    """2-D transposed convolution of (N, C_in, H, W) or (C_in, H, W) ``input``; ``weight`` is
    (C_in, C_out / groups, kh, kw), as torch's."""
    if input.ndim == 3:
        out = conv_transpose2d(
            input.unsqueeze(0), weight, bias, stride, padding, output_padding, groups, dilation
        )
        return out.squeeze(0)
    _check_batched(input, weight, 4, "conv_transpose2d")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    _, c, h, w = input.shape
    cin, _, kh, kw = weight.shape
    if cin % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
            f"but got weight of size [{list(weight.shape)}] instead"
        )
    if c != cin:
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight.shape)}, expected input"
            f"{list(input.shape)} to have {cin} channels, but got {c} channels instead"
        )
    st, pd = _pair(stride, "stride"), _pair(padding, "padding")
    op, dil = _pair(output_padding, "output_padding"), _pair(dilation, "dilation")
    _check_geometry(st, pd, op, dil)
    ho = conv_transpose_output_size(h, kh, st[0], pd[0], op[0], dil[0])
    wo = conv_transpose_output_size(w, kw, st[1], pd[1], op[1], dil[1])
    if ho <= 0 or wo <= 0:
        raise RuntimeError(
            f"Given input size per channel: ({h} x {w}). Calculated output size per channel: "
            f"({ho} x {wo}). Output size is too small"
        )
    # Col2Im crops ``padding`` from the top/left and ``padding - output_padding`` from the
    # bottom/right; where that is negative, the rows/columns no window reaches are zeros
    extra = (max(0, op[0] - pd[0]), max(0, op[1] - pd[1]))
    pads = (pd[0], max(0, pd[0] - op[0]), pd[1], max(0, pd[1] - op[1]))
    conv = ((kh, kw), st, pads, dil, groups)
    nb = held = 0
    if h * w >= _BLOCK_PIXELS:
        nb, held = image_plan(array_module(input._data), input._data, weight.shape, groups, h * w)
    if nb:  # the CPU's image blocks (ops/conv_images.py), as conv2d takes them
        return ConvTransposeBlocks.apply(input, weight, bias, conv, (ho, wo), extra, (nb, held))
    return _composed(input, weight, bias, conv, (ho, wo), extra)


def _composed(
    input: Tensor, weight: Tensor, bias: Tensor | None, conv: tuple, out_hw: Pair, extra: Pair
) -> Tensor:
    """conv_transpose2d built from matmul and Col2Im (any device; differentiable twice)."""
    (kh, kw), st, pads, dil, groups = conv
    n, _, h, w = input.shape
    cin, cg = weight.shape[:2]
    ho, wo = out_hw
    extra_h, extra_w = extra
    # columns of the output image: weight^T @ input, per group, as conv2d's input gradient
    k = cg * kh * kw
    x2 = input.transpose(0, 1).reshape(cin, n * h * w)
    if groups == 1:
        cols = matmul(weight.reshape(cin, k).t(), x2)
    else:
        w3 = weight.reshape(groups, cin // groups, k).transpose(1, 2)
        cols = matmul(w3, x2.reshape(groups, cin // groups, -1)).reshape(groups * k, -1)
    shape = (n, cg * groups, ho - extra_h, wo - extra_w)
    out = Col2Im.apply(cols, shape, (kh, kw), st, pads, dil)
    if extra_h or extra_w:
        out = _pad(out, (0, extra_w, 0, extra_h))
    if bias is not None:
        out = out + bias.reshape(1, -1, 1, 1)
    return out.contiguous()  # contiguous NCHW, as PyTorch's (Col2Im works channel-major)


class ConvTransposeBlocks(Function):
    """conv_transpose2d on the CPU in image blocks: its forward is the convolution's input
    gradient of x (``input_gradient``), its backward the convolution of g (for x) and the
    convolution's weight gradient of (g, x) (for the weight), no (C_out*kh*kw, N*H*W) columns
    for the whole batch. With ``create_graph`` the composed form is recomputed and
    differentiated (grad-of-grad)."""

    _backward_name = "ConvolutionBackward0"

    @staticmethod
    def forward(
        ctx: Any,
        x: Tensor,
        weight: Tensor,
        bias: Tensor | None,
        conv: tuple,
        out_hw: Pair,
        extra: Pair,
        plan: tuple[int, bool],
    ) -> Any:
        arr, w = x._data, weight._data
        xp = array_module(arr)
        n, _, h, wd = arr.shape
        (ho, wo), (eh, ew) = out_hw, extra
        geometry = (*conv, h, wd)  # the convolution (out -> x)'s geometry and output size
        shape = (n, w.shape[1] * conv[4], ho - eh, wo - ew)
        with _blas_held(plan[1]):
            out = input_gradient(xp, shape, w, arr, geometry, plan[0])
        if eh or ew:  # output_padding past padding: rows/columns no window reaches, zeros
            out = xp.pad(out, ((0, 0), (0, 0), (0, eh), (0, ew)))
        if bias is not None:
            out += bias._data.reshape(1, -1, 1, 1)
        ctx.save_for_backward(x, weight, bias)
        ctx.geometry, ctx.out_hw, ctx.extra, ctx.plan = geometry, out_hw, extra, plan
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, ...]:
        x, weight, bias = ctx.saved_tensors
        nx, nw, nb = ctx.needs_input_grad[:3]
        if STATE.enabled:  # create_graph: differentiate the composed form instead
            return _composed_backward(ctx, x, weight, bias, g)
        ga = g._data
        xp = array_module(ga)
        (ho, wo), (eh, ew) = ctx.out_hw, ctx.extra
        gz = ga[:, :, : ho - eh, : wo - ew]  # the zero rows/columns take no gradient
        gx = gw = None
        with _blas_held(ctx.plan[1]):
            if nx:
                gx = wrap(_blocked_forward(xp, gz, weight._data, None, ctx.geometry, ctx.plan[0]))
            if nw:
                geometry, nblock = ctx.geometry, ctx.plan[0]
                gwa = _blocked_backward(
                    xp, gz, weight._data, x._data, geometry, nblock, False, True
                )
                gw = wrap(gwa[1])
        gb = wrap(ga.sum(axis=(0, 2, 3))) if nb else None
        return gx, gw, gb, None, None, None, None


def _composed_backward(
    ctx: Any, x: Tensor, weight: Tensor, bias: Tensor | None, g: Tensor
) -> tuple:
    """The gradients under create_graph: the composed form recomputed and differentiated."""
    out = _composed(x, weight, bias, ctx.geometry[:5], ctx.out_hw, ctx.extra)
    return composed_gradients(ctx, (x, weight, bias), (out,), (g,), 7)


def conv_transpose1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> Tensor:
    """1-D transposed convolution of (N, C_in, L) or (C_in, L) ``input``: a height-1 image."""
    if input.ndim == 2:
        out = conv_transpose1d(
            input.unsqueeze(0), weight, bias, stride, padding, output_padding, groups, dilation
        )
        return out.squeeze(0)
    _check_batched(input, weight, 3, "conv_transpose1d")
    out = conv_transpose2d(
        input.unsqueeze(2),
        weight.unsqueeze(2),
        bias,
        (1, _one(stride, "stride")),
        (0, _one(padding, "padding")),
        (0, _one(output_padding, "output_padding")),
        groups,
        (1, _one(dilation, "dilation")),
    )
    return out.squeeze(2)
