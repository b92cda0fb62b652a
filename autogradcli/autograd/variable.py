"""``Variable``: the pre-0.4 wrapper, now a Tensor, kept so old programs run (as in PyTorch)."""

from __future__ import annotations

import warnings
from typing import Any

from ..tensor.tensor import Tensor

__all__ = ["Variable"]


class _VariableMeta(type):
    """``isinstance(x, Variable)`` is true of every Tensor, as in PyTorch."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(tensor, requires_grad=False)``: a leaf sharing ``tensor``'s data; ``volatile``
    is accepted and ignored with PyTorch's warning."""

    def __new__(  # type: ignore[misc]
        cls, data: Any = None, requires_grad: bool = False, volatile: bool = False
    ) -> Tensor:
        if volatile:
            warnings.warn(
                "volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                UserWarning,
                stacklevel=2,
            )
        if data is None:
            from ..tensor.factory import empty

            return empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        out = data.detach()
        if requires_grad:
            out.requires_grad_(True)
        return out
