"""Names in a graph: unique, legal Python identifiers for nodes, and the dotted path a function
is printed and generated as (``autogradcli.relu``, ``operator.add``)."""

from __future__ import annotations

import builtins
import keyword
import operator
import re
import sys
from typing import Any

__all__ = ["Namespace", "public_path", "qualified_name"]

_ILLEGAL_CHAR = re.compile(r"[^0-9a-zA-Z_]+")
_NUM_SUFFIX = re.compile(r"(.*)_(\d+)$")
_CAMEL = re.compile(r"(?<=[a-z])([A-Z])")
_RESERVED = {"autogradcli", "inf", "nan", "NoneType", "device"}
# namespaces searched, in order, for a function's public path
PUBLIC_NAMESPACES = ("autogradcli", "autogradcli.nn.functional", "autogradcli.linalg")


def snake_case(s: str) -> str:
    """``camelCase`` -> ``camel_case``."""
    return _CAMEL.sub(r"_\1", s).lower()


class Namespace:
    """Hands out unique identifiers: a taken, keyword or builtin name gets a ``_N`` suffix."""

    def __init__(self) -> None:
        self._used: set[str] = set()
        self._next_suffix: dict[str, int] = {}
        self._by_obj: dict[int, str] = {}

    def create_name(self, candidate: str, obj: Any = None) -> str:
        """A fresh legal name like ``candidate`` (the same one again for the same ``obj``)."""
        if obj is not None and id(obj) in self._by_obj:
            return self._by_obj[id(obj)]
        candidate = _ILLEGAL_CHAR.sub("_", candidate) or "_unnamed"
        if candidate[0].isdigit():
            candidate = "_" + candidate
        match = _NUM_SUFFIX.match(candidate)
        base, num = (match.group(1), int(match.group(2))) if match else (candidate, 0)
        if not num:
            num = self._next_suffix.get(base, 0)
        while candidate in self._used or self._illegal(candidate):
            num += 1
            candidate = f"{base}_{num}"
        self._used.add(candidate)
        self._next_suffix[base] = num
        if obj is not None:
            self._by_obj[id(obj)] = candidate
        return candidate

    def release(self, name: str) -> None:
        """Forget ``name`` (its node was erased)."""
        self._used.discard(name)

    @staticmethod
    def _illegal(name: str) -> bool:
        return keyword.iskeyword(name) or name in builtins.__dict__ or name in _RESERVED


def public_path(fn: Any) -> str | None:
    """The first ``autogradcli...`` path under which ``fn`` is a public attribute."""
    for ns_name in PUBLIC_NAMESPACES:
        ns = sys.modules.get(ns_name)
        if ns is None:
            continue
        name = getattr(fn, "__name__", None)
        if name and _unpatched(ns.__dict__.get(name)) is fn:
            return f"{ns_name}.{name}"
        for key, value in ns.__dict__.items():
            if _unpatched(value) is fn and not key.startswith("_"):
                return f"{ns_name}.{key}"
    return None


def _unpatched(value: Any) -> Any:
    return getattr(value, "__fx_original__", value)


def qualified_name(fn: Any) -> str:
    """How a call_function target is printed: ``operator.add``, ``builtins.getattr``,
    ``autogradcli.cat``, or its module and qualified name."""
    name = getattr(fn, "__name__", repr(fn))
    if getattr(operator, name, None) is fn:
        return f"operator.{name}"
    if getattr(builtins, name, None) is fn:
        return f"builtins.{name}"
    path = public_path(fn)
    if path:
        return path
    module = getattr(fn, "__module__", None) or "builtins"
    return f"{module}.{getattr(fn, '__qualname__', name)}"
