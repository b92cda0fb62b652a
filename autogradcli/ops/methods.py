"""Attaches the built-in ops to Tensor as methods and operators.

Each op module declares the methods it provides in a module-level ``TENSOR_METHODS`` dict
(name -> function, or a ``property``); this loop attaches them. A new op module adds itself to
``MODULES``; a name declared twice is an error, so one module cannot silently replace another's.
"""

from __future__ import annotations

from types import ModuleType

from ..tensor.tensor import Tensor
from . import (
    activation,
    arithmetic,
    closeness,
    comparison,
    complex_numbers,
    conversion,
    convolution,
    diagonal,
    discrete_reduction,
    gather_scatter,
    indexing,
    inplace,
    inplace_shape,
    join,
    legacy,
    linalg,
    logexp,
    masking,
    minmax,
    pooling,
    reduction,
    reorder,
    sampling,
    scan,
    shape,
    sorting,
    sparse_layout,
    special,
    statistics,
    unary,
    uniqueness,
)

MODULES: tuple[ModuleType, ...] = (
    arithmetic,
    comparison,
    unary,
    linalg,
    reduction,
    shape,
    conversion,
    inplace,
    indexing,
    activation,
    join,
    minmax,
    discrete_reduction,
    statistics,
    scan,
    gather_scatter,
    masking,
    reorder,
    convolution,
    pooling,
    legacy,
    closeness,
    sorting,
    diagonal,
    logexp,
    sampling,
    uniqueness,
    inplace_shape,
    sparse_layout,
    special,
    complex_numbers,
)


def attach_tensor_methods(modules: tuple[ModuleType, ...]) -> None:
    """Set each module's ``TENSOR_METHODS`` on Tensor; refuse a name two modules declare."""
    owner: dict[str, str] = {}
    for module in modules:
        for name, method in module.TENSOR_METHODS.items():
            if name in owner:
                raise RuntimeError(
                    f"Tensor.{name} is declared by both {owner[name]} and {module.__name__}"
                )
            owner[name] = module.__name__
            setattr(Tensor, name, method)


attach_tensor_methods(MODULES)
