"""numpy-style axis moves: ``movedim``/``moveaxis`` and ``swapdims``/``swapaxes``, as
permutations (one ``PermuteBackward0``/``TransposeBackward0`` node, views of the input)."""

from __future__ import annotations

from typing import Any

from ..tensor.tensor import Tensor
from ._util import wrap_dim
from .shape import permute, transpose

__all__ = ["moveaxis", "movedim", "swapaxes", "swapdims"]


def _dim_list(dims: Any, ndim: int) -> list[int]:
    return [wrap_dim(int(d), ndim) for d in (dims if isinstance(dims, (list, tuple)) else [dims])]


def movedim(input: Tensor, source: Any, destination: Any) -> Tensor:
    """``input`` with the dims ``source`` moved to positions ``destination``, the others
    keeping their order."""
    nd = input._data.ndim
    src, dst = _dim_list(source, max(nd, 1)), _dim_list(destination, max(nd, 1))
    if len(src) != len(dst):
        raise RuntimeError(
            "movedim: Invalid source or destination dims: source "
            f"({list(source) if isinstance(source, (list, tuple)) else [source]} dims) should "
            "contain the same number of dims as destination "
            f"({list(destination) if isinstance(destination, (list, tuple)) else [destination]}"
            " dims)"
        )
    for name, dims, given in (("source", src, source), ("destination", dst, destination)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({list(given)})")
    if nd == 0:
        return permute(input)
    order = [None] * nd
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(i for i in range(nd) if i not in src)
    return permute(input, *[next(rest) if o is None else o for o in order])


def swapdims(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """``transpose(input, dim0, dim1)`` under numpy's name."""
    return transpose(input, dim0, dim1)


def swapaxes(input: Tensor, axis0: int, axis1: int) -> Tensor:
    """``transpose(input, axis0, axis1)`` under numpy's name and argument names."""
    return transpose(input, axis0, axis1)


moveaxis = movedim

TENSOR_METHODS: dict[str, Any] = {name: globals()[name] for name in __all__}
