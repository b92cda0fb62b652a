"""Adaptive max pooling: the max of each of an output grid's bins [floor(i*H/h), ceil((i+1)*H/h))
x [floor(j*W/w), ceil((j+1)*W/w)), with the flat input index of each maximum (the first one)."""

from __future__ import annotations

from typing import Any

from ..tensor.tensor import Tensor, wrap
from ._util import array_module
from .join import stack

__all__: list[str] = []


def _bounds(size: int, n_out: int) -> list[tuple[int, int]]:
    return [((i * size) // n_out, -((-(i + 1) * size) // n_out)) for i in range(n_out)]


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max over adaptive bins of the last two dims of (N, C, H, W) or (C, H, W) ``input``."""
    if input.ndim not in (3, 4):
        raise RuntimeError(
            f"adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: {list(input.shape)}"
        )
    h, w = input.shape[-2:]
    sizes = output_size if isinstance(output_size, (tuple, list)) else (output_size,) * 2
    ho, wo = (h if sizes[0] is None else int(sizes[0]), w if sizes[-1] is None else int(sizes[-1]))
    lead = input.shape[:-2]
    values, indices = [], []
    for hs, he in _bounds(h, ho):
        for ws, we in _bounds(w, wo):
            best = input[..., hs:he, ws:we].reshape(*lead, -1).max(-1)
            values.append(best.values)
            at = best.indices._data
            indices.append((hs + at // (we - ws)) * w + ws + at % (we - ws))
    out = stack(values, -1).reshape(*lead, ho, wo)
    if not return_indices:
        return out
    xp = array_module(input._data)
    return out, wrap(xp.stack(indices, -1).reshape(*lead, ho, wo).astype("int64"))


def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max over adaptive bins of the last dim of (N, C, L) or (C, L) ``input``."""
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument "
            "#1 'self' (while checking arguments for adaptive_max_pool1d)"
        )
    size = output_size[0] if isinstance(output_size, (tuple, list)) else output_size
    out = adaptive_max_pool2d(input.unsqueeze(-2), (1, size), return_indices)
    if return_indices:
        return out[0].squeeze(-2), out[1].squeeze(-2)
    return out.squeeze(-2)


TENSOR_METHODS: dict[str, Any] = {}
