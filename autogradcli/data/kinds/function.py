"""``dataset: module:fn``: the user's own function returning a Dataset of (input, target)
pairs, its keyword arguments the other keys of the data section. It learns nothing (its state
is {}); a file given to eval/predict is read by its extension."""

from __future__ import annotations

import inspect
import os
import pathlib
import typing
from collections.abc import Callable, Sequence
from typing import Any

from .arrays import ArrayKind
from .base import Source

__all__ = ["FunctionKind", "function_path_settings"]


class FunctionKind(ArrayKind):
    """The Dataset ``fn(**kwargs)`` returns."""

    name = "function"

    def __init__(self, fn: Callable[..., Any], kwargs: dict[str, Any], label: str = "") -> None:
        self.fn, self.kwargs, self.label = fn, dict(kwargs), label or getattr(fn, "__name__", "")

    def fit(self, source: Source, train: Sequence[int]) -> dict[str, Any]:
        """Nothing: the function's Dataset is the user's own, used as it comes."""
        return {}

    def load(self) -> Any:
        """``fn(**kwargs)``, checked to be a non-empty Dataset of (input, target) pairs."""
        dataset = self.fn(**self.kwargs)
        if not hasattr(dataset, "__len__") or not hasattr(dataset, "__getitem__"):
            raise TypeError(f"{self.label!r} returned a {type(dataset).__name__}, not a Dataset")
        return dataset


_PATH_TYPES = (os.PathLike, pathlib.Path, pathlib.PurePath)


def function_path_settings(fn: Callable[..., Any]) -> tuple[str, ...]:
    """The arguments of ``fn`` that name files or folders: those listed in its
    ``path_settings`` attribute, and those annotated ``os.PathLike`` or ``pathlib.Path`` (alone,
    or in a union such as ``Path | None``). The config resolves them as it does ``data.path``."""
    declared = tuple(getattr(fn, "path_settings", ()) or ())
    try:
        hints = typing.get_type_hints(fn)
    except Exception:  # unresolvable annotations: only the declared ones
        hints = {}
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return declared
    annotated = tuple(n for n in params if n not in declared and _is_path_type(hints.get(n)))
    return declared + annotated


def _is_path_type(hint: Any) -> bool:
    """Whether ``hint`` is a path type, or a union holding one."""
    if isinstance(hint, type):
        return issubclass(hint, _PATH_TYPES)
    return any(_is_path_type(arg) for arg in typing.get_args(hint))
