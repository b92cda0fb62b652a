"""Convolution as im2col (``ops/im2col.py``) + matrix products. conv2d is one node
(``Convolution``); its backward without a graph runs on arrays, and with ``create_graph`` is
made of Functions (matmul, Col2Im, Im2Col), so it has grad-of-grad.

When the products run on one thread (``image_block``), the convolution runs a few images at a
time in image-major columns (``im2col_images``): each block's columns are still in cache when
its products read them, one product per image (or per chunk of rows, ``_chunk_rows``) writes
straight into the NCHW output, and backward builds the columns of g once per block for both
gradients (stride 1: the input gradient is the convolution of g with the flipped kernel, the
weight gradient their product with x); no columns are kept from forward to backward.

On several threads it runs the whole batch channel-major (C, N, H, W) (a product per block is a
thread hand-off, which a busy machine makes slow): the product's (O, N*Ho*Wo) result is copied
to contiguous NCHW as PyTorch returns it, and only small columns are kept for backward
(``_keeps_columns``; bench/README.md, "Realistic steps: ResNet", has the measurements).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autograd.function import Function
from ..autograd.grad_mode import STATE
from ..backend.threads import get_num_threads
from ..tensor.tensor import Tensor, wrap
from ._util import array_module
from .im2col import (
    Col2Im,
    Im2Col,
    Pad,
    Pair,
    _out_size,
    channel_major,
    col2im_images,
    im2col,
    im2col_images,
    images_scratch,
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


_BIG_COLUMNS = 5 << 21  # whole-batch columns above 10 MiB are not kept for backward
_CACHE_BYTES = 5 << 19  # 2.5 MiB of columns per image block (8 images in the ResNet step)


def _small_columns(n: int, k: int, per_image: int, itemsize: int) -> bool:
    """Whether the batch's columns (``k`` rows of ``n * per_image``) take <= _BIG_COLUMNS."""
    return k * per_image * itemsize * n <= _BIG_COLUMNS


_IMAGE_WORK = 1 << 20  # multiply-adds of one image's products from which image blocks pay


