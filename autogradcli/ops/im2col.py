"""im2col and col2im: an (N, C, H, W) image as the columns (C*kh*kw, N*Ho*Wo) a convolution
multiplies, and back, channel-major (C, N, H, W) throughout.

``Im2Col`` turns the input into columns through strided views and copies; ``Col2Im`` is its
adjoint (a loop over the kh*kw kernel offsets, each a strided slab add, never over batch or
pixels). Each is the other's backward, so a convolution built from them has grad-of-grad.

``im2col_images``/``col2im_images`` are the image-major (N, C*kh*kw, Ho*Wo) arrays the
convolution's image blocks use (optionally in chunks of output rows), on arrays, no graph.
"""

from __future__ import annotations

from typing import Any

from ..autograd.function import Function
from ..backend import as_strided
from ..tensor.tensor import Tensor
from ._util import array_module

Pair = tuple[int, int]
Pad = tuple[int, int, int, int]  # top, bottom, left, right

__all__ = [
    "Col2Im",
    "Im2Col",
    "Planes",
    "channel_major",
    "col2im",
    "col2im_images",
    "im2col",
    "im2col_images",
    "images_scratch",
]


def _out_size(size: int, k: int, s: int, lo: int, hi: int, d: int) -> int:
    return (size + lo + hi - d * (k - 1) - 1) // s + 1


def _out_hw(h: int, w: int, kernel: Pair, stride: Pair, pad: Pad, dilation: Pair) -> Pair:
    """The output's (Ho, Wo) for an (H, W) input."""
    ho = _out_size(h, kernel[0], stride[0], pad[0], pad[1], dilation[0])
    return ho, _out_size(w, kernel[1], stride[1], pad[2], pad[3], dilation[1])


def channel_major(arr: Any) -> Any:
    """``arr`` (N, C, ...) viewed as (C, N, ...), the layout the kernels work in (no copy)."""
    return arr.swapaxes(0, 1)


def _row_span(i: int, d: int, p: int, rows_out: int, rows_in: int) -> tuple[int, int, int]:
    """Kernel row ``i``'s offset ``di`` into the input and the output rows [y0, y1) it reaches."""
    di = i * d - p
    return di, max(0, -di), min(rows_out, rows_in - di)


def _lines(arr: Any, c: int, n: int, h: int, w: int) -> Any:
    """Channel-major (C, N, H, W) ``arr`` as (C, N*H*W) lines when that is a view, else None."""
    item = arr.itemsize
    if arr.strides[1:] == (h * w * item, w * item, item):
        return arr.reshape(c, n * h * w)
    return None


def _im2col_shifted(xp: Any, src: Any, kernel: Pair, pad: Pad, dilation: Pair, ho: int) -> Any:
    """Stride-1 columns when Wo == W: each kernel offset is a shift of the flattened images
    (long contiguous copies), then the rows and columns it does not reach are zeroed."""
    c, n, h, w = src.shape
    (kh, kw), (dh, dw) = kernel, dilation
    lines = _lines(src, c, n, h, w) if ho == h else None
    planes = src.reshape(c, n, h * w) if lines is None else None
    out = xp.empty((c, kh, kw, n, ho * w), dtype=src.dtype)
    size = n * h * w
    for i in range(kh):
        di, y0, y1 = _row_span(i, dh, pad[0], ho, h)
        for j in range(kw):
            dj = j * dw - pad[2]
            dst = out[:, i, j]
            if y1 <= y0 or abs(dj) >= w:
                dst[...] = 0
                continue
            shift = di * w + dj
            if lines is not None:  # one copy over all images; what crosses images is zeroed
                a, b = max(0, -shift), min(size, size - shift)
                dst.reshape(c, size)[:, a:b] = lines[:, a + shift : b + shift]
            else:
                a, b = y0 * w + max(0, -dj), y1 * w - max(0, dj)
                dst[:, :, a:b] = planes[:, :, a + shift : b + shift]
            grid = dst.reshape(c, n, ho, w)
            if y0:
                grid[:, :, :y0] = 0
            if y1 < ho:
                grid[:, :, y1:] = 0
            if dj > 0:
                grid[:, :, y0:y1, w - dj :] = 0
            elif dj < 0:
                grid[:, :, y0:y1, :-dj] = 0
    return out.reshape(c * kh * kw, n * ho * w)


