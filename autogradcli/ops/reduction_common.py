"""Helpers shared by the reductions split across ``minmax``, ``statistics`` and ``scan``: the
keepdim bookkeeping of backward, element counts, grad_fn-name variants and PyTorch's
empty-reduction errors."""

from __future__ import annotations

import math
from typing import Any

from ..tensor.tensor import Tensor
from ._util import array_module, wrap
from .shape import expand, reshape

INF = float("inf")


def spread(g: Tensor, ctx: Any) -> Tensor:
    """The upstream gradient reshaped to the keepdim shape and expanded to the input's shape."""
    if g._data.shape != ctx.kept:
        g = reshape(g, ctx.kept)
    return expand(g, ctx.in_shape)


def as_kept(t: Tensor, ctx: Any) -> Tensor:
    """``t`` (a reduced result) reshaped to the keepdim shape ``ctx.kept``."""
    return t if t._data.shape == ctx.kept else reshape(t, ctx.kept)


def reduced_count(shape: tuple[int, ...], dims: tuple[int, ...] | None) -> int:
    """How many elements each output of a reduction over ``dims`` (all when None) combines."""
    return math.prod(shape) if dims is None else math.prod(shape[d] for d in dims)


def reduced_shape(shape: tuple[int, ...], dims: Any) -> tuple[int, ...]:
    """``shape`` without the reduced ``dims`` (``()`` when dims is None)."""
    if dims is None:
        return ()
    return tuple(s for i, s in enumerate(shape) if i not in dims)


def variant(base: type, name: str, backward_name: str) -> Any:
    """A Function sharing ``base``'s forward/backward under PyTorch's other grad_fn name."""
    return type(name, (base,), {"_backward_name": backward_name, "__module__": base.__module__})


def even_split(x: Any, ref: Any, dims: Any) -> Tensor:
    """Weights 1/count on the entries equal to the reduced extreme ``ref`` (NaNs included)."""
    xp = array_module(x)
    mask = (x == ref) | (xp.isnan(x) & xp.isnan(ref))
    return wrap((mask / mask.sum(axis=dims, keepdims=True)).astype(x.dtype))


def check_nonempty(arr: Any, dims: tuple[int, ...] | None, name: str) -> None:
    """PyTorch's error for reducing an empty tensor (or an empty dim) with no identity."""
    if arr.size:
        return
    if dims is None:
        raise RuntimeError(
            f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
            "Specify the reduction dim with the 'dim' argument."
        )
    for d in dims:
        if arr.shape[d] == 0:
            raise RuntimeError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
