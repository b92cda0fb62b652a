"""Convolution as im2col (``ops/im2col.py``) + matrix products. conv2d is one node
(``Convolution``); its backward without a graph runs on arrays, and with ``create_graph`` is
made of Functions (matmul, Col2Im, Im2Col), so it has grad-of-grad.

Two paths (``conv_images.image_plan`` chooses): on one thread, and on several for small weights (BLAS then
held to one thread inside the call, ``_blas_held``), a few images at a time in image-major
columns (``ops/conv_images.py``); otherwise the whole batch channel-major (C, N, H, W): the
product's (O, N*Ho*Wo) result is copied to contiguous NCHW as PyTorch returns it, and only small
columns are kept for backward (``_keeps_columns``; bench/README.md, "Realistic steps: ResNet",
has the measurements).
"""

from __future__ import annotations

from typing import Any

from ..autograd.function import Function
from ..autograd.grad_mode import STATE
from ..backend.registry import is_cpu_array
from ..tensor.tensor import Tensor, wrap
from . import convolution_cudnn
from ._util import array_module
from .conv_images import (
    _IMAGE_PIXELS,
    _blas_held,
    _blocked_backward,
    _blocked_forward,
    _small_columns,
    image_plan,
)
from .im2col import (
    Col2Im,
    Im2Col,
    Pad,
    Pair,
    _out_size,
    channel_major,
    col2im_pixel_major,
    im2col,
)
from .linalg import matmul

TENSOR_METHODS: dict[str, Any] = {}
__all__ = ["Convolution", "conv1d", "conv2d", "conv_geometry"]


def _pair(v: Any, name: str) -> Pair:
    if isinstance(v, (tuple, list)):
        if len(v) == 1:
            return (int(v[0]), int(v[0]))
        if len(v) != 2:
            raise ValueError(f"{name} must be an int or a pair of ints, got {v!r}")
        return (int(v[0]), int(v[1]))
    return (int(v), int(v))


def _one(v: Any, name: str) -> int:
    """A 1-D size argument (an int or a 1-sequence; a pair gives its first) as an int."""
    return _pair(v, name)[0]


def _check_batched(input: Tensor, weight: Tensor, ndim: int, name: str) -> None:
    """torch's error unless ``input`` and ``weight`` both have ``ndim`` (the batched rank) dims."""
    if input.ndim != ndim or weight.ndim != ndim:
        raise RuntimeError(
            f"Expected {ndim - 1}D (unbatched) or {ndim}D (batched) input to {name}, but got input "
            f"of size: {list(input.shape)}"
        )


def _check_groups(input: Tensor, weight: Tensor, groups: int) -> None:
    """torch's errors unless ``groups`` splits input channels and ``weight``'s outputs evenly."""
    c, (o, cg) = input.shape[1], weight.shape[:2]
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if c != cg * groups or o % groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
            f"{list(input.shape)} to have {cg * groups} channels, but got {c} channels instead"
        )


def _keeps_columns(n: int, k: int, per_image: int, itemsize: int) -> bool:
    """Whether a whole-batch forward keeps its columns for the weight gradient: small ones only;
    big ones (several threads) are recomputed in backward, so memory does not grow with threads."""
    return _small_columns(n, k, per_image, itemsize)