def _col2im_shifted(
    xp: Any, arr: Any, shape: tuple[int, ...], kernel: Pair, pad: Pad, dilation: Pair, ho: int
) -> Any:
    """The adjoint of _im2col_shifted: per kernel row, one shifted add of all kernel columns'
    planes, then per kernel column one shifted add of the row sums (unreached columns zeroed)."""
    n, c, h, w = shape
    (kh, kw), (dh, dw) = kernel, dilation
    rows = xp.zeros((c, kw, n, h * w), dtype=arr.dtype)
    if ho == h:  # whole-batch lines: rows a shift carries across images are put back after
        size = n * h * w
        c5 = arr.reshape(c, kh, kw, size)
        lines = rows.reshape(c, kw, size)
        grid = rows.reshape(c, kw, n, h, w)
        for i in range(kh):
            di = i * dh - pad[0]
            if abs(di) >= h:
                continue
            keep = slice(0, di) if di > 0 else slice(h + di, h)
            saved = grid[:, :, :, keep].copy() if di else None
            a, b = max(0, di * w), min(size, size + di * w)
            lines[:, :, a:b] += c5[:, i, :, a - di * w : b - di * w]
            if saved is not None:
                grid[:, :, :, keep] = saved
    else:
        c5 = arr.reshape(c, kh, kw, n, ho * w)
        for i in range(kh):
            di, y0, y1 = _row_span(i, dh, pad[0], ho, h)
            if y1 > y0:
                rows[:, :, :, (y0 + di) * w : (y1 + di) * w] += c5[:, i, :, :, y0 * w : y1 * w]
    out = None
    order = sorted(range(kw), key=lambda j: j * dw != pad[2])  # the unshifted column first
    rows = rows.reshape(c, kw, n * h * w)
    total = n * h * w
    for j in order:
        dj = j * dw - pad[2]
        sj = rows[:, j]
        if dj == 0 and out is None:
            out = sj
            continue
        if out is None:
            out = xp.zeros((c, total), dtype=arr.dtype)
        if abs(dj) >= w:
            continue
        grid = sj.reshape(c, n, h, w)
        if dj > 0:  # output column x + dj gets column x; the last dj would wrap: zeroed
            grid[:, :, :, w - dj :] = 0
            out[:, dj:] += sj[:, : total - dj]
        else:
            grid[:, :, :, :-dj] = 0
            out[:, : total + dj] += sj[:, -dj:]
    return out.reshape(c, n, h, w)


def _zero_padded(xp: Any, arr: Any, pad: Pad) -> Any:
    """``arr`` (.., .., H, W) copied between zero borders of ``pad``; ``arr`` itself when none."""
    pt, pb, pl, pr = pad
    if not (pt or pb or pl or pr):
        return arr
    *lead, h, w = arr.shape
    buf = xp.zeros((*lead, h + pt + pb, w + pl + pr), dtype=arr.dtype)
    buf[..., pt : pt + h, pl : pl + w] = arr
    return buf


def _shifts_apply(w: int, wo: int, stride: Pair) -> bool:
    return stride == (1, 1) and wo == w


