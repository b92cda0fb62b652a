"""Cache-sized blocks for long chains of numpy passes: a kernel of 20-40 in-place ufunc passes
over 1e6 float32 values allocates 4 MB temporaries, which glibc hands out either as warm heap
pages or as fresh mappings (1024 page faults each) depending on the process's history, and
streams every pass through L3. Over blocks of 65,536 values the temporaries are small, warm and
near L2: GELU's forward on 524,288 values (GPT-mini's) 6.8 -> 1.8 ms under glibc's defaults,
1.40 -> 1.48 ms where the heap is kept warm (bench_nn's ``tune_malloc``); bench/README.md,
"Special functions". Short kernels (under ~10 passes) measured no faster and are left whole.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["BLOCK", "blockwise"]

# 256 KB of float32. 32,768 (128 KB, exactly glibc's initial mmap threshold) measured 1.9x
# slower than this in a fresh process; 16,384 pays more per-call overhead
BLOCK = 65536


def blockwise(fn: Callable[..., Any], *arrays: Any, out: tuple[Any, ...] | None = None) -> Any:
    """``fn(*blocks)`` over consecutive blocks of BLOCK values of numpy arrays of one shape,
    its output (an array or a tuple of arrays) assembled in that shape; arrays under two blocks
    (or of different shapes) go to ``fn`` whole. ``fn`` must be elementwise. With ``out``
    (contiguous arrays of the inputs' size), ``fn(*blocks, out=slices)`` writes each block's
    results into them (no copy) and ``out`` is returned."""
    first = arrays[0]
    size = first.size
    if size < 2 * BLOCK or any(a.shape != first.shape for a in arrays):
        return fn(*arrays) if out is None else (fn(*arrays, out=out), out)[1]
    flat = [a.reshape(-1) for a in arrays]  # a copy only where an input is not contiguous
    if out is not None:
        flat_out = [o.reshape(-1) for o in out]
        for i in range(0, size, BLOCK):
            fn(*(a[i : i + BLOCK] for a in flat), out=tuple(o[i : i + BLOCK] for o in flat_out))
        return out
    outs: tuple[Any, ...] = ()
    single = False
    for i in range(0, size, BLOCK):
        res = fn(*(a[i : i + BLOCK] for a in flat))
        if not outs:
            single = not isinstance(res, tuple)
            outs = tuple(np.empty(size, r.dtype) for r in ((res,) if single else res))
        for dest, r in zip(outs, (res,) if single else res):
            dest[i : i + BLOCK] = r
    shaped = tuple(dest.reshape(first.shape) for dest in outs)
    return shaped[0] if single else shaped
