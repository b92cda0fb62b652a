"""Value checks for config validation: a ``Check`` is (what is expected, predicate).

A failing check becomes ``expected <what>, got <value> (<type>)``, so the description is written
to follow "expected". ``show`` and ``describe`` word values and objects for those messages.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Check = tuple[str, Callable[[Any], bool]]


def is_int(v: Any) -> bool:
    """An int that is not a bool (YAML's ``true`` is no count)."""
    return isinstance(v, int) and not isinstance(v, bool)


def is_num(v: Any) -> bool:
    """An int or float that is not a bool."""
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def show(v: Any) -> str:
    """A value as messages quote it: ``'x' (str)``, ``3 (int)``, ``null``."""
    return f"{v!r} ({type(v).__name__})" if v is not None else "null"


def describe(obj: Any) -> str:
    """What an import path named, for 'is ..., not a ...' messages: ``the class Foo``."""
    if isinstance(obj, type):
        return f"the class {obj.__name__}"
    if callable(obj):
        return f"the function {getattr(obj, '__name__', repr(obj))}"
    name = type(obj).__name__
    return f"{'an' if name[0].lower() in 'aeiou' else 'a'} {name}"


POS_INT: Check = ("a positive integer", lambda v: is_int(v) and v >= 1)
NONNEG_INT: Check = ("a non-negative integer", lambda v: is_int(v) and v >= 0)
INT: Check = ("an integer", is_int)
NUMBER: Check = ("a number", is_num)
NONNEG_NUMBER: Check = ("a non-negative number", lambda v: is_num(v) and v >= 0)
BOOL: Check = ("true or false", lambda v: isinstance(v, bool))
STR: Check = ("a string", lambda v: isinstance(v, str) and v != "")
FRACTION: Check = ("a number in [0, 1)", lambda v: is_num(v) and 0 <= v < 1)
OPT_POS_NUMBER: Check = ("null or a positive number", lambda v: v is None or (is_num(v) and v > 0))
OPT_STR: Check = ("null or a string", lambda v: v is None or (isinstance(v, str) and v != ""))
OPT_NONNEG_INT: Check = (
    "null or a non-negative integer",
    lambda v: v is None or (is_int(v) and v >= 0),
)


def check_for_default(default: Any) -> Check | None:
    """The check a key gets from the type of its default (none for a null default)."""
    if isinstance(default, bool):
        return BOOL
    if is_int(default):
        return INT
    if isinstance(default, float):
        return NUMBER
    if isinstance(default, str):
        return STR
    return None
