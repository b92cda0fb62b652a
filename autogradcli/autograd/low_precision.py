"""bfloat16 results stay bfloat16: numpy (with ml_dtypes) runs some ops on bfloat16 arrays in
float32 (products, and arithmetic with float32 constants), so an op whose floating inputs are all
bfloat16 has its float32 results rounded back, as PyTorch computes in float32 and rounds. One
check after every op's forward, made only once a bfloat16 tensor exists (``STATE.bfloat16``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..tensor.dtype import bfloat16
from ..tensor.tensor import Tensor

_F32 = np.dtype(np.float32)


def _inputs_are_bfloat16(args: tuple[Any, ...]) -> bool:
    """True when some tensor argument is bfloat16 and no other is floating point."""
    seen = False
    for a in args:
        if isinstance(a, (list, tuple)):
            items = a
        else:
            items = (a,)
        for t in items:
            if isinstance(t, Tensor):
                dt = t._data.dtype
                if dt.kind == "V":  # bfloat16
                    seen = True
                elif dt.kind == "f":
                    return False
    return seen


def _rounded(o: Any, args: tuple[Any, ...]) -> Any:
    if isinstance(o, (np.ndarray, np.generic)):
        return o.astype(bfloat16.np) if o.dtype == _F32 else o
    if isinstance(o, Tensor) and o._data.dtype == _F32 and not any(o is a for a in args):
        o._data = o._data.astype(bfloat16.np)
    return o


def keep_bfloat16(ctx: Any, raw: Any, args: tuple[Any, ...]) -> Any:
    """``raw`` (forward's results) with float32 arrays rounded to bfloat16 when the op's floating
    inputs are bfloat16, unless the op chooses its output dtype (``to``, ``float()``...) or is a
    user's Function."""
    op = getattr(ctx, "_forward_cls", None) or type(ctx)
    if (
        getattr(op, "_chooses_dtype", False)
        or not op.__module__.startswith("autogradcli.")  # a user's Function returns what it returns
        or not _inputs_are_bfloat16(args)
    ):
        return raw
    if type(raw) is tuple:
        return tuple(_rounded(o, args) for o in raw)
    return _rounded(raw, args)