def _forward_product(xp: Any, w: Any, cols: Any, groups: int) -> Any:
    """(O, L) = w (O, K) @ cols (groups*K, L), per group."""
    o = w.shape[0]
    if groups == 1:
        return _product(xp, w.reshape(o, -1), cols)
    k = cols.shape[0] // groups
    out = xp.matmul(w.reshape(groups, o // groups, k), cols.reshape(groups, k, -1))
    return out.reshape(o, -1)


_BLOCK = 8192  # columns per block when the inner dimension is small


def _blocked(k: int, cols: int) -> bool:
    """Few rows of long columns (K <= 32): BLAS runs ~2x faster on cache-sized column blocks."""
    return k <= 32 and cols >= 2 * _BLOCK


def _product(xp: Any, w: Any, cols: Any) -> Any:
    """``w @ cols`` (w (O, K), cols (K, L)), in column blocks when that is faster."""
    k, n = cols.shape
    if not _blocked(k, n):
        return xp.matmul(w, cols)
    out = xp.empty((w.shape[0], n), dtype=xp.result_type(w, cols))
    for s in range(0, n, _BLOCK):
        out[:, s : s + _BLOCK] = xp.matmul(w, cols[:, s : s + _BLOCK])
    return out


def _product_t(xp: Any, cols: Any, g: Any) -> Any:
    """``cols @ g.T`` (cols (K, L), g (O, L)): the block products summed when blocked."""
    k, n = cols.shape
    if not _blocked(k, n):
        return xp.matmul(cols, g.T)
    acc = xp.matmul(cols[:, :_BLOCK], g[:, :_BLOCK].T)
    for s in range(_BLOCK, n, _BLOCK):
        acc += xp.matmul(cols[:, s : s + _BLOCK], g[:, s : s + _BLOCK].T)
    return acc


def _wrapped(arr: Any) -> Tensor | None:
    return None if arr is None else wrap(arr)


class Convolution(Function):
    """conv2d in one node: im2col, one product (per group), bias added in place.

    The output is contiguous (N, O, Ho, Wo). Backward is made of Functions (matmul, Col2Im,
    Im2Col, sum), so grad-of-grad works; the forward's columns are reused for the weight
    gradient unless a graph of the backward is being built (then Im2Col recomputes them from the
    input so the weight gradient stays differentiable in x) or they are big (then recomputed).
    In image blocks (one thread) backward without a graph runs on the arrays per
    block.
    """

    _backward_name = "ConvolutionBackward0"

    @staticmethod
    def forward(
        ctx: Any,
        x: Tensor,
        weight: Tensor,
        bias: Tensor | None,
        stride: Pair,
        pad: Pad,
        dilation: Pair,
        groups: int,
    ) -> Any:
        arr, w = x._data, weight._data
        xp = array_module(arr)
        n, _, h, wd = arr.shape
        o, cg, kh, kw = w.shape
        ho = _out_size(h, kh, stride[0], pad[0], pad[1], dilation[0])
        wo = _out_size(wd, kw, stride[1], pad[2], pad[3], dilation[1])
        ctx.save_for_backward(x, weight)
        ctx.geometry = ((kh, kw), stride, pad, dilation, groups)
        k = cg * kh * kw
        on_cpu = is_cpu_array(arr)
        ctx.cudnn = None if on_cpu else convolution_cudnn.cudnn_for(arr, w, pad)
        if ctx.cudnn is not None:  # a GPU with cuDNN: one library call each way
            ctx.block, ctx.held, ctx.cols = 0, False, None
            b = None if bias is None else bias._data
            geometry = (stride, pad, dilation, groups)
            return convolution_cudnn.forward(ctx.cudnn, arr, w, b, (ho, wo), geometry)
        weights_only = ctx.needs_input_grad[1] and not ctx.needs_input_grad[0]
        nb, held = image_plan(xp, arr, w.shape, groups, ho * wo, weights_only)
        ctx.block, ctx.held = nb, held
        if nb:  # image blocks, no columns kept (backward recomputes them)
            ctx.cols = None
            geometry = ((kh, kw), stride, pad, dilation, groups, ho, wo)
            b = None if bias is None else bias._data
            with _blas_held(ctx.held):
                return _blocked_forward(xp, arr, w, b, geometry, nb)
        cols = im2col(arr, (kh, kw), stride, pad, dilation)
        out = _forward_product(xp, w, cols, groups)
        if bias is not None:
            out += bias._data.reshape(o, 1)
        keep = ctx.needs_input_grad[1] and _keeps_columns(n, k * groups, ho * wo, arr.itemsize)
        ctx.cols = cols if keep else None
        del cols  # an unkept one is freed before the output's copy below
        # PyTorch's conv output is contiguous NCHW, and programs rely on it (x.view(-1, C*H*W))
        return xp.ascontiguousarray(channel_major(out.reshape(o, n, ho, wo)))

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, ...]:
        x, weight = ctx.saved_tensors
        kernel, stride, pad, dilation, groups = ctx.geometry
        nx, nw, nb = ctx.needs_input_grad[:3]
        if ctx.cudnn is not None and not STATE.enabled:
            geometry = (stride, pad, dilation, groups)
            gxa, gwa = convolution_cudnn.backward(
                ctx.cudnn, x._data, weight._data, g._data, geometry, nx, nw
            )
            gb = wrap(g._data.sum(axis=(0, 2, 3))) if nb else None
            return _wrapped(gxa), _wrapped(gwa), gb, None, None, None, None
        if ctx.block and not STATE.enabled:  # image blocks, no graph: on the arrays
            xp = array_module(x._data)
            geometry = (*ctx.geometry, g.shape[2], g.shape[3])
            with _blas_held(ctx.held):
                gxa, gwa = _blocked_backward(
                    xp, x._data, weight._data, g._data, geometry, ctx.block, nx, nw
                )
            gb = wrap(g._data.sum(axis=(0, 2, 3))) if nb else None
            return _wrapped(gxa), _wrapped(gwa), gb, None, None, None, None
        o, cg = weight.shape[0], weight.shape[1]
        k = cg * kernel[0] * kernel[1]
        g2 = g.transpose(0, 1).reshape(o, -1)  # (O, N*Ho*Wo), free for channel-major g
        gx = gw = gb = None
        if nx and _pixel_major(x._data, groups, stride, g.shape):  # no graph: on the arrays
            ga = g._data
            gp = array_module(ga).ascontiguousarray(ga.transpose(1, 2, 3, 0)).reshape(o, -1)
            gcp = weight._data.reshape(o, k).T @ gp  # (C*kh*kw, Ho*Wo*N)
            gx = wrap(col2im_pixel_major(gcp, tuple(x.shape), kernel, stride, pad, dilation))
            del gcp
        elif nx:
            if groups == 1:
                gcols = matmul(weight.reshape(o, k).t(), g2)
            else:
                w3 = weight.reshape(groups, o // groups, k).transpose(1, 2)
                gcols = matmul(w3, g2.reshape(groups, o // groups, -1)).reshape(groups * k, -1)
            gx = Col2Im.apply(gcols, tuple(x.shape), kernel, stride, pad, dilation)
            del gcols  # freed before the columns are recomputed: never both held
        if nw:
            graph = STATE.enabled
            if graph:  # building a graph: keep d(gw)/dx
                cols = Im2Col.apply(x, kernel, stride, pad, dilation)
            elif ctx.cols is None:  # big columns, not kept: recomputed
                cols = wrap(im2col(x._data, kernel, stride, pad, dilation))
            else:
                cols = wrap(ctx.cols)
            if groups == 1 and not graph:  # constants: the array product, in column blocks
                g2d = g2._data
                gw = wrap(_product_t(array_module(g2d), cols._data, g2d).T)
            elif groups == 1:  # (cols @ g2^T)^T: the faster product shape for BLAS
                gw = matmul(cols, g2.t()).t()
            else:
                c3 = cols.reshape(groups, k, -1)
                gw = matmul(c3, g2.reshape(groups, o // groups, -1).transpose(1, 2))
                gw = gw.transpose(1, 2)
            gw = gw.reshape(weight.shape)
        if nb:
            gb = g2.sum(1)
        return gx, gw, gb, None, None, None, None


def _pixel_major(arr: Any, groups: int, stride: Pair, g_shape: tuple[int, ...]) -> bool:
    """Whether a whole-batch input gradient takes col2im_pixel_major: strided, on the CPU, no
    groups, no graph, and under _IMAGE_PIXELS output pixels an image (where its rows of Wo
    elements are shortest; on the wide 8x8 and 16x16 layers it measured slower)."""
    return (
        stride != (1, 1)
        and groups == 1
        and not STATE.enabled
        and is_cpu_array(arr)
        and g_shape[2] * g_shape[3] < _IMAGE_PIXELS
    )


def conv_geometry(kernel: Pair, stride: Any, padding: Any, dilation: Any) -> tuple[Pair, Pad, Pair]:
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
    _check_batched(input, weight, 4, "conv2d")
    h, w = input.shape[2:]
    kh, kw = weight.shape[2:]
    _check_groups(input, weight, groups)
    st, pad, dil = conv_geometry((kh, kw), stride, padding, dilation)
    ho = _out_size(h, kh, st[0], pad[0], pad[1], dil[0])
    wo = _out_size(w, kw, st[1], pad[2], pad[3], dil[1])
    if ho <= 0 or wo <= 0:
        raise RuntimeError(
            f"Calculated padded input size per channel: ({h + pad[0] + pad[1]} x "
            f"{w + pad[2] + pad[3]}). Kernel size: ({dil[0] * (kh - 1) + 1} x "
            f"{dil[1] * (kw - 1) + 1}). Kernel size can't be greater than actual input size"
        )
    return Convolution.apply(input, weight, bias, st, pad, dil, groups)


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
    _check_batched(input, weight, 3, "conv1d")
    pad2: Any = padding if isinstance(padding, str) else (0, _one(padding, "padding"))
    out = conv2d(
        input.unsqueeze(2),
        weight.unsqueeze(2),
        bias,
        (1, _one(stride, "stride")),
        pad2,
        (1, _one(dilation, "dilation")),
        groups,
    )
    return out.squeeze(2)
