"""What a run's ``data_state.json`` may say about its build batch, checked before eval, predict,
inspect or resume build a model on zeros of that shape (so a damaged file cannot ask for
gigabytes)."""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["MAX_SAMPLE_NUMBERS", "SAMPLE_DTYPES", "sample_problem"]

# The build batch a data_state.json may describe: at most this many numbers (a batch of 8
# 3x1024x1024 images is 25 million), so a damaged file cannot ask for gigabytes of zeros.
MAX_SAMPLE_NUMBERS = 1 << 26


SAMPLE_DTYPES = (
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "float32",
    "float64",
)


def sample_problem(sample: Any) -> str | None:
    """What is wrong with a data state's ``sample`` entry (None when it is absent or usable):
    ``x`` and ``y``, each a shape (non-negative ints) and a numeric dtype name."""
    if sample is None:
        return None
    if not isinstance(sample, dict) or set(sample) != {"x", "y"}:
        return "its 'sample' must hold 'x' and 'y'"
    for key, entry in sample.items():
        shape = entry.get("shape") if isinstance(entry, dict) else None
        dtype = entry.get("dtype") if isinstance(entry, dict) else None
        if not isinstance(shape, list) or not all(
            isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape
        ):
            return f"sample.{key}.shape must be a list of sizes, got {json.dumps(shape)[:40]}"
        if math.prod(shape) > MAX_SAMPLE_NUMBERS:
            return f"sample.{key}.shape {shape} is too large for a build batch"
        if dtype not in SAMPLE_DTYPES:
            return f"sample.{key}.dtype {json.dumps(dtype)[:40]} is not a numeric dtype"
    return None
