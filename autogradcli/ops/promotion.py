"""``torch.promote_types``, ``result_type`` and ``can_cast``: PyTorch's promotion rules
(tensor/dtype.py) as public functions."""

from __future__ import annotations

from typing import Any

from ..tensor import dtype as dtypes

__all__ = ["can_cast", "promote_types", "result_type"]


def promote_types(type1: Any, type2: Any) -> dtypes.DType:
    """The dtype an op on ``type1`` and ``type2`` tensors gives."""
    a, b = dtypes.to_dtype(type1), dtypes.to_dtype(type2)
    return dtypes.from_numpy_dtype(dtypes.promote_types(a.np, b.np))


def result_type(tensor1: Any, tensor2: Any) -> dtypes.DType:
    """The dtype of an op on two tensors or numbers, with PyTorch's rules for 0-d tensors and
    Python scalars."""
    return dtypes.from_numpy_dtype(dtypes.result_type(tensor1, tensor2))


def can_cast(from_: Any, to: Any) -> bool:
    """False only for a cast to a lower category (float to integer, integer to bool)."""
    a, b = dtypes.to_dtype(from_), dtypes.to_dtype(to)
    return dtypes.category(a.np) <= dtypes.category(b.np)
