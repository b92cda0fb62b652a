"""``torch.compile`` and ``torch.compiler``: nothing is compiled here, so ``compile`` returns the
module or function it is given (PyTorch's behaviour with ``disable=True``), called directly or
as a decorator with options, and ``is_compiling()`` is False."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["compile", "disable", "is_compiling", "is_dynamo_compiling", "reset"]


def compile(
    model: Any = None,
    *,
    fullgraph: bool = False,
    dynamic: bool | None = None,
    backend: Any = "inductor",
    mode: str | None = None,
    options: dict[str, Any] | None = None,
    disable: bool = False,
) -> Any:
    """``model`` unchanged; without a model, a decorator that returns what it decorates."""
    if model is None:
        return lambda fn: fn
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    return model


def is_compiling() -> bool:
    """False: code never runs under a compiler here."""
    return False


def is_dynamo_compiling() -> bool:
    """False: code never runs under a compiler here."""
    return False


def reset() -> None:
    """Nothing to clear: nothing was compiled."""


def disable(fn: Callable[..., Any] | None = None, recursive: bool = True, **kwargs: Any) -> Any:
    """``fn`` unchanged (a decorator without ``fn``): it already runs uncompiled."""
    if fn is None:
        return lambda f: f
    return fn
