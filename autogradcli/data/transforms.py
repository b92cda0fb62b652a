"""Image transforms on float32 ``(channels, height, width)`` numpy arrays in [0, 1], named and
parametrised as torchvision's (``RandomCrop(size, padding)``, ``RandomHorizontalFlip(p)``,
``RandomRotation(degrees)``, ``ColorJitter(brightness, contrast, saturation)``, ``Normalize``).

The random ones draw from the engine's global generator, as torchvision's draw from torch's:
``manual_seed`` makes them repeat, and a DataLoader worker, seeded with ``base_seed + id``,
draws its own reproducible stream."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..tensor.random import generator_for

__all__ = [
    "AUGMENTATIONS",
    "ColorJitter",
    "Compose",
    "Normalize",
    "RandomCrop",
    "RandomHorizontalFlip",
    "RandomRotation",
]


def _rng() -> np.random.Generator:
    return generator_for(np)  # fetched per call: manual_seed replaces it


def _pair(value: int | Sequence[int], name: str) -> tuple[int, int]:
    if isinstance(value, int) and not isinstance(value, bool):
        return value, value
    if (
        isinstance(value, Sequence)
        and len(value) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        return int(value[0]), int(value[1])
    raise ValueError(f"{name} must be an int or a pair [h, w] of ints, got {value!r}")


class Compose:
    """Apply ``transforms`` in order."""

    def __init__(self, transforms: Sequence[Callable[[np.ndarray], np.ndarray]]) -> None:
        self.transforms = list(transforms)

    def __call__(self, img: np.ndarray) -> np.ndarray:
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self) -> str:
        inner = "".join(f"\n    {t!r}" for t in self.transforms)
        return f"{type(self).__name__}({inner}\n)"


class Normalize:
    """``(img - mean) / std`` per channel (torchvision's ``Normalize``)."""

    def __init__(self, mean: Sequence[float], std: Sequence[float]) -> None:
        if any(s == 0 for s in std):
            raise ValueError(
                "std evaluated to zero after conversion to float32, leading to division by zero."
            )
        self.mean = np.asarray(mean, np.float32).reshape(-1, 1, 1)
        self.std = np.asarray(std, np.float32).reshape(-1, 1, 1)

    def __call__(self, img: np.ndarray) -> np.ndarray:
        return ((img - self.mean) / self.std).astype(np.float32, copy=False)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(mean={self.mean.ravel().tolist()}, std={self.std.ravel().tolist()})"


class RandomCrop:
    """Pad each side by ``padding`` with ``fill``, then cut a random ``size`` window (the
    input's own size when None, the usual ``RandomCrop(32, padding=4)`` of a 32x32 image)."""

    def __init__(
        self, size: int | Sequence[int] | None = None, padding: int = 0, fill: float = 0.0
    ) -> None:
        self.size = None if size is None else _pair(size, "RandomCrop size")
        if not isinstance(padding, int) or isinstance(padding, bool) or padding < 0:
            raise ValueError(f"RandomCrop padding must be an int >= 0, got {padding!r}")
        self.padding, self.fill = padding, float(fill)

    def __call__(self, img: np.ndarray) -> np.ndarray:
        th, tw = self.size or img.shape[-2:]
        p = self.padding
        if p:
            img = np.pad(img, ((0, 0), (p, p), (p, p)), constant_values=self.fill)
        h, w = img.shape[-2:]
        if th > h or tw > w:
            raise ValueError(
                f"Required crop size {(th, tw)} is larger than input image size {(h, w)}"
            )
        rng = _rng()
        top = int(rng.integers(0, h - th + 1))
        left = int(rng.integers(0, w - tw + 1))
        return img[:, top : top + th, left : left + tw]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(size={self.size}, padding={self.padding})"


class RandomHorizontalFlip:
    """Mirror left to right with probability ``p``."""

    def __init__(self, p: float = 0.5) -> None:
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"RandomHorizontalFlip p must be in [0, 1], got {p!r}")
        self.p = float(p)

    def __call__(self, img: np.ndarray) -> np.ndarray:
        if _rng().random() < self.p:
            return img[:, :, ::-1]
        return img

    def __repr__(self) -> str:
        return f"{type(self).__name__}(p={self.p})"


