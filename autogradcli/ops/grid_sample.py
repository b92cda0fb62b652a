"""Spatial sampling (torch's ``affine_grid`` and ``grid_sample`` for 4-D input).

``grid_sample`` maps the grid's [-1, 1] coordinates to pixel positions (torch's unnormalising
and border/reflection rules), then gathers the 4 neighbours (bilinear) or the nearest pixel and
blends them. Positions are Tensor ops of the grid and values are a gather of the input, so the
gradients for both the input and the grid (and grad-of-grad) come from those ops; only the
integer corner indices are computed on the arrays.
"""

from __future__ import annotations

from typing import Any

import numpy as np  # the host-side base grid only

from ..tensor.factory import tensor
from ..tensor.tensor import Tensor
from ._util import array_module, wrap
from .linalg import matmul

TENSOR_METHODS: dict[str, Any] = {}
__all__ = ["affine_grid_2d", "grid_sample_2d"]


def _base_axis(steps: int, align_corners: bool) -> list[float]:
    """torch's _linspace_from_neg_one: -1..1 in ``steps`` (pixel centres unless aligned)."""
    if steps <= 1:
        return [0.0]
    values = [-1.0 + 2.0 * i / (steps - 1) for i in range(steps)]
    if not align_corners:
        values = [v * (steps - 1) / steps for v in values]
    return values


def affine_grid_2d(theta: Tensor, size: tuple[int, ...], align_corners: bool) -> Tensor:
    """(N, H, W, 2) sampling grid of the (N, 2, 3) affine matrices ``theta``."""
    _, _, h, w = size
    xs, ys = _base_axis(w, align_corners), _base_axis(h, align_corners)
    base = [[x, y, 1.0] for y in ys for x in xs]  # (H*W, 3), x fastest
    # through a host array of theta's dtype: no float32 rounding of the Python floats on the way
    grid = tensor(np.array(base, dtype=theta._data.dtype.name), device=theta.device)
    out = matmul(grid, theta.transpose(1, 2))  # (N, H*W, 2)
    return out.reshape(theta.shape[0], h, w, 2)


def _unnormalize(coord: Tensor, size: int, align_corners: bool) -> Tensor:
    if align_corners:
        return (coord + 1.0) * ((size - 1) / 2.0)
    return ((coord + 1.0) * size - 1.0) / 2.0


def _reflect(coord: Tensor, twice_low: int, twice_high: int) -> Tensor:
    """Reflect ``coord`` into [twice_low / 2, twice_high / 2] (torch's reflect_coordinates)."""
    if twice_low == twice_high:
        return coord * 0.0
    low = twice_low / 2.0
    span = (twice_high - twice_low) / 2.0
    dist = (coord - low).abs()
    arr = dist.detach()._data
    xp = array_module(arr)
    flips = xp.floor(arr / span)
    extra = dist - wrap((flips * span).astype(arr.dtype))  # fmod(dist, span), differentiable
    even = wrap((flips % 2 == 0).astype(arr.dtype))
    return (extra + low) * even + (span - extra + low) * (1.0 - even)


def _source(coord: Tensor, size: int, padding_mode: str, align_corners: bool) -> Tensor:
    """Pixel positions of grid coordinates, after torch's border/reflection handling."""
    pos = _unnormalize(coord, size, align_corners)
    if padding_mode == "border":
        return pos.clamp(0.0, float(size - 1))
    if padding_mode == "reflection":
        if align_corners:
            pos = _reflect(pos, 0, 2 * (size - 1))
        else:
            pos = _reflect(pos, -1, 2 * size - 1)
        return pos.clamp(0.0, float(size - 1))
    return pos


def _tap(flat: Tensor, ix: Any, iy: Any, h: int, w: int) -> tuple[Tensor, Any]:
    """Input values at integer pixels (ix, iy) (arrays (N, P)) and where they lie inside."""
    xp = array_module(ix)
    inside = (ix >= 0) & (ix < w) & (iy >= 0) & (iy < h)
    index = xp.clip(iy, 0, h - 1) * w + xp.clip(ix, 0, w - 1)
    n, c, _ = flat.shape
    index = wrap(xp.ascontiguousarray(xp.broadcast_to(index[:, None, :], (n, c, index.shape[1]))))
    return flat.gather(2, index), inside


def grid_sample_2d(
    input: Tensor, grid: Tensor, mode: str, padding_mode: str, align_corners: bool
) -> Tensor:
    """Sample (N, C, H, W) ``input`` at the (N, Ho, Wo, 2) ``grid``'s (x, y) positions."""
    n, c, h, w = input.shape
    _, ho, wo, _ = grid.shape
    flat = input.reshape(n, c, h * w)
    gx = grid[..., 0].reshape(n, ho * wo)
    gy = grid[..., 1].reshape(n, ho * wo)
    x = _source(gx, w, padding_mode, align_corners)
    y = _source(gy, h, padding_mode, align_corners)
    xa, ya = x.detach()._data, y.detach()._data
    xp = array_module(xa)
    dtype = xa.dtype
    if mode == "nearest":
        ix, iy = xp.rint(xa).astype("int64"), xp.rint(ya).astype("int64")
        values, inside = _tap(flat, ix, iy, h, w)
        out = values * wrap(inside.astype(dtype)[:, None, :])
        return out.reshape(n, c, ho, wo)
    x0, y0 = xp.floor(xa), xp.floor(ya)
    fx = x - wrap(x0)  # distance from the north-west corner, differentiable in the grid
    fy = y - wrap(y0)
    x0, y0 = x0.astype("int64"), y0.astype("int64")
    out = None
    for dx, dy in ((0, 0), (1, 0), (0, 1), (1, 1)):
        wx = fx if dx else 1.0 - fx
        wy = fy if dy else 1.0 - fy
        values, inside = _tap(flat, x0 + dx, y0 + dy, h, w)
        weight = wx * wy * wrap(inside.astype(dtype))
        term = values * weight.unsqueeze(1)
        out = term if out is None else out + term
    return out.reshape(n, c, ho, wo)
