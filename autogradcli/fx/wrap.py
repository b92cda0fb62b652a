"""``torch.fx.wrap``: the registry of free functions kept as single call_function nodes."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

__all__ = ["WRAPPED", "wrap"]

# (globals dict of the module that called wrap, name) for every ``wrap`` call
WRAPPED: list[tuple[dict[str, Any], str]] = []


def wrap(fn_or_name: str | Callable[..., Any]) -> Any:
    """Keep a free function as one call_function node when it gets a traced value (call at
    module scope, with the function or its name; as a decorator too)."""
    frame = sys._getframe(1)
    if frame.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    name = fn_or_name if isinstance(fn_or_name, str) else fn_or_name.__name__
    if not name.isidentifier():
        raise ValueError(f"wrap: {name!r} is not a function name")
    WRAPPED.append((frame.f_globals, name))
    return fn_or_name
