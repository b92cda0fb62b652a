"""Embedding's weight gradient on the CPU: rows summed per index by sort + ``np.add.reduceat``.

``np.add.at`` adds one row at a time (1.68 ms for 1024 rows of 128 into 65); a stable sort of the
indices, one gather and one segmented sum take 0.15 ms (0.39 vs 1.10 ms for 1120 rows into 1000,
1.67 vs 2.77 ms into 50,000). Device arrays keep the scatter-add (cupy's atomics).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["sum_rows_at"]


def sum_rows_at(idx: Any, g: Any, n: int) -> Any:
    """The (n, d) sum of the rows of ``g`` (``idx.shape + (d,)``) at ``idx``, as a new array;
    None for device arrays (the caller scatter-adds)."""
    if type(g) is not np.ndarray or type(idx) is not np.ndarray:
        return None
    flat = idx.reshape(-1)
    rows = g.reshape(flat.shape[0], g.shape[-1])
    out = np.zeros((n, rows.shape[1]), dtype=g.dtype)
    if flat.size == 0:
        return out
    order = np.argsort(flat, kind="stable")
    keys = flat[order]
    starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
    out[keys[starts]] = np.add.reduceat(rows[order], starts, axis=0)
    return out
