"""2-D max and average pooling through strided slices: one slab op per kernel offset.

A pooled output is built from the kh*kw strided slices ``x[..., i*dh::sh, j*dw::sw]`` (a loop
over kernel offsets, never over batch or pixels). The work runs in the input's own memory order
(either (N, C, H, W) or the channel-major (C, N, H, W) that conv outputs have), so no transpose
copies. Max pooling keeps, per output, the kernel offset of its (first) maximum; its backward
scatters through those offsets and the scatter's backward gathers, so grad-of-grad works.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

from ..autograd.function import Function
from ..tensor.tensor import Tensor, wrap
from ._util import array_module
from .convolution import _pair
from .linalg import matmul

TENSOR_METHODS: dict[str, Any] = {}
__all__ = ["PoolGeometry", "adaptive_avg_pool2d", "avg_pool2d", "max_pool2d", "pool_geometry"]


class PoolGeometry(NamedTuple):
    """Where the windows lie: input (N, C, H, W), output (Ho, Wo), pads incl. ceil overhang."""

    shape: tuple[int, int, int, int]
    out: tuple[int, int]
    kernel: tuple[int, int]
    stride: tuple[int, int]
    pad: tuple[int, int, int, int]  # top, bottom, left, right
    dilation: tuple[int, int]

    def slices(self) -> list[tuple[slice, slice]]:
        """The (rows, cols) slices of the padded input for each kernel offset, row-major."""
        (ho, wo), (kh, kw), (sh, sw), (dh, dw) = self.out, self.kernel, self.stride, self.dilation
        return [
            (
                slice(i * dh, i * dh + sh * (ho - 1) + 1, sh),
                slice(j * dw, j * dw + sw * (wo - 1) + 1, sw),
            )
            for i in range(kh)
            for j in range(kw)
        ]

    def disjoint(self) -> bool:
        """True when no input position lies in two windows (a scatter then needs no adds)."""
        (kh, kw), (sh, sw), (dh, dw) = self.kernel, self.stride, self.dilation
        return sh >= dh * (kh - 1) + 1 and sw >= dw * (kw - 1) + 1

    def tiles(self) -> bool:
        """True when the windows cover the (unpadded) input exactly once."""
        h, w = self.shape[2], self.shape[3]
        return (
            self.disjoint()
            and self.pad == (0, 0, 0, 0)
            and self.dilation == (1, 1)
            and self.kernel == self.stride
            and h == self.out[0] * self.kernel[0]
            and w == self.out[1] * self.kernel[1]
        )


def _one_dim(size: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> tuple[int, int]:
    """Output length and the extra high-side padding the last (ceil-mode) window needs."""
    if p * 2 > k:
        raise RuntimeError(
            f"pad should be at most half of effective kernel size, but got pad={p}, "
            f"kernel_size={k} and dilation={d}"
        )
    span = size + 2 * p - d * (k - 1) - 1
    out = (span + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    if out <= 0:
        raise RuntimeError(
            f"Given input size: {size}, kernel {k}, stride {s}, padding {p}, dilation {d}: "
            "calculated output size is too small"
        )
    extra = max(0, (out - 1) * s + d * (k - 1) + 1 - (size + 2 * p))
    return out, extra


def _pool_args(
    kernel: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    to: Callable[[Any, str], Any] = _pair,
) -> tuple[Any, Any, Any, Any]:
    """(kernel, stride, padding, dilation) each through ``to``; stride None/empty = kernel."""
    k = to(kernel, "kernel_size")
    s = k if stride is None or stride == [] or stride == () else to(stride, "stride")
    return k, s, to(padding, "padding"), to(dilation, "dilation")


def pool_geometry(
    shape: tuple[int, ...], kernel: Any, stride: Any, padding: Any, dilation: Any, ceil_mode: bool
) -> PoolGeometry:
    """Normalise pooling arguments (ints or pairs; stride None/empty = kernel) for an NCHW shape."""
    k, s, p, d = _pool_args(kernel, stride, padding, dilation)
    if min(k) <= 0 or min(s) <= 0 or min(d) <= 0:
        raise RuntimeError("kernel_size, stride and dilation must be greater than zero")
    n, c, h, w = (int(v) for v in shape)
    ho, eh = _one_dim(h, k[0], s[0], p[0], d[0], ceil_mode)
    wo, ew = _one_dim(w, k[1], s[1], p[1], d[1], ceil_mode)
    return PoolGeometry((n, c, h, w), (ho, wo), k, s, (p[0], p[0] + eh, p[1], p[1] + ew), d)


def _channel_major(arr: Any) -> bool:
    return arr.strides[1] > arr.strides[0]


def _work(arr: Any, swapped: bool) -> Any:
    return arr.swapaxes(0, 1) if swapped else arr


def _padded(xp: Any, arr: Any, geo: PoolGeometry, fill: float) -> Any:
    """``arr`` (work layout) inside a buffer of the padded size filled with ``fill``."""
    pt, pb, pl, pr = geo.pad
    if not (pt or pb or pl or pr):
        return arr
    a, b, h, w = arr.shape
    buf = xp.full((a, b, h + pt + pb, w + pl + pr), fill, dtype=arr.dtype)
    buf[:, :, pt : pt + h, pl : pl + w] = arr
    return buf


def _padded_buffer(xp: Any, geo: PoolGeometry, swapped: bool, dtype: Any, empty: bool) -> Any:
    """A buffer of the padded input's size in the work layout: zeros, or uninitialised when
    ``empty`` (the caller then writes every element)."""
    n, c, h, w = geo.shape
    pt, pb, pl, pr = geo.pad
    a, b = (c, n) if swapped else (n, c)
    shape = (a, b, h + pt + pb, w + pl + pr)
    return xp.empty(shape, dtype=dtype) if empty else xp.zeros(shape, dtype=dtype)


def _cropped(buf: Any, geo: PoolGeometry) -> Any:
    pt, pb, pl, pr = geo.pad
    if not (pt or pb or pl or pr):
        return buf
    return buf[:, :, pt : buf.shape[2] - pb, pl : buf.shape[3] - pr]


class MaxPool2d(Function):
    """Max over each window; ``ctx.argmax`` keeps the kernel offset of the first maximum."""

    _backward_name = "MaxPool2DWithIndicesBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, geo: PoolGeometry, return_indices: bool) -> Any:
        arr = x._data
        xp = array_module(arr)
        swapped = _channel_major(arr)
        buf = _padded(xp, _work(arr, swapped), geo, -math.inf)
        slices = geo.slices()
        rows, cols = slices[0]
        out = buf[:, :, rows, cols].copy()
        need_idx = return_indices or ctx.needs_input_grad[0]
        idx = (
            xp.zeros(out.shape, dtype="int8" if len(slices) < 128 else "int32")
            if need_idx
            else None
        )
        for k in range(1, len(slices)):
            rows, cols = slices[k]
            window = buf[:, :, rows, cols]
            if need_idx:  # idx += (window > out) * (k - idx): branch-free, ~10x copyto(where=)
                step = xp.subtract(k, idx, dtype=idx.dtype)
                step *= xp.greater(window, out).view(
                    idx.dtype if idx.dtype.itemsize == 1 else "bool"
                )
                idx += step
            xp.maximum(out, window, out=out)
        ctx.geo = geo
        if need_idx:
            ctx.argmax = _work(idx, swapped)
        out = _work(out, swapped)
        if not return_indices:
            return out
        flat = wrap(_flat_indices(xp, ctx.argmax, geo))
        ctx.mark_non_differentiable(flat)
        return out, flat

    @staticmethod
    def backward(ctx: Any, g: Tensor, *_: Any) -> tuple[Any, None, None]:
        return _MaxScatter.apply(g, ctx.argmax, ctx.geo), None, None


def _flat_indices(xp: Any, argmax: Any, geo: PoolGeometry) -> Any:
    """torch's indices: the flat position h*W + w of each maximum within its (H, W) plane."""
    kw, (sh, sw), (dh, dw) = geo.kernel[1], geo.stride, geo.dilation
    (ho, wo), w = geo.out, geo.shape[3]
    off = argmax.astype("int64")
    rows = xp.arange(ho, dtype="int64")[:, None] * sh - geo.pad[0] + (off // kw) * dh
    cols = xp.arange(wo, dtype="int64")[None, :] * sw - geo.pad[2] + (off % kw) * dw
    return rows * w + cols


class _MaxScatter(Function):
    """Pooled-size ``g`` routed to each window's argmax: max pooling's input gradient."""

    _backward_name = "MaxPool2DWithIndicesBackwardBackward0"

    @staticmethod
    def forward(ctx: Any, g: Tensor, argmax: Any, geo: PoolGeometry) -> Any:
        xp = array_module(g._data)
        swapped = _channel_major(argmax)
        gw, idx = _work(g._data, swapped), _work(argmax, swapped)
        buf = _padded_buffer(xp, geo, swapped, gw.dtype, geo.tiles())
        disjoint = geo.disjoint()
        for k, (rows, cols) in enumerate(geo.slices()):
            target = buf[:, :, rows, cols]
            if disjoint:
                xp.multiply(gw, idx == k, out=target)
            else:
                target += gw * (idx == k)
        ctx.argmax, ctx.geo = argmax, geo
        return _work(_cropped(buf, geo), swapped)

    @staticmethod
    def backward(ctx: Any, gg: Tensor) -> tuple[Any, None, None]:
        return _MaxGather.apply(gg, ctx.argmax, ctx.geo), None, None


class _MaxGather(Function):
    """Input-size ``y`` read at each window's argmax (the adjoint of _MaxScatter)."""

    _backward_name = "MaxPoolGatherBackward"

    @staticmethod
    def forward(ctx: Any, y: Tensor, argmax: Any, geo: PoolGeometry) -> Any:
        xp = array_module(y._data)
        swapped = _channel_major(argmax)
        buf = _padded(xp, _work(y._data, swapped), geo, 0.0)
        idx = _work(argmax, swapped)
        out = xp.zeros(idx.shape, dtype=buf.dtype)
        for k, (rows, cols) in enumerate(geo.slices()):
            out += xp.where(idx == k, buf[:, :, rows, cols], 0)
        ctx.argmax, ctx.geo = argmax, geo
        return _work(out, swapped)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None, None]:
        return _MaxScatter.apply(g, ctx.argmax, ctx.geo), None, None