def image_block(
    n: int, k: int, per_image: int, itemsize: int, threads: int = 1, work: int = 0
) -> int:
    """Images per block of the image-major path, which runs when the products run on one
    thread: about _CACHE_BYTES of columns (still in cache when the products read them), at
    most the batch. 0 (the whole-batch path) on several threads (a product per block or chunk
    would be a BLAS thread hand-off each: 2x slower on a busy 2-core machine), or when both the
    batch's columns and each image's products (``work`` multiply-adds) are small: there the
    calls per block cost more than they save (the MNIST CNN's convs: 10% slower)."""
    if threads > 1 or (work < _IMAGE_WORK and _small_columns(n, k, per_image, itemsize)):
        return 0
    return min(n, max(1, _CACHE_BYTES // max(1, k * per_image * itemsize)))


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


_CHUNK_COLUMNS = 64  # columns per product for small weights (below)
_SMALL_PRODUCT = 10**6  # M*N*K up to which OpenBLAS (SkylakeX) runs its small-matrix kernels


def _chunk_rows(xp: Any, w3: Any, ho: int, wo: int) -> int:
    """Output rows per product: the whole image, or for small weights w3 (g, O/g, K) on numpy
    the most rows dividing Ho within _CHUNK_COLUMNS columns, so that each product is small
    enough for BLAS's unpacked kernels (32x288 weights: 1.6x faster on 64 columns than 256)."""
    og, k = w3.shape[1:]
    if xp is not np or wo > _CHUNK_COLUMNS or ho * wo <= _CHUNK_COLUMNS:
        return ho
    if og * k * _CHUNK_COLUMNS > _SMALL_PRODUCT:
        return ho
    return max(d for d in range(1, ho + 1) if ho % d == 0 and d * wo <= _CHUNK_COLUMNS)


def _columns(xp: Any, nb: int, k: int, ho: int, wo: int, rows: int, dtype: Any) -> Any:
    """A block's column buffer: (nb, Ho/rows, K, rows*Wo), reused by every block."""
    return xp.empty((nb, ho // rows, k, rows * wo), dtype=dtype)


def _images_conv(xp: Any, src: Any, w3: Any, conv: tuple, cols: Any, out: Any, scratch: Any) -> Any:
    """``out`` (m, O, Ho, Wo) = the convolution ``conv`` (kernel, stride, pad, dilation) of the
    m images ``src`` with w3 (g, O/g, K): their columns in ``cols`` (chunked as it is shaped),
    then one product per chunk and group written straight into ``out``; returns that view."""
    m, (groups, og, k) = src.shape[0], w3.shape
    _, q, _, lc = cols.shape
    im2col_images(src, *conv, cols[:m], lc // out.shape[3], scratch)
    if q == 1:  # whole images: a contiguous view (the only kind cupy's matmul may write)
        res = out.reshape(m, 1, groups, og, lc)
    else:
        res = out.reshape(m, groups, og, q, lc).transpose(0, 3, 1, 2, 4)
    xp.matmul(w3, cols[:m].reshape(m, q, groups, k, lc), out=res)
    return res


def _blocked_forward(xp: Any, arr: Any, w: Any, bias: Any, geometry: tuple, nb: int) -> Any:
    """The convolution ``nb`` images at a time into contiguous (N, O, Ho, Wo): each block's
    image-major columns, then one product per image (or chunk) and group written straight into
    the output."""
    groups, ho, wo = geometry[4:]
    n, o, k = arr.shape[0], w.shape[0], w[0].size
    out = xp.empty((n, o, ho, wo), dtype=xp.result_type(arr, w))
    w3 = w.reshape(groups, o // groups, k)
    cols = _columns(xp, nb, groups * k, ho, wo, _chunk_rows(xp, w3, ho, wo), arr.dtype)
    scratch = images_scratch(xp, (nb, *arr.shape[1:]), *geometry[:4], arr.dtype)
    for s in range(0, n, nb):
        block = arr[s : s + nb]
        res = _images_conv(xp, block, w3, geometry[:4], cols, out[s : s + nb], scratch)
        if bias is not None:
            res += bias.reshape(groups, o // groups, 1)
    return out


def _adjoint_pad(kernel: Pair, stride: Pair, pad: Pad, dilation: Pair) -> Pad | None:
    """The padding under which the input gradient of a stride-1 convolution is itself a
    convolution of g with the flipped kernel, or None (strided, or a pad wider than the kernel)."""
    if stride != (1, 1):
        return None
    reach = (dilation[0] * (kernel[0] - 1),) * 2 + (dilation[1] * (kernel[1] - 1),) * 2
    adjoint = tuple(r - p for r, p in zip(reach, pad))
    return adjoint if min(adjoint) >= 0 else None  # type: ignore[return-value]


def _flipped(w: Any, groups: int) -> Any:
    """(O, C/g, kh, kw) weights as (g, C/g, O/g * kh * kw): per group, input and output channels
    swapped and the kernel turned by 180 degrees (the input gradient's convolution weights)."""
    o, cg, kh, kw = w.shape
    w5 = w.reshape(groups, o // groups, cg, kh, kw)[:, :, :, ::-1, ::-1]
    return w5.transpose(0, 2, 1, 3, 4).reshape(groups, cg, -1)


def _blocked_backward(
    xp: Any, arr: Any, w: Any, g: Any, geometry: tuple, nb: int, nx: bool, nw: bool
) -> tuple[Any, Any]:
    """Input and weight gradients ``nb`` images at a time, per group. Stride 1: the columns of
    the block's g (flipped-kernel padding) serve both: the input gradient is their product with
    the flipped kernel (the convolution of g, per image or chunk, into gx: no scatter), the
    weight gradient their product with the images (flipped back at the end). Otherwise the
    block's columns are recomputed (cheaper from cache than kept for the whole batch) for the
    weight gradient (also when only it is wanted: x's columns have C*kh*kw rows, g's O*kh*kw),
    and the input gradient's columns summed back into the images (col2im)."""
    adjoint = _adjoint_pad(*geometry[:4]) if nx else None  # weights alone: x's columns
    if adjoint is not None:
        return _adjoint_backward(xp, arr, w, g, geometry, adjoint, nb, nw)
    kernel, stride, pad, dilation, groups, ho, wo = geometry
    n, c, h, wd = arr.shape
    o, k = w.shape[0], w[0].size
    og = o // groups
    gx = xp.empty(arr.shape, dtype=arr.dtype) if nx else None
    gw = xp.zeros((groups, k, og), dtype=w.dtype) if nw else None
    cols = xp.empty((nb, groups * k, ho * wo), dtype=arr.dtype)
    scratch = images_scratch(xp, (nb, c, h, wd), *geometry[:4], arr.dtype) if nw else None
    for s in range(0, n, nb):
        m = min(nb, n - s)
        g4 = g[s : s + m].reshape(m, groups, og, ho * wo)
        c4 = cols[:m].reshape(m, groups, k, ho * wo)
        if nw:
            im2col_images(arr[s : s + m], *geometry[:4], cols[:m], 0, scratch)
            gw += xp.matmul(c4, g4.transpose(0, 1, 3, 2)).sum(0)
        if nx:
            xp.matmul(w.reshape(groups, og, k).transpose(0, 2, 1), g4, out=c4)
            col2im_images(cols[:m], (m, c, h, wd), kernel, stride, pad, dilation, gx[s : s + m])
    return gx, None if gw is None else gw.transpose(0, 2, 1).reshape(w.shape)


def _adjoint_backward(
    xp: Any, arr: Any, w: Any, g: Any, geometry: tuple, adjoint: Pad, nb: int, nw: bool
) -> tuple[Any, Any]:
    """_blocked_backward for stride 1 (with gx) from the columns of g alone: gx per block as the
    convolution of g with the flipped kernel; sum over images of gcols @ x^T is the weight
    gradient with its kernel turned by 180 degrees and its channel axes swapped."""
    kernel, _, _, dilation, groups = geometry[:5]
    n, _, h, wd = arr.shape
    o, cg, kh, kw = w.shape
    og = o // groups
    wf = _flipped(w, groups)
    gx = xp.empty(arr.shape, dtype=arr.dtype)
    gwf = xp.zeros((groups, og * kh * kw, cg), dtype=w.dtype) if nw else None
    gcols = _columns(xp, nb, o * kh * kw, h, wd, _chunk_rows(xp, wf, h, wd), g.dtype)
    _, q, _, lc = gcols.shape
    conv = (kernel, (1, 1), adjoint, dilation)
    scratch = images_scratch(xp, (nb, *g.shape[1:]), *conv, g.dtype)
    for s in range(0, n, nb):
        m = min(nb, n - s)
        _images_conv(xp, g[s : s + m], wf, conv, gcols, gx[s : s + m], scratch)
        if nw:
            # x's chunks pixel-major: a plain (no transpose) product, which BLAS runs faster
            x5 = arr[s : s + m].reshape(m, groups, cg, q, lc).transpose(0, 3, 1, 4, 2)
            x5 = xp.ascontiguousarray(x5)
            gc5 = gcols[:m].reshape(m, q, groups, og * kh * kw, lc)
            gwf += xp.matmul(gc5, x5).sum((0, 1))
    if gwf is None:
        return gx, None
    gw = gwf.reshape(groups, og, kh, kw, cg)[:, :, ::-1, ::-1].transpose(0, 1, 4, 2, 3)
    return gx, xp.ascontiguousarray(gw.reshape(w.shape))


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
        work = o * k * ho * wo  # one image's multiply-adds (all groups)
        nb = image_block(n, k * groups, ho * wo, arr.itemsize, get_num_threads(), work)
        ctx.block = nb
        if nb:  # one thread: image blocks, no columns kept (backward recomputes them)
            ctx.cols = None
            geometry = ((kh, kw), stride, pad, dilation, groups, ho, wo)
            b = None if bias is None else bias._data
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
        if ctx.block and not STATE.enabled:  # image blocks, no graph: on the arrays
            xp = array_module(x._data)
            geometry = (*ctx.geometry, g.shape[2], g.shape[3])
            gxa, gwa = _blocked_backward(
                xp, x._data, weight._data, g._data, geometry, ctx.block, nx, nw
            )
            gb = wrap(g._data.sum(axis=(0, 2, 3))) if nb else None
            gx = None if gxa is None else wrap(gxa)
            gw = None if gwa is None else wrap(gwa)
            return gx, gw, gb, None, None, None, None
        o, cg = weight.shape[0], weight.shape[1]
        k = cg * kernel[0] * kernel[1]
        g2 = g.transpose(0, 1).reshape(o, -1)  # (O, N*Ho*Wo), free for channel-major g
        gx = gw = gb = None
        if nx:
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
