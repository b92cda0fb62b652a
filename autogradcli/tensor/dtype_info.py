"""``finfo`` and ``iinfo``: the numeric limits of a dtype, with PyTorch's attributes and repr."""

from __future__ import annotations

from typing import Any

import numpy as np

from .dtype import DType, get_default_dtype

__all__ = ["finfo", "iinfo"]


def _dtype(value: Any, fn: str) -> DType:
    if not isinstance(value, DType):
        raise TypeError(
            f"{fn}(): argument 'type' (position 1) must be autogradcli.dtype, "
            f"not {type(value).__name__}"
        )
    return value


class finfo:
    """Limits of a floating dtype (default: the default dtype): bits, eps, max, min, tiny,
    smallest_normal, resolution, and the dtype's name."""

    def __init__(self, type: Any = None) -> None:
        dt = get_default_dtype() if type is None else _dtype(type, "finfo")
        if not dt.is_floating_point:
            raise TypeError(
                "autogradcli.finfo() requires a floating point input type. Use autogradcli.iinfo "
                "to handle 'autogradcli.finfo'"
            )
        try:
            info: Any = np.finfo(dt.np)
        except ValueError:  # an ml_dtypes type (bfloat16): numpy has no finfo for it
            import ml_dtypes

            info = ml_dtypes.finfo(dt.np)
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)  # PyTorch's: a power of ten
        self.dtype = dt.name

    def __repr__(self) -> str:
        return (
            f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
            f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, "
            f"dtype={self.dtype})"
        )


class iinfo:
    """Limits of an integer dtype: bits, max, min, and the dtype's name."""

    def __init__(self, type: Any) -> None:
        dt = _dtype(type, "iinfo")
        if dt.np.kind == "b":
            raise TypeError(f"{dt!r} is not supported by autogradcli.iinfo")
        if dt.np.kind not in "iu":
            raise TypeError(
                "autogradcli.iinfo() requires an integer input type. Use autogradcli.finfo to "
                "handle 'autogradcli.iinfo'"
            )
        info = np.iinfo(dt.np)
        self.bits, self.max, self.min, self.dtype = (
            int(info.bits),
            int(info.max),
            int(info.min),
            dt.name,
        )

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"