def _divisor(xp: Any, geo: PoolGeometry, include_pad: bool, dtype: Any) -> Any:
    """The per-output divisor of average pooling (a float when it is the same everywhere)."""
    (kh, kw), pad = geo.kernel, geo.pad
    if pad == (0, 0, 0, 0):
        return float(kh * kw)

    def one(size: int, k: int, s: int, p: int, n_out: int) -> Any:
        start = xp.arange(n_out) * s - p
        end = xp.minimum(start + k, size + p)
        if include_pad:
            return end - start
        return xp.minimum(end, size) - xp.maximum(start, 0)

    _, _, h, w = geo.shape
    rows = one(h, kh, geo.stride[0], pad[0], geo.out[0])
    cols = one(w, kw, geo.stride[1], pad[2], geo.out[1])
    if bool((rows == kh).all()) and bool((cols == kw).all()):
        return float(kh * kw)
    return (rows[:, None] * cols[None, :]).astype(dtype)


class AvgPool2d(Function):
    """Window sums divided by the divisor (a linear map; its backward is _AvgPoolT)."""

    _backward_name = "AvgPool2DBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor, geo: PoolGeometry, divisor: Any) -> Any:
        arr = x._data
        xp = array_module(arr)
        swapped = _channel_major(arr)
        buf = _padded(xp, _work(arr, swapped), geo, 0.0)
        slices = geo.slices()
        rows, cols = slices[0]
        out = buf[:, :, rows, cols].copy()
        for rows, cols in slices[1:]:
            out += buf[:, :, rows, cols]
        if isinstance(divisor, float):
            out *= 1.0 / divisor
        else:
            out /= divisor
        ctx.geo, ctx.divisor = geo, divisor
        return _work(out, swapped)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, None, None]:
        return _AvgPoolT.apply(g, ctx.geo, ctx.divisor), None, None


