"""Tensor methods of rarely used op modules that ``import autogradcli`` leaves unloaded (the
import's memory budget, tests/test_lazy_imports.py): each is a stub that imports its module on
the first call. The module's functions are lazy names of ``autogradcli`` (``ops.LAZY``)."""

from __future__ import annotations

import importlib
from typing import Any

__all__: list[str] = []

# module (under autogradcli.ops) -> the functions it provides, all also Tensor methods unless
# listed in _FUNCTIONS_ONLY (and the Tensor methods in _METHODS_ONLY are not functions)
LAZY_MODULES = {
    "counting": ["bincount", "histc", "histogram"],
    "diagonals": [
        "block_diag",
        "diag",
        "diag_embed",
        "diagflat",
        "diagonal",
        "dot",
        "fill_diagonal_",
        "ger",
        "outer",
        "trace",
    ],
    "einstein": ["einsum"],
    "grids": ["cartesian_prod", "meshgrid"],
    "lerp_op": ["lerp", "lerp_"],
    "products": [
        "addbmm",
        "addmv",
        "baddbmm",
        "cross",
        "inner",
        "kron",
        "matrix_power",
        "mv",
        "tensordot",
    ],
    "rounding": ["ceil", "floor", "frac", "round", "ceil_", "floor_", "frac_", "round_"],
    "special": ["digamma", "erfc", "erfinv", "i0", "lgamma", "polygamma"],
    "uniqueness": ["unique", "unique_consecutive", "sum_to_size"],
}
_FUNCTIONS_ONLY = {"tensordot", "block_diag", "cartesian_prod", "einsum", "meshgrid"}
_METHODS_ONLY = {"fill_diagonal_", "lerp_", "sum_to_size", "ceil_", "floor_", "frac_", "round_"}


def _stub(module: str, name: str) -> Any:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        mod = importlib.import_module(f"autogradcli.ops.{module}")
        fn = getattr(mod, "TENSOR_METHODS", {}).get(name) or getattr(mod, name)
        return fn(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``Tensor.{name}`` (``ops.{module}`` loads on the first call)."
    return method


TENSOR_METHODS: dict[str, Any] = {
    name: _stub(module, name)
    for module, names in LAZY_MODULES.items()
    for name in names
    if name not in _FUNCTIONS_ONLY
}

# torch._foreach_<op>: ops/foreach.py generates them from these tables
FOREACH_UNARY = [
    "sqrt",
    "exp",
    "log",
    "neg",
    "abs",
    "sign",
    "sigmoid",
    "tanh",
    "sin",
    "cos",
    "reciprocal",
]
FOREACH_BINARY = [
    "add",
    "sub",
    "mul",
    "div",
    "pow",
    "maximum",
    "minimum",
    "clamp_min",
    "clamp_max",
    "lerp",
]
FOREACH_TERNARY = ["addcmul", "addcdiv"]
FOREACH_OTHER = ["_foreach_copy_", "_foreach_norm", "_foreach_zero_"]
FOREACH_NAMES = [
    f"_foreach_{op}{suffix}"
    for op in FOREACH_UNARY + FOREACH_BINARY + FOREACH_TERNARY
    for suffix in ("", "_")
] + FOREACH_OTHER

# autogradcli's lazy names for these functions (added to its _LAZY)
LAZY: dict[str, str] = {
    name: f".ops.{module}:{name}"
    for module, names in LAZY_MODULES.items()
    for name in names
    if name not in _METHODS_ONLY
}
LAZY.update({name: f".ops.foreach:{name}" for name in FOREACH_NAMES})
