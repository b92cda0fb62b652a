"""Counting values: ``bincount``, ``histc`` and ``histogram`` (not differentiable, as in
PyTorch)."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from ..tensor.tensor import Tensor
from ._util import array_module, scalar_type_name, wrap

__all__ = ["bincount", "histc", "histogram"]

HistogramResult = namedtuple("histogram", ["hist", "bin_edges"])


def _floats_only(input: Tensor, kernel: str) -> None:
    dt = input._data.dtype
    if dt.kind != "f":
        raise NotImplementedError(f"\"{kernel}_cpu\" not implemented for '{scalar_type_name(dt)}'")


def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """How often each value 0..max occurs in a 1-D non-negative integer tensor (summing
    ``weights`` instead of counting when given); at least ``minlength`` bins."""
    arr = input._data
    if arr.dtype.kind not in "iub":
        raise NotImplementedError(
            f"\"bincount_cpu\" not implemented for '{scalar_type_name(arr.dtype)}'"
        )
    xp = array_module(arr)
    if arr.ndim != 1 or (arr.size and int(arr.min()) < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is None:
        return wrap(xp.bincount(arr, minlength=minlength).astype("int64"))
    w = weights._data
    if w.ndim != 1 or w.shape[0] != arr.shape[0]:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    dtype = w.dtype if w.dtype.kind == "f" else "float64"
    return wrap(xp.bincount(arr, weights=w, minlength=minlength).astype(dtype))


def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:
    """Counts in ``bins`` equal bins over [min, max] (the data's range when both are 0);
    values outside are ignored, ``max`` itself falls in the last bin."""
    _floats_only(input, "histogram")
    arr = input._data
    if max < min:
        raise RuntimeError("torch.histc: max must be larger than min")
    lo, hi = float(min), float(max)
    if lo == hi and arr.size:
        lo, hi = float(arr.min()), float(arr.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    xp = array_module(arr)
    counts, _ = xp.histogram(arr, bins=int(bins), range=(lo, hi))
    return wrap(counts.astype(arr.dtype))


def histogram(
    input: Tensor,
    bins: Any = 100,
    *,
    range: tuple[float, float] | None = None,
    weight: Tensor | None = None,
    density: bool = False,
) -> HistogramResult:
    """(hist, bin_edges) of ``input``: ``bins`` equal bins over ``range`` (the data's range by
    default) or the given edges; ``weight`` sums weights, ``density`` normalizes to a density."""
    _floats_only(input, "histogram")
    arr = input._data
    xp = array_module(arr)
    edges = bins._data if isinstance(bins, Tensor) else int(bins)
    w = None if weight is None else weight._data
    hist, bin_edges = xp.histogram(arr, bins=edges, range=range, weights=w, density=density)
    return HistogramResult(wrap(hist.astype(arr.dtype)), wrap(bin_edges.astype(arr.dtype)))


TENSOR_METHODS: dict[str, Any] = {name: globals()[name] for name in __all__}