class _AvgPoolT(Function):
    """The transpose of average pooling: each output's share spread over its window."""

    _backward_name = "AvgPool2DBackwardBackward0"

    @staticmethod
    def forward(ctx: Any, g: Tensor, geo: PoolGeometry, divisor: Any) -> Any:
        arr = g._data
        xp = array_module(arr)
        swapped = _channel_major(arr)
        gw = _work(arr, swapped)
        share = gw * (1.0 / divisor) if isinstance(divisor, float) else gw / divisor
        tiles = geo.tiles()
        buf = _padded_buffer(xp, geo, swapped, arr.dtype, tiles)
        for rows, cols in geo.slices():
            if tiles:
                buf[:, :, rows, cols] = share
            else:
                buf[:, :, rows, cols] += share
        ctx.geo, ctx.divisor = geo, divisor
        return _work(_cropped(buf, geo), swapped)

    @staticmethod
    def backward(ctx: Any, gg: Tensor) -> tuple[Any, None, None]:
        return AvgPool2d.apply(gg, ctx.geo, ctx.divisor), None, None


def _batched(x: Tensor, name: str) -> tuple[Tensor, bool]:
    if x.ndim == 3:
        return x.unsqueeze(0), True
    if x.ndim != 4:
        raise RuntimeError(
            f"{name}: Expected 3D or 4D (batch mode) tensor for input, but got: {list(x.shape)}"
        )
    return x, False


