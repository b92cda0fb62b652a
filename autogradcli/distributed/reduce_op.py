"""``ReduceOp``: the reductions a collective can apply, numbered as PyTorch numbers them."""

from __future__ import annotations

import enum


class ReduceOp(enum.IntEnum):
    """``torch.distributed.ReduceOp``: SUM, AVG, PRODUCT, MIN, MAX (PyTorch's values)."""

    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4

    def __repr__(self) -> str:
        return f"<RedOpType.{self.name}: {self.value}>"

    def __str__(self) -> str:
        return f"RedOpType.{self.name}"


RedOpType = ReduceOp

__all__ = ["RedOpType", "ReduceOp"]
