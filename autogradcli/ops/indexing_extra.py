"""Index-driven ops, gathered in one place for ``ops/__init__`` and ``ops/methods``:
gather/scatter/index_select/take_along_dim (``gather_scatter``), masked_fill/tril/triu/one_hot
(``masking``) and narrow/repeat/flip/roll (``reorder``). Every name stays importable from here.
"""

from __future__ import annotations

from typing import Any

from . import gather_scatter, masking, reorder

# re-exported so that everything once defined here still imports from here
from .gather_scatter import (  # noqa: F401
    Gather,
    IndexSelect,
    Scatter,
    ScatterAdd,
    ScatterValue,
    gather,
    index_select,
    scatter,
    scatter_,
    scatter_add,
    scatter_add_,
    take_along_dim,
)
from .masking import MaskedFill, Tril, Triu, masked_fill, masked_fill_, one_hot, tril, triu  # noqa: F401
from .reorder import Flip, Repeat, Roll, flip, narrow, repeat, roll  # noqa: F401

__all__ = [
    "flip",
    "gather",
    "index_select",
    "masked_fill",
    "narrow",
    "one_hot",
    "repeat",
    "roll",
    "scatter",
    "scatter_add",
    "take_along_dim",
    "tril",
    "triu",
]

_METHODS = {**gather_scatter.TENSOR_METHODS, **masking.TENSOR_METHODS, **reorder.TENSOR_METHODS}
_ORDER = (
    "gather scatter scatter_ scatter_add scatter_add_ index_select masked_fill masked_fill_ "
    "narrow repeat flip roll tril triu take_along_dim"
)
TENSOR_METHODS: dict[str, Any] = {name: _METHODS[name] for name in _ORDER.split()}
