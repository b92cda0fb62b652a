"""The convolution on one thread, a few images at a time, on arrays (no graph): image-major
columns (``im2col_images``) of a block of images, still in cache when their products read them;
one product per image (or per chunk of output rows, ``_chunk_rows``) written straight into the
NCHW output; backward builds the columns of g once per block for both gradients (stride 1: the
input gradient is the convolution of g with the flipped kernel, the weight gradient their
product with x). ``Convolution`` (ops/convolution.py) and the transposed convolution choose this
path through ``image_plan``.
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from ..backend.registry import is_cpu_array
from ..backend.threads import blas_on_one_thread, get_num_threads
from .im2col import Pad, Pair, col2im_images, im2col_images, images_scratch

__all__ = ["image_block", "image_plan", "input_gradient"]

_BIG_COLUMNS = 5 << 21  # whole-batch columns above 10 MiB are not kept for backward
_CACHE_BYTES = 5 << 19  # 2.5 MiB of columns per image block (8 images in the ResNet step)


def _small_columns(n: int, k: int, per_image: int, itemsize: int) -> bool:
    """Whether the batch's columns (``k`` rows of ``n * per_image``) take <= _BIG_COLUMNS."""
    return k * per_image * itemsize * n <= _BIG_COLUMNS


_IMAGE_WORK = 1 << 20  # multiply-adds of one image's products from which image blocks pay
# output pixels an image below which the whole batch's one product wins: narrower per-image
# products read the weights again for every image (3x3 convs fwd+bwd, one thread, images /
# whole batch: 512 channels on 7x7 1.39x, 6x6 1.52x, 4x4 1.84x, 2x2 4.7x; 256 on 6x6 1.22x, on
# 8x8 0.91x; CIFAR ResNet's last stage, 512 on 4x4: 157.7 -> 85.6 ms, torch 74)
_IMAGE_PIXELS = 64
_WEIGHTS_ONLY_WORK = 1 << 14  # the same when only the weight gradient is wanted (a first layer)
_WEIGHTS_ONLY_ROWS = 16  # ... and each group has this many output channels (8: 13% slower)


