"""The table from Function classes to their ONNX converters.

A converter is ``fn(g, node) -> output name(s)``: ``g`` is the graph being built (graph.py),
``node`` the traced op (its ``args`` with tensors as graph values, its ``ctx``, its outputs'
values). The ``ops_*.py`` modules register the built-in ops' converters, one family per module.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = [
    "CONVERTERS",
    "REFUSED",
    "converter",
    "find_converter",
    "has_onnx_form",
    "refusal",
    "refuse",
    "register_converter",
]

CONVERTERS: dict[type, Callable[..., Any]] = {}
REFUSED: dict[type, str] = {}  # Function -> why it is refused before its forward runs
_loaded = False


def register_converter(
    cls: type, fn: Callable[..., Any], dynamic_args: tuple[int, ...] = ()
) -> None:
    """Export ``cls`` (a Function) with ``fn(g, node)``. ``dynamic_args``: the positions of
    non-tensor arguments (sizes) the converter builds from the graph when they follow the
    dynamic batch; any other such argument that changes with the batch is refused."""
    fn.dynamic_args = dynamic_args  # type: ignore[attr-defined]
    CONVERTERS[cls] = fn


def converter(*classes: type, dynamic_args: tuple[int, ...] = ()) -> Callable[[Any], Any]:
    """Decorator form of ``register_converter`` for one or more Function classes."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        for cls in classes:
            register_converter(cls, fn, dynamic_args)
        return fn

    return register


def refuse(cls: type, why: str) -> None:
    """Refuse ``cls`` when the trace meets it, before its forward runs (so it changes nothing,
    as a training-mode BatchNorm's running statistics)."""
    REFUSED[cls] = why


def refusal(cls: type) -> str | None:
    """Why ``cls`` is refused, or None."""
    _load_builtin()
    return REFUSED.get(cls)


def _load_builtin() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        from . import ops_elementwise, ops_nn, ops_recurrent, ops_reduction, ops_shape  # noqa: F401


def find_converter(cls: type) -> Callable[..., Any] | None:
    """The converter of ``cls`` or of the nearest base class that has one."""
    _load_builtin()
    for klass in cls.__mro__:
        fn = CONVERTERS.get(klass)
        if fn is not None:
            return fn
    return None


def has_onnx_form(cls: type) -> bool:
    """Whether ``cls`` exports as its own nodes (a converter, or a user's ``symbolic``)."""
    return callable(getattr(cls, "symbolic", None)) or find_converter(cls) is not None
