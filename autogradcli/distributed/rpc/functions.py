"""``rpc.functions.async_execution``: the callee replies when the Future its function returns
completes, instead of with the Future itself."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

__all__ = ["async_execution"]


def async_execution(fn: Callable) -> Callable:
    """Mark ``fn`` as returning a Future whose value is the RPC's reply."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    wrapper._wrapped_async_rpc_function = fn  # type: ignore[attr-defined]
    return wrapper
