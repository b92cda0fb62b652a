"""``affine_grid`` and ``grid_sample`` in torch.nn.functional (4-D input): torch's argument
checks and warnings in front of ``ops/grid_sample.py``."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

from ...ops.grid_sample import affine_grid_2d, grid_sample_2d
from ...tensor.tensor import Tensor

__all__ = ["affine_grid", "grid_sample"]

_DEFAULT_CHANGED = (
    "Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
    "Please specify align_corners=True if the old behavior is desired. See the documentation of "
    "grid_sample for details."
)


def _align(align_corners: bool | None) -> bool:
    if align_corners is None:
        warnings.warn(_DEFAULT_CHANGED, stacklevel=3)
        return False
    return bool(align_corners)


def affine_grid(theta: Tensor, size: Sequence[int], align_corners: bool | None = None) -> Tensor:
    """The (N, H, W, 2) grid of [-1, 1] coordinates that the (N, 2, 3) ``theta`` maps the output
    pixels to, for ``grid_sample``."""
    align = _align(align_corners)
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype!s}")
    size = tuple(int(s) for s in size)
    if len(size) == 4:
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (2, 3):
            raise ValueError(
                f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. "
                f"Got {theta.shape}."
            )
    elif len(size) == 5:
        raise NotImplementedError(
            "affine_grid: 3D affine transforms (5-D size) are not supported yet"
        )
    else:
        raise NotImplementedError(
            "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
            f"respectively. Got size {size}."
        )
    if align and min(size[2:]) == 1:
        warnings.warn(
            "Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
            "align_corners=True. This is not an intended use case of affine_grid. See the "
            "documentation of affine_grid for details.",
            stacklevel=2,
        )
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if theta.shape[0] != size[0]:
        raise RuntimeError(
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"[{size[0]}, 3] but got: [{theta.shape[0]}, 3]."
        )
    return affine_grid_2d(theta, size, align)


def grid_sample(
    input: Tensor,
    grid: Tensor,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    align_corners: bool | None = None,
) -> Tensor:
    """Sample (N, C, H, W) ``input`` at the (x, y) positions in [-1, 1] of the (N, Ho, Wo, 2)
    ``grid``: modes 'bilinear' and 'nearest', padding 'zeros', 'border' or 'reflection'."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(
            "nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or "
            f"'bicubic', but got: '{mode}'"
        )
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(
            "nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
            f"'reflection', but got: '{padding_mode}'"
        )
    align = _align(align_corners)
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(
            "grid_sampler(): expected grid and input to have same batch size, but got input "
            f"with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
        )
    if grid.shape[-1] != input.ndim - 2:
        raise RuntimeError(
            f"grid_sampler(): expected grid to have size {input.ndim - 2} in last dimension, but "
            f"got grid with sizes {list(grid.shape)}"
        )
    if input.ndim != 4 or mode == "bicubic":
        raise NotImplementedError(
            f"grid_sample: {input.ndim}-D input with mode='{mode}' is not supported yet "
            "(4-D input, bilinear or nearest)"
        )
    return grid_sample_2d(input, grid, mode, padding_mode, align)
