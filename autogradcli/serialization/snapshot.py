"""A copy of a saveable tree that later in-place changes cannot reach, for writing it later
(on another thread) exactly as it was when taken."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..tensor.tensor import Tensor, wrap

__all__ = ["snapshot"]


def snapshot(obj: Any) -> Any:
    """``obj`` (what ``save`` takes) with its dicts, lists and tuples rebuilt and every Tensor's
    and numpy array's data copied (on its own device); an object met twice (tied weights) is
    copied once, so ``save`` still stores it once. Everything else is kept as it is."""
    return _copy(obj, {})


def _copy(obj: Any, memo: dict[int, Any]) -> Any:
    if isinstance(obj, (Tensor, np.ndarray, dict, list, tuple)):
        done = memo.get(id(obj))
        if done is not None:
            return done
        memo[id(obj)] = out = _copy_new(obj, memo)
        return out
    return obj


def _copy_new(obj: Any, memo: dict[int, Any]) -> Any:
    if isinstance(obj, Tensor):
        return wrap(obj._data.copy(), requires_grad=obj.requires_grad)
    if isinstance(obj, np.ndarray):
        return obj.copy()
    if isinstance(obj, dict):
        return {key: _copy(value, memo) for key, value in obj.items()}
    items = [_copy(value, memo) for value in obj]
    return items if isinstance(obj, list) else tuple(items)
