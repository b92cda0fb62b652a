"""Channel-wise dropout (``dropout1d``, ``dropout2d``, ``dropout3d``): whole feature maps are
zeroed with probability ``p`` and the kept ones scaled by ``1 / (1 - p)``, as torch's
``feature_dropout``. The mask is a constant, so the result is ``input * mask`` (MulBackward0)."""

from __future__ import annotations

import warnings

from ...tensor.factory import rand, zeros
from ...tensor.tensor import Tensor
from .linear import check_dropout_p

__all__ = ["dropout1d", "dropout2d", "dropout3d"]


def feature_dropout(input: Tensor, p: float, train: bool, inplace: bool = False) -> Tensor:
    """Zero each (sample, channel) map of (N, C, *) ``input`` with probability ``p``."""
    if input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if not train or p == 0.0 or input.numel() == 0:
        return input
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2)
    if p == 1.0:
        mask = zeros(*shape, dtype=input.dtype, device=input.device)
    else:
        keep = rand(*shape, dtype=input.dtype, device=input.device) >= p
        mask = keep.to(input.dtype) * (1.0 / (1.0 - p))
    return input.mul_(mask) if inplace else input * mask


def _unbatched(input: Tensor, p: float, training: bool, inplace: bool) -> Tensor:
    """Channel dropout of an input without its batch dim: through a batch of one."""
    if inplace:
        feature_dropout(input.unsqueeze(0), p, training, True)
        return input
    return feature_dropout(input.unsqueeze(0), p, training).squeeze(0)


def dropout1d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels of (N, C, L) or (C, L) ``input`` with probability ``p``."""
    check_dropout_p(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. "
            "Note that dropout1d exists to provide channel-wise dropout on inputs with 1 "
            "spatial dimension, a channel dimension, and an optional batch dimension "
            "(i.e. 2D or 3D inputs)."
        )
    if input.ndim == 2:
        return _unbatched(input, p, training, inplace)
    return feature_dropout(input, p, training, inplace)


def _deprecated_rank(name: str, ndim: int, spatial: int, ranks: str) -> None:
    warnings.warn(
        f"{name}: Received a {ndim}-D input to {name}, which is deprecated "
        "and will result in an error in a future release. To retain the behavior "
        f"and silence this warning, please use dropout instead. Note that {name} "
        f"exists to provide channel-wise dropout on inputs with {spatial} spatial dimensions, "
        f"a channel dimension, and an optional batch dimension (i.e. {ranks} inputs).",
        stacklevel=3,
    )


def dropout2d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels of (N, C, H, W) ``input`` with probability ``p``.

    A 3-D input is taken as (N, C, L), with torch's warning (torch does the same for now)."""
    check_dropout_p(p)
    if input.ndim not in (3, 4):
        _deprecated_rank("dropout2d", input.ndim, 2, "3D or 4D")
    if input.ndim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
            "1D dropout behavior is desired - input is interpreted as shape (N, C, L), where C "
            "is the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2,
        )
    return feature_dropout(input, p, training, inplace)


def dropout3d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) ``input`` with probability ``p``."""
    check_dropout_p(p)
    if input.ndim not in (4, 5):
        _deprecated_rank("dropout3d", input.ndim, 3, "4D or 5D")
    if input.ndim != 5:
        return _unbatched(input, p, training, inplace)
    return feature_dropout(input, p, training, inplace)
