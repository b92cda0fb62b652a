"""``interpolate`` (and the deprecated ``upsample*``) in torch.nn.functional: torch's argument
checks and output-size rules in front of the separable resampling in ``ops/interpolate.py``."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

from ...ops.interpolate import resample
from ...tensor.tensor import Tensor
from .pooling import adaptive_avg_pool1d, adaptive_avg_pool2d

__all__ = ["interpolate", "upsample", "upsample_bilinear", "upsample_nearest"]

_LINEAR = {"linear": 3, "bilinear": 4, "trilinear": 5}
_NAMES = {3: "linear", 4: "bilinear", 5: "trilinear"}


def _output_size(
    input: Tensor, size: Any, scale_factor: Any, recompute: bool | None, mode: str
) -> tuple[list[int], list[float | None]]:
    dim = input.ndim - 2
    spatial = list(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if recompute:
            raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {spatial} and output size of {size}. "
                    "Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                    "output size in (o1, o2, ...,oK) format."
                )
            if not all(isinstance(s, int) or hasattr(s, "__index__") for s in size):
                raise TypeError(
                    "expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                    f"Tuple[int, int, int], but got size with types {[type(s) for s in size]}"
                )
            return [int(s) for s in size], [None] * dim
        return [int(size)] * dim, [None] * dim
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if isinstance(scale_factor, (list, tuple)):
        if len(scale_factor) != dim:
            raise ValueError(
                "Input and scale_factor must have the same number of spatial dimensions, but "
                f"got input with spatial dimensions of {spatial} and "
                f"scale_factor of shape {scale_factor}. "
                "Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                "scale_factor in (s1, s2, ...,sK) format."
            )
        factors = [float(s) for s in scale_factor]
    else:
        factors = [float(scale_factor)] * dim
    out = [math.floor(n * s) for n, s in zip(spatial, factors)]
    if recompute or mode == "area":  # the sizes alone define the sampling
        return out, [None] * dim
    return out, list(factors)


def interpolate(
    input: Tensor,
    size: int | Sequence[int] | None = None,
    scale_factor: float | Sequence[float] | None = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    """Resize the spatial dims of (N, C, *spatial) ``input`` to ``size`` or by ``scale_factor``.

    Modes: 'nearest', 'nearest-exact', 'linear' (3-D), 'bilinear' (4-D), 'trilinear' (5-D),
    'area' (3-D, 4-D), each as torch's."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the "
                "interpolating modes: linear | bilinear | bicubic | trilinear"
            )
    elif align_corners is None:
        align_corners = False
    sizes, scales = _output_size(input, size, scale_factor, recompute_scale_factor, mode)
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError(
            "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and "
            "requires a 4-D tensor as input"
        )
    if antialias:
        raise NotImplementedError("interpolate: antialias=True is not supported yet")
    if input.ndim in (3, 4, 5) and any(s <= 0 for s in sizes):
        labels = "DHW"[3 - len(sizes) :]
        given = ", ".join(f"{k}: {n}" for k, n in zip(labels, input.shape[2:]))
        wanted = ", ".join(f"{k}: {n}" for k, n in zip(labels, sizes))
        raise RuntimeError(
            f"Input and output sizes should be greater than 0, but got input ({given}) "
            f"output ({wanted})"
        )
    if input.ndim in (3, 4, 5) and mode in ("nearest", "nearest-exact"):
        return resample(input, sizes, scales, mode)
    if mode == "area" and input.ndim == 3:
        return adaptive_avg_pool1d(input, sizes)
    if mode == "area" and input.ndim == 4:
        return adaptive_avg_pool2d(input, sizes)
    if mode in _LINEAR and input.ndim == _LINEAR[mode]:
        return resample(input, sizes, scales, "linear", bool(align_corners))
    if mode in _LINEAR and input.ndim in _NAMES:
        raise NotImplementedError(
            f"Got {input.ndim}D input, but {mode} mode needs {_LINEAR[mode]}D input"
        )
    if input.ndim in (3, 4, 5) and mode in ("area", "bicubic", "lanczos"):
        raise NotImplementedError(
            f"interpolate: mode='{mode}' for {input.ndim}D input is not supported yet "
            "(supported: nearest, nearest-exact, linear, bilinear, trilinear, area for 3D/4D)"
        )
    raise NotImplementedError(
        "Input Error: Only 3D, 4D and 5D input Tensors supported"
        f" (got {input.ndim}D) for the modes: nearest | linear | bilinear | bicubic | trilinear "
        f"| lanczos | area | nearest-exact (got {mode})"
    )


def upsample(
    input: Tensor,
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
) -> Tensor:
    """Deprecated alias of ``interpolate`` (with torch's warning)."""
    warnings.warn(
        "`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated: ``interpolate(mode='nearest')`` (with torch's warning)."""
    warnings.warn(
        "`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated: ``interpolate(mode='bilinear', align_corners=True)`` (with torch's warning)."""
    warnings.warn(
        "`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