def im2col(arr: Any, kernel: Pair, stride: Pair, pad: Pad, dilation: Pair) -> Any:
    """The columns (C*kh*kw, N*Ho*Wo) of (N, C, H, W) ``arr``: one strided view, one copy."""
    xp = array_module(arr)
    n, c, h, w = arr.shape
    (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
    ho, wo = _out_hw(h, w, kernel, stride, pad, dilation)
    src = channel_major(arr)
    if _shifts_apply(w, wo, stride):
        return _im2col_shifted(xp, src, kernel, pad, dilation, ho)
    src = _zero_padded(xp, src, pad)
    s_c, s_n, s_h, s_w = src.strides
    view = as_strided(
        xp, src, (c, kh, kw, n, ho, wo), (s_c, s_h * dh, s_w * dw, s_n, s_h * sh, s_w * sw)
    )
    return view.reshape(c * kh * kw, n * ho * wo)


def col2im(
    arr: Any, shape: tuple[int, ...], kernel: Pair, stride: Pair, pad: Pad, dilation: Pair
) -> Any:
    """The adjoint of im2col: columns (C*kh*kw, N*Ho*Wo) summed into channel-major (C, N, H, W)
    (an (N, C, H, W) view of it is returned)."""
    xp = array_module(arr)
    n, c, h, w = shape
    ho, wo = _out_hw(h, w, kernel, stride, pad, dilation)
    if _shifts_apply(w, wo, stride):
        return channel_major(_col2im_shifted(xp, arr, shape, kernel, pad, dilation, ho))
    pt, pb, pl, pr = pad
    c6 = arr.reshape(c, *kernel, n, ho, wo)
    buf = xp.zeros((c, n, h + pt + pb, w + pl + pr), dtype=arr.dtype)
    _scatter_taps(buf, lambda i, j: c6[:, i, j], kernel, stride, dilation, (ho, wo))
    return channel_major(buf[:, :, pt : pt + h, pl : pl + w])


def col2im_pixel_major(
    arr: Any, shape: tuple[int, ...], kernel: Pair, stride: Pair, pad: Pad, dilation: Pair
) -> Any:
    """col2im of columns in pixel-major order, (C*kh*kw, Ho*Wo*N), as contiguous (N, C, H, W):
    each tap is added with the batch innermost (rows of N, not of Wo: a strided convolution's
    small outputs make rows of 4-7 elements that numpy adds one at a time), then one transposing
    copy. On 7x7 and 4x4 outputs 1.3-2.8x faster than col2im with the output's copy, 1.12-1.13x
    slower on 64->128 channels at 8x8 and 16x16 (bench/bench_strided_conv.py)."""
    xp = array_module(arr)
    n, c, h, w = shape
    ho, wo = _out_hw(h, w, kernel, stride, pad, dilation)
    pt, pb, pl, pr = pad
    c6 = arr.reshape(c, *kernel, ho, wo, n)
    buf = xp.zeros((c, h + pt + pb, w + pl + pr, n), dtype=arr.dtype)
    taps = lambda i, j: c6[:, i, j].transpose(0, 3, 1, 2)  # noqa: E731
    _scatter_taps(buf.transpose(0, 3, 1, 2), taps, kernel, stride, dilation, (ho, wo))
    return xp.ascontiguousarray(buf[:, pt : pt + h, pl : pl + w].transpose(3, 0, 1, 2))


def _scatter_taps(
    buf: Any, tap: Any, kernel: Pair, stride: Pair, dilation: Pair, out_hw: Pair
) -> None:
    """Add each kernel offset's columns ``tap(i, j)`` (.., .., Ho, Wo) into its strided slab of
    the padded (.., .., Hp, Wp) ``buf``; written, not added, when the windows are disjoint along
    both dims (every slab is then reached once)."""
    (kh, kw), (sh, sw), (dh, dw), (ho, wo) = kernel, stride, dilation, out_hw
    disjoint = sh >= dh * (kh - 1) + 1 and sw >= dw * (kw - 1) + 1
    for i in range(kh):
        for j in range(kw):
            rows = slice(i * dh, i * dh + sh * (ho - 1) + 1, sh)
            target = buf[:, :, rows, j * dw : j * dw + sw * (wo - 1) + 1 : sw]
            if disjoint:
                target[...] = tap(i, j)
            else:
                target += tap(i, j)


def _images_shifted(
    xp: Any,
    src: Any,
    dst: Any,
    pad: Pad,
    dilation: Pair,
    scratch: Planes | None = None,
) -> None:
    """Stride-1 image-major columns when Wo == W, into ``dst`` (N, Q, C, kh, kw, R, W): the
    images copied between zero pad rows (into ``scratch``, see images_scratch), then per kernel
    column one copy of a sliding-window view.
    A flat shift by ``dj`` fills its first (last) ``|dj|`` output columns of each row from the
    neighbouring row, from plane columns that kernel column never reads otherwise: those plane
    columns are zeroed before its copy (a few thin strips of the planes, not of the columns)."""
    n, c, h, w = src.shape
    _, q, *_, r, _ = dst.shape
    kh, kw = dst.shape[3:5]
    pt, pb, pl, _ = pad
    hp = h + pt + pb
    if scratch is None:
        scratch = Planes(xp.zeros(pl + n * c * hp * w + pad[3], dtype=dst.dtype))
    buf = scratch.buf
    planes = buf[pl : buf.size - pad[3]].reshape(-1, c, hp, w)
    rows = planes[:, :, pt : pt + h]  # every plane's image rows, the stale ones' too
    image = rows[:n]
    image[...] = src
    window = scratch.windows.get((n, q, r))
    if window is None:  # the same view block after block: built once (as_strided costs ~6 us)
        it = buf.itemsize
        plane, line = hp * w * it, w * it
        strides = (c * plane, plane, dilation[0] * line, dilation[1] * it, r * line, it)
        window = as_strided(xp, buf, (n, c, kh, kw, q, r * w), strides)
        scratch.windows[(n, q, r)] = window
    taps = dst.reshape(n, q, c, kh, kw, r * w).transpose(0, 1, 4, 2, 3, 5)  # j third
    view = window.transpose(0, 4, 3, 1, 2, 5)
    shifts = [j * dilation[1] - pl for j in range(kw)]
    # unshifted first, then leftward shifts (more right columns hidden each), then rightward
    order = sorted(range(kw), key=lambda j: (shifts[j] > 0, abs(shifts[j])))
    right, left = w, 0  # image columns [right, w) and [0, left) are zero now
    for j in order:
        dj = shifts[j]
        if abs(dj) >= w:
            taps[:, :, j] = 0
            continue
        if dj < 0 and w + dj < right:
            rows[..., w + dj : right] = 0
            right = w + dj
        if dj > 0:
            if right < w:  # back from the leftward shifts: the right columns restored
                image[..., right:] = src[..., right:]
                right = w
            if dj > left:
                rows[..., left:dj] = 0
                left = dj
        taps[:, :, j] = view[:, :, j]


class Planes:
    """The zero-padded planes ``im2col_images`` copies images into (a flat buffer, ``buf``) and
    its sliding-window views over them, by (images, chunks, rows per chunk)."""

    __slots__ = ("buf", "windows")

    def __init__(self, buf: Any) -> None:
        self.buf = buf
        self.windows: dict[tuple[int, int, int], Any] = {}

    @property
    def nbytes(self) -> int:
        """The buffer's size in bytes."""
        return self.buf.nbytes


def images_scratch(
    xp: Any,
    shape: tuple[int, ...],
    kernel: Pair,
    stride: Pair,
    pad: Pad,
    dilation: Pair,
    dtype: Any,
) -> Planes | None:
    """Zeroed Planes for the padded planes of up to ``shape`` (N, C, H, W) images that
    im2col_images reuses block after block (it writes only the image rows: the pad rows stay
    zero; what it reads past a short block's end lands on plane columns it zeroes), or None
    where it takes the strided path (no planes)."""
    n, c, h, w = shape
    if not _shifts_apply(w, _out_hw(h, w, kernel, stride, pad, dilation)[1], stride):
        return None
    pt, pb, pl, pr = pad
    return Planes(xp.zeros(pl + n * c * (h + pt + pb) * w + pr, dtype=dtype))


def _zero_wrapped(grid: Any, shifts: list[int]) -> None:
    """Zero, in columns viewed (..., kw, rows, W), the output columns that kernel column j's
    flat shift ``shifts[j]`` fills from the neighbouring row (the last ``dj``, or the first
    ``-dj``)."""
    w = grid.shape[-1]
    for j, dj in enumerate(shifts):
        if abs(dj) >= w:
            grid[..., j, :, :] = 0
        elif dj > 0:
            grid[..., j, :, w - dj :] = 0
        elif dj < 0:
            grid[..., j, :, :-dj] = 0


def im2col_images(
    arr: Any,
    kernel: Pair,
    stride: Pair,
    pad: Pad,
    dilation: Pair,
    out: Any = None,
    rows: int = 0,
    scratch: Planes | None = None,
) -> Any:
    """Image-major columns (N, C*kh*kw, Ho*Wo) of (N, C, H, W) ``arr``, rows ordered (c, i, j),
    written into ``out`` (a C-contiguous array) when given. With ``rows`` (dividing Ho) each
    image's columns are in chunks of that many output rows: (N, Ho/rows, C*kh*kw, rows*Wo).
    ``scratch`` (from images_scratch, for at least N images) saves re-padding per call."""
    xp = array_module(arr)
    n, c, h, w = arr.shape
    (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
    ho, wo = _out_hw(h, w, kernel, stride, pad, dilation)
    r = rows or ho
    if out is None:
        shape = (n, ho // r, c * kh * kw, r * wo) if rows else (n, c * kh * kw, ho * wo)
        out = xp.empty(shape, dtype=arr.dtype)
    dst = out.reshape(n, ho // r, c, kh, kw, r, wo)
    if _shifts_apply(w, wo, stride):
        _images_shifted(xp, arr, dst, pad, dilation, scratch)
        return out
    src = _zero_padded(xp, arr, pad)
    s_n, s_c, s_h, s_w = src.strides
    strides = (s_n, s_c, s_h * dh, s_w * dw, s_h * sh * r, s_h * sh, s_w * sw)
    window = as_strided(xp, src, (n, c, kh, kw, ho // r, r, wo), strides)
    dst[...] = window.transpose(0, 4, 1, 2, 3, 5, 6)
    return out


def col2im_images(
    cols: Any,
    shape: tuple[int, ...],
    kernel: Pair,
    stride: Pair,
    pad: Pad,
    dilation: Pair,
    out: Any,
) -> Any:
    """The adjoint of im2col_images: image-major columns (N, C*kh*kw, Ho*Wo) summed into ``out``,
    a C-contiguous (N, C, H, W) array. ``cols`` is used as scratch (its contents are lost)."""
    n, c, h, w = shape
    ho, wo = _out_hw(h, w, kernel, stride, pad, dilation)
    if _shifts_apply(w, wo, stride):
        _images_unshifted(cols.reshape(n, c, *kernel, ho * wo), out, pad, dilation)
        return out
    pt, pb, pl, pr = pad
    c6 = cols.reshape(n, c, *kernel, ho, wo)
    buf = array_module(cols).zeros((n, c, h + pt + pb, w + pl + pr), dtype=cols.dtype)
    _scatter_taps(buf, lambda i, j: c6[:, :, i, j], kernel, stride, dilation, (ho, wo))
    out[...] = buf[:, :, pt : pt + h, pl : pl + w]
    return out


def _center_tap(kh: int, kw: int, pad: Pad, dilation: Pair) -> tuple[int, int] | None:
    """The kernel offset (i, j) that reads each output's own pixel (no shift), if there is one."""
    i, j = pad[0] // dilation[0], pad[2] // dilation[1]
    if i < kh and j < kw and i * dilation[0] == pad[0] and j * dilation[1] == pad[2]:
        return i, j
    return None


def _images_unshifted(c5: Any, out: Any, pad: Pad, dilation: Pair) -> None:
    """The adjoint of _images_shifted: the columns' wrapped entries zeroed (in place), then per
    kernel offset one shifted add of every plane into ``out``; the unshifted offset, when it
    covers the whole output, is copied first instead of added to zeros."""
    n, c, kh, kw, size = c5.shape
    h, w = out.shape[2:]
    ho = size // w
    c4 = c5.reshape(n * c, kh, kw, size)
    _zero_wrapped(c4.reshape(n * c, kh, kw, ho, w), [j * dilation[1] - pad[2] for j in range(kw)])
    flat = out.reshape(n * c, h * w)
    center = _center_tap(kh, kw, pad, dilation) if ho == h else None
    if center is None:
        flat[...] = 0
    else:
        flat[...] = c4[:, center[0], center[1]]
    for i in range(kh):
        di, y0, y1 = _row_span(i, dilation[0], pad[0], ho, h)
        for j in range(kw):
            dj = j * dilation[1] - pad[2]
            if (i, j) == center or y1 <= y0 or abs(dj) >= w:
                continue
            shift, a, b = di * w + dj, y0 * w + max(0, -dj), y1 * w - max(0, dj)
            flat[:, a + shift : b + shift] += c4[:, i, j, a:b]


class Im2Col(Function):
    """(N, C, H, W) -> columns (C*kh*kw, N*Ho*Wo), rows ordered (c, i, j), columns (n, oh, ow)."""

    _backward_name = "Im2ColBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, kernel: Pair, stride: Pair, pad: Pad, dilation: Pair) -> Any:
        ctx.geometry = (x._data.shape, kernel, stride, pad, dilation)
        return im2col(x._data, kernel, stride, pad, dilation)

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
        ctx.geometry = (kernel, stride, pad, dilation)
        return col2im(cols._data, shape, kernel, stride, pad, dilation)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, ...]:
        return (Im2Col.apply(g, *ctx.geometry), None, None, None, None, None)