class RandomRotation:
    """Rotate about the centre by an angle drawn uniformly from [-degrees, degrees] (or the
    pair given), nearest-neighbour as torchvision's default; corners are filled with ``fill``."""

    def __init__(self, degrees: float | Sequence[float], fill: float = 0.0) -> None:
        if isinstance(degrees, (int, float)):
            if degrees < 0:
                raise ValueError("If degrees is a single number, it must be positive.")
            degrees = (-float(degrees), float(degrees))
        if len(degrees) != 2:
            raise ValueError("If degrees is a sequence, it must be of len 2.")
        self.degrees = (float(degrees[0]), float(degrees[1]))
        self.fill = float(fill)

    def __call__(self, img: np.ndarray) -> np.ndarray:
        angle = float(_rng().uniform(*self.degrees))
        return rotate(img, angle, self.fill)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(degrees={list(self.degrees)})"


def rotation_sources(h: int, w: int, cos: Any, sin: Any) -> tuple[Any, Any, Any]:
    """(x, y, inside): the input pixel each output pixel of an (h, w) image rotated by the angle
    of ``cos`` and ``sin`` reads (nearest neighbour), and whether it lies in the image; ``cos``
    and ``sin`` may be (n, 1, 1) arrays, one angle per image."""
    cy, cx = (h - 1) / 2.0, (w - 1) / 2.0
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float64)
    # each output pixel reads the input pixel the inverse rotation maps it to
    src_x = cos * (xx - cx) - sin * (yy - cy) + cx
    src_y = sin * (xx - cx) + cos * (yy - cy) + cy
    sx, sy = np.rint(src_x).astype(np.int64), np.rint(src_y).astype(np.int64)
    return sx, sy, (sx >= 0) & (sx < w) & (sy >= 0) & (sy < h)


def rotate(img: np.ndarray, angle: float, fill: float = 0.0) -> np.ndarray:
    """``img`` rotated ``angle`` degrees anticlockwise about its centre (nearest neighbour)."""
    _, h, w = img.shape
    theta = math.radians(angle)
    sx, sy, inside = rotation_sources(h, w, math.cos(theta), math.sin(theta))
    out = np.full_like(img, fill)
    out[:, inside] = img[:, sy[inside], sx[inside]]
    return out


class ColorJitter:
    """Scale brightness, contrast and saturation by factors drawn uniformly from
    [max(0, 1 - v), 1 + v], in a random order, as torchvision's ``ColorJitter`` (no hue)."""

    def __init__(
        self, brightness: float = 0.0, contrast: float = 0.0, saturation: float = 0.0
    ) -> None:
        for name, v in (
            ("brightness", brightness),
            ("contrast", contrast),
            ("saturation", saturation),
        ):
            if v < 0:
                raise ValueError(f"If {name} is a single number, it must be non negative.")
        self.brightness, self.contrast, self.saturation = (
            float(brightness),
            float(contrast),
            float(saturation),
        )

    def __call__(self, img: np.ndarray) -> np.ndarray:
        rng = _rng()
        order = rng.permutation(3)
        amounts = (self.brightness, self.contrast, self.saturation)
        factors = [float(rng.uniform(max(0.0, 1.0 - v), 1.0 + v)) if v else None for v in amounts]
        for i in order:
            f = factors[i]
            if f is None:
                continue
            if i == 0:
                img = img * f
            elif i == 1:
                img = _blend(img, float(_gray(img).mean()), f)
            elif img.shape[0] == 3:
                img = _blend(img, _gray(img), f)
            img = np.clip(img, 0.0, 1.0).astype(np.float32, copy=False)
        return img

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(brightness={self.brightness}, contrast={self.contrast}, "
            f"saturation={self.saturation})"
        )


def _gray(img: np.ndarray) -> np.ndarray:
    """ITU-R 601-2 luma, as torchvision's ``rgb_to_grayscale``; a 1-channel image as it is."""
    if img.shape[0] == 1:
        return img
    return (0.299 * img[0] + 0.587 * img[1] + 0.114 * img[2])[None].astype(np.float32)


def _blend(img: np.ndarray, other: Any, factor: float) -> np.ndarray:
    return factor * img + (1.0 - factor) * other


# the augmentations a config's ``augment:`` list names
AUGMENTATIONS: dict[str, type] = {
    "ColorJitter": ColorJitter,
    "RandomCrop": RandomCrop,
    "RandomHorizontalFlip": RandomHorizontalFlip,
    "RandomRotation": RandomRotation,
}
