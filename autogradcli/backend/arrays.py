"""Array routines whose spelling differs between numpy and cupy, behind one interface."""

from __future__ import annotations

from types import ModuleType
from typing import Any


def scatter_add(xp: ModuleType, out: Any, index: Any, values: Any) -> None:
    """``out[index] += values`` with repeated indices accumulating (numpy's ``add.at``)."""
    if hasattr(xp.add, "at"):
        xp.add.at(out, index, values)
        return
    import cupyx

    cupyx.scatter_add(out, index, values)


def as_strided(xp: ModuleType, arr: Any, shape: tuple[int, ...], strides: tuple[int, ...]) -> Any:
    """A strided view of ``arr`` (strides in bytes), read-only by convention."""
    return xp.lib.stride_tricks.as_strided(arr, shape=shape, strides=strides)


def random_normal(gen: Any, loc: float, scale: float, size: Any) -> Any:
    """``gen.normal(loc, scale, size)``; cupy's Generator has no ``normal``, so it is built from
    ``standard_normal`` there (numpy's own ``normal`` is ``loc + scale * standard_normal``)."""
    if hasattr(gen, "normal"):
        return gen.normal(loc, scale, size=size)
    return gen.standard_normal(size) * scale + loc


def random_permutation(xp: ModuleType, gen: Any, n: int) -> Any:
    """A random permutation of ``range(n)`` from ``gen`` (cupy's Generator has no
    ``permutation``: argsort of uniform draws there)."""
    if hasattr(gen, "permutation"):
        return gen.permutation(n)
    return xp.argsort(gen.random(n))
