"""3-D convolution and pooling over (N, C, D, H, W), built on the 2-D ops (im2col convolution,
max/avg pooling): each depth tap is a 2-D op over the (N*D, C, H, W) slices, and the taps are
combined along depth (summed for conv3d, max'd or averaged for pooling). Gradients and
grad-of-grad come from the 2-D ops."""

from __future__ import annotations

from typing import Any

from ..tensor.tensor import Tensor, wrap
from ._util import array_module
from .conv_transpose import conv_transpose2d
from .convolution import _check_batched, _check_groups, conv2d
from .join import stack
from .linalg import matmul
from .padding import pad
from .pooling import _bins, _one_dim, _pool_args, adaptive_avg_pool2d, avg_pool2d, max_pool2d

__all__ = ["conv3d", "conv_transpose3d"]

Triple = tuple[int, int, int]


def _triple(v: Any, name: str) -> Triple:
    if isinstance(v, (tuple, list)):
        if len(v) == 1:
            return (int(v[0]),) * 3
        if len(v) != 3:
            raise RuntimeError(
                f"expected {name} to be a single integer value or a list of 3 values to match "
                f"the convolution dimensions, but got {name}={list(v)}"
            )
        return (int(v[0]), int(v[1]), int(v[2]))
    return (int(v),) * 3


def _fold_depth(x: Tensor) -> Tensor:
    """(N, C, D, H, W) as the (N*D, C, H, W) batch of its depth slices."""
    n, c, d, h, w = x.shape
    return x.permute(0, 2, 1, 3, 4).reshape(n * d, c, h, w)


