"""Resampling of the spatial dims (torch's upsample kernels behind ``F.interpolate``).

Each spatial dim is resampled on its own, which is exact for these separable modes:
nearest and nearest-exact pick one source index per output position (index_select);
linear blends two neighbours, ``x[i0] * l0 + x[i1] * l1``. Source indices and weights follow
torch's formulas, computed in the input's precision as torch's kernels do, so results agree to
rounding; gradients (scatter-adds through index_select) and grad-of-grad come from the ops used.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np  # host-side index/weight tables only (small, per output position)

from ..tensor.factory import tensor
from ..tensor.tensor import Tensor

TENSOR_METHODS: dict[str, Any] = {}
__all__ = ["resample"]


def _nearest_index(n_in: int, n_out: int, scale: float | None, exact: bool) -> np.ndarray:
    dst = np.arange(n_out)
    if not exact and n_out == n_in:
        return dst
    if not exact and n_out == 2 * n_in:
        return dst >> 1
    ratio = np.float32(1.0 / scale) if scale is not None and scale > 0 else np.float32(n_in / n_out)
    if exact:
        src = np.floor((dst + 0.5) * np.float64(ratio))
    else:
        src = np.floor(dst.astype(np.float32) * ratio)
    return np.minimum(src.astype(np.int64), n_in - 1)


def _linear_table(
    n_in: int, n_out: int, scale: float | None, align_corners: bool, dtype: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """torch's (i0, i1, lambda0, lambda1) for each output position, in ``dtype`` arithmetic."""
    ft = np.dtype(dtype).type
    dst = np.arange(n_out).astype(dtype)
    if align_corners:
        ratio = ft(n_in - 1) / ft(n_out - 1) if n_out > 1 else ft(0)
        src = ratio * dst
    else:
        ratio = ft(1.0 / scale) if scale is not None and scale > 0 else ft(n_in) / ft(n_out)
        src = np.maximum(ratio * (dst + ft(0.5)) - ft(0.5), ft(0))
    i0 = src.astype(np.int64)
    i1 = i0 + (i0 < n_in - 1)
    lam1 = (src - i0.astype(dtype)).astype(dtype)
    lam0 = (ft(1) - lam1).astype(dtype)
    return i0, i1, lam0, lam1


def _index(x: Tensor, values: np.ndarray) -> Tensor:
    return tensor(values.tolist(), dtype="int64", device=x.device)


def _weights(x: Tensor, values: np.ndarray, dim: int) -> Tensor:
    """Per-position weights shaped to broadcast along ``dim`` of ``x``."""
    shape = (len(values),) + (1,) * (x.ndim - 1 - dim)
    return tensor(values.reshape(shape), dtype=x.dtype, device=x.device)


def resample(
    x: Tensor,
    size: Sequence[int],
    scales: Sequence[float | None],
    mode: str,
    align_corners: bool = False,
) -> Tensor:
    """Resample the trailing ``len(size)`` dims of ``x`` to ``size`` with ``mode``
    ('nearest', 'nearest-exact' or 'linear' per dim); ``scales`` are the user's scale factors
    (``None`` where the size was given), which torch uses for the source positions."""
    first = x.ndim - len(size)
    out = x
    for k, (n_out, scale) in enumerate(zip(size, scales)):
        dim = first + k
        n_in = x.shape[dim]
        if mode == "linear":
            i0, i1, lam0, lam1 = _linear_table(
                n_in, n_out, scale, align_corners, x._data.dtype.name
            )
            lo = out.index_select(dim, _index(x, i0))
            if np.array_equal(i0, i1):
                out = lo
                continue
            hi = out.index_select(dim, _index(x, i1))
            out = lo * _weights(x, lam0, dim) + hi * _weights(x, lam1, dim)
        else:
            idx = _nearest_index(n_in, n_out, scale, mode == "nearest-exact")
            if n_out == n_in and np.array_equal(idx, np.arange(n_in)):
                continue
            out = out.index_select(dim, _index(x, idx))
    return out if out is not x else x.clone()
