"""The image transforms applied to a whole batch at once, with the same random draws in the same
order as image-by-image application (image 0's draws for every step, then image 1's...), so a
batch comes out bit for bit what the per-image ``Compose`` gives under the same seed. Each step
is then one array pass over the batch instead of a few numpy calls per image.

Steps covered: ``Normalize``, ``RandomCrop``, ``RandomHorizontalFlip``, ``RandomRotation``. A
pipeline with any other step (``ColorJitter``, a user's callable) is not batched (``None``)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ...tensor.random import generator_for
from ..transforms import (
    Compose,
    Normalize,
    RandomCrop,
    RandomHorizontalFlip,
    RandomRotation,
    rotation_sources,
)

__all__ = ["transform_batch"]

Shape = tuple[int, int]


def transform_batch(transform: Any, images: np.ndarray) -> np.ndarray | None:
    """``transform`` (a ``Compose`` or one step) applied to every image of float32 ``images``
    (N, C, H, W), as a new batch; None when a step has no batch form."""
    steps = transform.transforms if isinstance(transform, Compose) else [transform]
    if not all(type(s) in _DRAW for s in steps):
        return None
    n, _, h, w = images.shape
    plans = [[] for _ in steps]  # per step, per image: its random draw
    for _ in range(n):
        shape = (h, w)
        for k, step in enumerate(steps):
            draw, shape = _DRAW[type(step)](step, shape)
            plans[k].append(draw)
    out = images
    for step, plan in zip(steps, plans):
        out = _APPLY[type(step)](step, out, plan)
    return out


# --------------------------------------------------------------------- draws, as each step's
# __call__ makes them; each returns (the draw, the image size after the step)
def _draw_none(step: Any, shape: Shape) -> tuple[None, Shape]:
    return None, shape


def _draw_crop(step: RandomCrop, shape: Shape) -> tuple[tuple[int, int], Shape]:
    th, tw = step.size or shape
    h, w = shape[0] + 2 * step.padding, shape[1] + 2 * step.padding
    if th > h or tw > w:
        raise ValueError(f"Required crop size {(th, tw)} is larger than input image size {(h, w)}")
    rng = _rng()
    top = int(rng.integers(0, h - th + 1))
    left = int(rng.integers(0, w - tw + 1))
    return (top, left), (th, tw)


def _draw_flip(step: RandomHorizontalFlip, shape: Shape) -> tuple[bool, Shape]:
    return bool(_rng().random() < step.p), shape


def _draw_rotation(step: RandomRotation, shape: Shape) -> tuple[float, Shape]:
    return float(_rng().uniform(*step.degrees)), shape


def _rng() -> np.random.Generator:
    return generator_for(np)  # the generator the per-image steps draw from, fetched per call


# --------------------------------------------------------------------- applied to the batch
def _normalize(step: Normalize, x: np.ndarray, plan: list) -> np.ndarray:
    return ((x - step.mean) / step.std).astype(np.float32, copy=False)


def _crop(step: RandomCrop, x: np.ndarray, plan: list) -> np.ndarray:
    n, c, h, w = x.shape
    p = step.padding
    th, tw = step.size or (h, w)
    if p:
        padded = np.full((n, c, h + 2 * p, w + 2 * p), step.fill, dtype=x.dtype)
        padded[:, :, p : p + h, p : p + w] = x
        x = padded
    corner = np.asarray(plan, dtype=np.intp).reshape(n, 2)
    rows = corner[:, :1] + np.arange(th)  # (n, th)
    cols = corner[:, 1:] + np.arange(tw)  # (n, tw)
    picked = x[np.arange(n)[:, None, None], :, rows[:, :, None], cols[:, None, :]]
    return np.ascontiguousarray(picked.transpose(0, 3, 1, 2))  # (n, th, tw, c) -> (n, c, th, tw)


def _flip(step: RandomHorizontalFlip, x: np.ndarray, plan: list) -> np.ndarray:
    flip = np.asarray(plan, dtype=bool)
    out = x.copy()
    out[flip] = x[flip][..., ::-1]
    return out


def _rotation(step: RandomRotation, x: np.ndarray, plan: list) -> np.ndarray:
    """``transforms.rotate`` of each image by its angle, its float64 arithmetic elementwise the
    same (per-image cos and sin from ``math``, as there), so the same pixels are picked."""
    n, c, h, w = x.shape
    thetas = [math.radians(a) for a in plan]
    cos = np.array([math.cos(t) for t in thetas])[:, None, None]
    sin = np.array([math.sin(t) for t in thetas])[:, None, None]
    sx, sy, inside = rotation_sources(h, w, cos, sin)
    flat = np.where(inside, sy * w + sx, 0).reshape(n, 1, h * w)
    picked = np.take_along_axis(x.reshape(n, c, h * w), flat, axis=2).reshape(n, c, h, w)
    return np.where(inside[:, None], picked, np.asarray(step.fill, dtype=x.dtype))


_DRAW: dict[type, Callable[[Any, Shape], tuple[Any, Shape]]] = {
    Normalize: _draw_none,
    RandomCrop: _draw_crop,
    RandomHorizontalFlip: _draw_flip,
    RandomRotation: _draw_rotation,
}
_APPLY: dict[type, Callable[[Any, np.ndarray, list], np.ndarray]] = {
    Normalize: _normalize,
    RandomCrop: _crop,
    RandomHorizontalFlip: _flip,
    RandomRotation: _rotation,
}
