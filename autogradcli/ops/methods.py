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
    activation_piecewise,
    adaptive_max,
    arithmetic,
    axes,
    binary_math,
    clamp_where,
    closeness,
    comparison,
    complex_numbers,
    conversion,
    convolution,
    discrete_reduction,
    elementary,
    gather_scatter,
    indexing,
    inplace,
    inplace_shape,
    inplace_unary,
    join,
    lazy_methods,
    legacy,
    linalg,
    logexp,
    masking,
    memory,
    minmax,
    pooling,
    predicates,
    reduction,
    reorder,
    sampling,
    scan,
    shape,
    sorting,
    sparse_layout,
    statistics,
    unary,
    volumetric,
)
from .numpy_keywords import AXIS_FUNCTIONS, add_numpy_keywords

MODULES: tuple[ModuleType, ...] = (
    arithmetic,
    comparison,
    unary,
    clamp_where,
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
    logexp,
    sampling,
    inplace_shape,
    sparse_layout,
    memory,
    elementary,
    predicates,
    axes,
    activation_piecewise,
    volumetric,
    inplace_unary,
    complex_numbers,
    adaptive_max,
    binary_math,
    lazy_methods,
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
_methods = {name: getattr(Tensor, name) for name in AXIS_FUNCTIONS if hasattr(Tensor, name)}
add_numpy_keywords(_methods)
for _name, _method in _methods.items():
    setattr(Tensor, _name, _method)