def _unfold_depth(y: Tensor, n: int) -> Tensor:
    """The inverse of :func:`_fold_depth` for (N*D, C, H, W) results."""
    nd, c, h, w = y.shape
    return y.reshape(n, nd // n, c, h, w).permute(0, 2, 1, 3, 4)


def _taps(x: Tensor, k: int, s: int, d: int, n_out: int) -> list[Tensor]:
    """For each kernel tap t along depth, the slices every output position reads: x[:, :, t*d +
    i*s] for i < n_out."""
    return [x[:, :, t * d : t * d + (n_out - 1) * s + 1 : s] for t in range(k)]


def _pad_depth(x: Tensor, lo: int, hi: int, value: float = 0.0) -> Tensor:
    return pad(x, (0, 0, 0, 0, lo, hi), value=value) if lo or hi else x


def conv3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    """3-D convolution (cross-correlation) of (N, C, D, H, W) or (C, D, H, W) ``input``."""
    if input.ndim == 4:
        return conv3d(input.unsqueeze(0), weight, bias, stride, padding, dilation, groups)[0]
    _check_batched(input, weight, 5, "conv3d")
    n, depth, kd = input.shape[0], input.shape[2], weight.shape[2]
    _check_groups(input, weight, groups)
    st, dil = _triple(stride, "stride"), _triple(dilation, "dilation")
    if isinstance(padding, str):
        if padding not in ("same", "valid"):
            raise ValueError(
                f"Invalid padding string '{padding}', should be one of {{'valid', 'same'}}"
            )
        total = dil[0] * (kd - 1) if padding == "same" else 0
        lo, hi, pad_hw = total // 2, total - total // 2, padding
    else:
        p = _triple(padding, "padding")
        lo, hi, pad_hw = p[0], p[0], p[1:]
    d_out = (depth + lo + hi - dil[0] * (kd - 1) - 1) // st[0] + 1
    kh, kw = weight.shape[3:]
    hp, wp = (input.shape[3], input.shape[4]) if isinstance(pad_hw, str) else (
        input.shape[3] + 2 * pad_hw[0], input.shape[4] + 2 * pad_hw[1])  # fmt: skip
    if d_out <= 0 or hp < dil[1] * (kh - 1) + 1 or wp < dil[2] * (kw - 1) + 1:
        raise RuntimeError(
            f"Calculated padded input size per channel: ({depth + lo + hi} x {hp} x {wp}). "
            f"Kernel size: ({dil[0] * (kd - 1) + 1} x {dil[1] * (kh - 1) + 1} x "
            f"{dil[2] * (kw - 1) + 1}). Kernel size can't be greater than actual input size"
        )
    x = _pad_depth(input, lo, hi)
    out = None
    for t, slab in enumerate(_taps(x, kd, st[0], dil[0], d_out)):
        y = conv2d(_fold_depth(slab), weight[:, :, t], None, st[1:], pad_hw, dil[1:], groups)
        out = y if out is None else out + y
    out = _unfold_depth(out, n)
    if bias is not None:
        out = out + bias.reshape(-1, 1, 1, 1)
    return out.contiguous()


def _spread_depth(y: Tensor, stride: int, lo: int, length: int) -> Tensor:
    """(N, C, D, H, W) with ``stride - 1`` zero slices after each depth slice (the last one's
    dropped), then ``lo`` zero slices before and zeros after up to ``length``."""
    n, c, d, h, w = y.shape
    if stride > 1:
        y = pad(y.unsqueeze(3), (0, 0, 0, 0, 0, stride - 1)).reshape(n, c, d * stride, h, w)
        y = y[:, :, : (d - 1) * stride + 1]
    return _pad_depth(y, lo, length - lo - y.shape[2])


def conv_transpose3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> Tensor:
    """3-D transposed convolution of (N, C_in, D, H, W) or (C_in, D, H, W) ``input``; ``weight``
    is (C_in, C_out / groups, kD, kH, kW): each depth tap is a 2-D transposed convolution whose
    slices land ``stride`` apart along depth."""
    if input.ndim == 4:
        return conv_transpose3d(
            input.unsqueeze(0), weight, bias, stride, padding, output_padding, groups, dilation
        )[0]
    _check_batched(input, weight, 5, "conv_transpose3d")
    st, pd = _triple(stride, "stride"), _triple(padding, "padding")
    op, dil = _triple(output_padding, "output_padding"), _triple(dilation, "dilation")
    n, depth, kd = input.shape[0], input.shape[2], weight.shape[2]
    full = (depth - 1) * st[0] + dil[0] * (kd - 1) + 1 + op[0]
    d_out = full - 2 * pd[0]
    if d_out <= 0:
        raise RuntimeError(
            f"Given input size per channel: ({depth} x {input.shape[3]} x {input.shape[4]}). "
            f"Calculated output depth: {d_out}. Output size is too small"
        )
    planes = _fold_depth(input)
    out = None
    for t in range(kd):
        y = conv_transpose2d(planes, weight[:, :, t], None, st[1:], pd[1:], op[1:], groups,
                             dil[1:])  # fmt: skip
        y = _spread_depth(_unfold_depth(y, n), st[0], t * dil[0], full)
        out = y if out is None else out + y
    out = out[:, :, pd[0] : pd[0] + d_out]
    if bias is not None:
        out = out + bias.reshape(-1, 1, 1, 1)
    return out.contiguous()


def _check_pool_input(input: Tensor) -> tuple[Tensor, bool]:
    if input.ndim not in (4, 5) or input.numel() == 0:
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    return (input.unsqueeze(0), True) if input.ndim == 4 else (input, False)


def max_pool3d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Tensor:
    """Max over (kD, kH, kW) windows: 2-D max pooling of each depth slice, then the max over
    the depth taps (the first maximum wins, as in PyTorch)."""
    if return_indices:
        raise NotImplementedError("max_pool3d(return_indices=True) is not supported yet")
    x, unbatched = _check_pool_input(input)
    k, s, p, d = _pool_args(kernel_size, stride, padding, dilation, _triple)
    d_out, extra = _one_dim(x.shape[2], k[0], s[0], p[0], d[0], ceil_mode)
    y = _unfold_depth(max_pool2d(_fold_depth(x), k[1:], s[1:], p[1:], d[1:], ceil_mode), x.shape[0])
    y = _pad_depth(y, p[0], p[0] + extra, float("-inf"))
    out = stack(_taps(y, k[0], s[0], d[0], d_out), -1).max(-1).values
    return out[0] if unbatched else out


def avg_pool3d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """Mean over (kD, kH, kW) windows: 2-D average pooling of each depth slice, then the mean
    over the depth taps (each window's divisor is its depth count times its 2-D count)."""
    x, unbatched = _check_pool_input(input)
    k, s, p, _ = _pool_args(kernel_size, stride, padding, 1, _triple)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    size = x.shape[2]
    d_out, extra = _one_dim(size, k[0], s[0], p[0], 1, ceil_mode)
    plane = avg_pool2d(
        _fold_depth(x), k[1:], s[1:], p[1:], ceil_mode, count_include_pad,
        1 if divisor_override is not None else None,
    )  # fmt: skip
    y = _pad_depth(_unfold_depth(plane, x.shape[0]), p[0], p[0] + extra)
    total = None
    for slab in _taps(y, k[0], s[0], 1, d_out):
        total = slab if total is None else total + slab
    if divisor_override is not None:
        out = total / float(divisor_override)
    else:
        counts = []
        for i in range(d_out):
            start = i * s[0] - p[0]
            end = min(start + k[0], size + p[0])
            counts.append(end - start if count_include_pad else min(end, size) - max(start, 0))
        xp = array_module(x._data)
        out = total / wrap(xp.asarray(counts, dtype=x._data.dtype).reshape(-1, 1, 1))
    return out[0] if unbatched else out


def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:
    """Adaptive average pooling to ``output_size`` (an int or a triple, None keeping a size)."""
    if input.ndim not in (4, 5):
        raise RuntimeError(
            f"adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got {list(input.shape)}"
        )
    x, unbatched = (input.unsqueeze(0), True) if input.ndim == 4 else (input, False)
    sizes = output_size if isinstance(output_size, (tuple, list)) else (output_size,) * 3
    do, ho, wo = (x.shape[2 + i] if v is None else int(v) for i, v in enumerate(sizes))
    y = _unfold_depth(adaptive_avg_pool2d(_fold_depth(x), (ho, wo)), x.shape[0])
    bins = wrap(_bins(array_module(x._data), x.shape[2], do, x._data.dtype))
    out = matmul(bins, y.permute(0, 1, 3, 2, 4)).permute(0, 1, 3, 2, 4).contiguous()
    return out[0] if unbatched else out


TENSOR_METHODS: dict[str, Any] = {}
