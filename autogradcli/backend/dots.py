"""Sums of elementwise products over some axes (``einsum("ij,ij->i", a, b)`` and the like), one
definition for numpy and cupy; and matrix products whose inner dimension is 1.

numpy's ``einsum`` sums the products without a temporary, the fastest form on the CPU. cupy's
``einsum`` plans each call in Python (0.27 ms a call on an H100 host, 7 ms of the GPT-mini step),
where ``(a * b).sum(axes)`` is two kernel launches, so device arrays take that form.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["matmul", "sum_of_products"]


def sum_of_products(xp: Any, subscripts: str, a: Any, b: Any) -> Any:
    """``einsum(subscripts, a, b)`` for two operands of one layout, the output keeping some of
    their axes in order (``"ncs,ncs->c"``)."""
    if xp is np:
        return np.einsum(subscripts, a, b)
    ins, out = subscripts.split("->")
    axes = tuple(i for i, c in enumerate(ins.split(",")[0]) if c not in out)
    return (a * b).sum(axis=axes)


def matmul(xp: Any, a: Any, b: Any) -> Any:
    """``xp.matmul(a, b)``; on numpy, matrices (ndim >= 2) with an inner dimension of 1 (an
    outer product: a batch of one row's weight gradient) as the broadcast product, the same
    values: numpy's matmul takes 27 us for (128 x 1) @ (1 x 185), the product 9
    (bench/bench_select.py)."""
    if xp is np and a.ndim >= 2 and b.ndim >= 2 and a.shape[-1] == 1 == b.shape[-2]:
        return np.multiply(a, b)
    return xp.matmul(a, b)