def image_block(
    n: int,
    k: int,
    per_image: int,
    itemsize: int,
    threads: int = 1,
    work: int = 0,
    weights_only: int = 0,
) -> int:
    """Images per block of the image-major path, which runs when the products run on one
    thread: about _CACHE_BYTES of columns (still in cache when the products read them), at
    most the batch. 0 (the whole-batch path) on several threads (a product per block or chunk
    would be a BLAS thread hand-off each: 2x slower on a busy 2-core machine), or when both the
    batch's columns and each image's products (``work`` multiply-adds) are small: there the
    calls per block cost more than they save (the MNIST CNN's convs: 10% slower), and under
    _IMAGE_PIXELS output pixels an image (the products too narrow). A conv
    training only its weights (a first layer; ``weights_only`` is then its output channels per
    group) takes blocks from far less work, the whole-batch path's output and g transposes
    costing it more (the ResNet stem: 2x slower), unless its products have under
    _WEIGHTS_ONLY_ROWS rows."""
    least = _WEIGHTS_ONLY_WORK if weights_only >= _WEIGHTS_ONLY_ROWS else _IMAGE_WORK
    if threads > 1 or per_image < _IMAGE_PIXELS:
        return 0
    if work < least and _small_columns(n, k, per_image, itemsize):
        return 0
    return min(n, max(1, _CACHE_BYTES // max(1, k * per_image * itemsize)))


def image_plan(
    xp: Any, arr: Any, w_shape: tuple, groups: int, per_image: int, weights_only: bool = False
) -> tuple[int, bool]:
    """(images per block, BLAS held to one thread) for a convolution of ``arr`` with weights of
    ``w_shape`` (O, C/g, kh, kw) giving ``per_image`` output pixels: image_block's rule on the
    CPU (0, the whole batch, on devices: image blocks are for the CPU's cache). Small weights on
    several threads take image blocks with BLAS held to one thread (their products run on one
    anyway; the whole-batch path's copies are what is saved). ``weights_only``: only the
    weights need a gradient (a first layer)."""
    if not is_cpu_array(arr):
        return 0, False
    o, k = w_shape[0], math.prod(w_shape[1:])
    threads = get_num_threads()
    held = threads > 1 and _small_weights(xp, o // groups, k)
    work = o * k * per_image  # one image's multiply-adds (all groups)
    rows = o // groups if weights_only else 0
    nb = image_block(
        arr.shape[0], k * groups, per_image, arr.itemsize, 1 if held else threads, work, rows
    )
    return nb, bool(held) and nb > 0


_CHUNK_COLUMNS = 64  # columns per product for small weights (below)
_SMALL_PRODUCT = 10**6  # M*N*K up to which OpenBLAS (SkylakeX) runs its small-matrix kernels


def _small_weights(xp: Any, og: int, k: int) -> bool:
    """Whether (og x k) weights times _CHUNK_COLUMNS columns is, on numpy, a product OpenBLAS
    (SkylakeX) runs in its direct kernel: unpacked, and on one thread whatever the count."""
    return xp is np and og * k * _CHUNK_COLUMNS <= _SMALL_PRODUCT


def _blas_held(held: bool) -> Any:
    """A context holding numpy's BLAS to one thread when ``held`` (else a no-op)."""
    return blas_on_one_thread() if held else contextlib.nullcontext()


def _chunk_rows(xp: Any, w3: Any, ho: int, wo: int) -> int:
    """Output rows per product: the whole image, or for small weights w3 (g, O/g, K) on numpy
    the most rows dividing Ho within _CHUNK_COLUMNS columns, so that each product is small
    enough for BLAS's unpacked kernels (32x288 weights: 1.6x faster on 64 columns than 256)."""
    og, k = w3.shape[1:]
    if wo > _CHUNK_COLUMNS or ho * wo <= _CHUNK_COLUMNS or not _small_weights(xp, og, k):
        return ho
    return max(d for d in range(1, ho + 1) if ho % d == 0 and d * wo <= _CHUNK_COLUMNS)


_KEPT = threading.local()  # per thread: the last few scratch buffers, by what they are for
_KEPT_BUFFERS = 8
_KEPT_BYTES = 16 << 20  # bigger buffers are not kept (their products dwarf the page faults)


def _kept(key: tuple, make: Callable[[], Any]) -> Any:
    """``make()``'s buffer for ``key``, kept on this thread across calls (the last
    _KEPT_BUFFERS keys): scratch of MiBs allocated per call lands on fresh pages, which fault at
    ~1 us per 4 KiB (a fifth of the ResNet step's time in a process without torch). The callers
    overwrite what they read, so a kept buffer's contents never matter; ``key`` names the role,
    so that two buffers one call uses at once are never the same."""
    kept = getattr(_KEPT, "buffers", None)
    if kept is None:
        kept = _KEPT.buffers = {}
    if key in kept:
        buf = kept.pop(key)
    else:
        buf = make()
        if buf is not None and buf.nbytes > _KEPT_BYTES:
            return buf
        if len(kept) >= _KEPT_BUFFERS:
            del kept[next(iter(kept))]  # the least recently used
    kept[key] = buf
    return buf


def _empty(xp: Any, role: str, shape: tuple, dtype: Any) -> Any:
    """An uninitialized scratch array for ``role``, kept across calls (see _kept)."""
    return _kept((role, xp, shape, str(dtype)), lambda: xp.empty(shape, dtype=dtype))


def _planes(xp: Any, shape: tuple, conv: tuple, dtype: Any) -> Any:
    """images_scratch for ``shape`` and ``conv`` (kernel, stride, pad, dilation), kept across
    calls (see _kept: its pad rows stay zero; im2col_images rewrites what it reads)."""
    key = ("planes", xp, shape, *conv, str(dtype))
    return _kept(key, lambda: images_scratch(xp, shape, *conv, dtype))


def _columns(xp: Any, nb: int, k: int, ho: int, wo: int, rows: int, dtype: Any) -> Any:
    """A block's column buffer: (nb, Ho/rows, K, rows*Wo), reused by every block."""
    return _empty(xp, "columns", (nb, ho // rows, k, rows * wo), dtype)


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
    scratch = _planes(xp, (nb, *arr.shape[1:]), geometry[:4], arr.dtype)
    for s in range(0, n, nb):
        block = arr[s : s + nb]
        res = _images_conv(xp, block, w3, geometry[:4], cols, out[s : s + nb], scratch)
        if bias is not None:
            res += bias.reshape(groups, o // groups, 1)
    return out


def input_gradient(xp: Any, shape: tuple, w: Any, g: Any, geometry: tuple, nb: int) -> Any:
    """The convolution's input gradient alone (a transposed convolution's forward) for inputs
    of ``shape``: _blocked_backward without the weight gradient, which reads of the input only
    its shape and dtype (given here as a zero-stride view)."""
    shaped = xp.broadcast_to(xp.zeros((), dtype=g.dtype), shape)
    return _blocked_backward(xp, shaped, w, g, geometry, nb, True, False)[0]


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
    cols = _empty(xp, "columns", (nb, groups * k, ho * wo), arr.dtype)
    scratch = _planes(xp, (nb, c, h, wd), geometry[:4], arr.dtype) if nw else None
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
    scratch = _planes(xp, (nb, *g.shape[1:]), conv, g.dtype)
    if nw:  # per-block buffers, allocated once
        x5 = _empty(xp, "pixel-major x", (nb, q, groups, lc, cg), arr.dtype)
        shape = (nb, q, groups, og * kh * kw, cg)
        parts = _empty(xp, "weight-gradient parts", shape, xp.result_type(g, arr))
        ones = xp.ones(nb * q, dtype=parts.dtype)
    for s in range(0, n, nb):
        m = min(nb, n - s)
        _images_conv(xp, g[s : s + m], wf, conv, gcols, gx[s : s + m], scratch)
        if nw:
            # x's chunks pixel-major: a plain (no transpose) product, which BLAS runs faster
            x5[:m] = arr[s : s + m].reshape(m, groups, cg, q, lc).transpose(0, 3, 1, 4, 2)
            gc5 = gcols[:m].reshape(m, q, groups, og * kh * kw, lc)
            xp.matmul(gc5, x5[:m], out=parts[:m])  # summed below as a product with ones
            gwf += (ones[: m * q] @ parts[:m].reshape(m * q, -1)).reshape(gwf.shape)
    if gwf is None:
        return gx, None
    gw = gwf.reshape(groups, og, kh, kw, cg)[:, :, ::-1, ::-1].transpose(0, 1, 4, 2, 3)
    return gx, xp.ascontiguousarray(gw.reshape(w.shape))