def max_pool2d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """torch.nn.functional.max_pool2d (and max_pool2d_with_indices with return_indices)."""
    x, unbatched = _batched(input, "max_pool2d")
    geo = pool_geometry(x.shape, kernel_size, stride, padding, dilation, ceil_mode)
    out = MaxPool2d.apply(x, geo, bool(return_indices))
    if unbatched:
        return (out[0].squeeze(0), out[1].squeeze(0)) if return_indices else out.squeeze(0)
    return out


def avg_pool2d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """torch.nn.functional.avg_pool2d."""
    x, unbatched = _batched(input, "avg_pool2d")
    geo = pool_geometry(x.shape, kernel_size, stride, padding, 1, ceil_mode)
    if divisor_override is not None:
        if divisor_override == 0:
            raise RuntimeError("divisor must be not zero")
        divisor: Any = float(divisor_override)
    else:
        divisor = _divisor(array_module(x._data), geo, count_include_pad, x._data.dtype)
    out = AvgPool2d.apply(x, geo, divisor)
    return out.squeeze(0) if unbatched else out


def _bins(xp: Any, size: int, n_out: int, dtype: Any) -> Any:
    """(n_out, size) averaging matrix of adaptive pooling's bins [floor(i*s/n), ceil((i+1)*s/n))."""
    i = xp.arange(n_out)
    start = (i * size) // n_out
    end = -((-(i + 1) * size) // n_out)
    pos = xp.arange(size)[None, :]
    inside = (pos >= start[:, None]) & (pos < end[:, None])
    return (inside / (end - start)[:, None]).astype(dtype)


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """torch.nn.functional.adaptive_avg_pool2d: separable bin averages (two matrix products)."""
    x, unbatched = _batched(input, "adaptive_avg_pool2d")
    h, w = x.shape[2], x.shape[3]
    if isinstance(output_size, (tuple, list)):
        ho, wo = (
            (h if output_size[0] is None else int(output_size[0])),
            (w if output_size[-1] is None else int(output_size[-1])),
        )
    else:
        ho = wo = int(output_size)
    if ho == 1 and wo == 1:
        out = x.mean((2, 3), keepdim=True)
    elif h % ho == 0 and w % wo == 0:
        out = avg_pool2d(x, (h // ho, w // wo))
    else:
        xp, dt = array_module(x._data), x._data.dtype
        out = matmul(matmul(wrap(_bins(xp, h, ho, dt)), x), wrap(_bins(xp, w, wo, dt).T))
    return out.squeeze(0) if unbatched else out
