"""``init_from``: the pretrained weights a run starts from (``trainer/init_from.py`` loads them).

Only the form is checked here; the file is read when the run is built (a resumed or evaluated
run does not need it any more), and its problems are reported at ``init_from.path``'s line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .checks import show
from .errors import Path
from .schema import INIT_FROM_CHECKS, INIT_FROM_DEFAULTS

if TYPE_CHECKING:
    from .validator import Validator

__all__ = ["validate_init_from"]


def validate_init_from(v: Validator, value: Any, path: Path) -> dict[str, Any] | None:
    """``init_from``: null, a path (shorthand for ``{path: ...}``) or a mapping with ``path``,
    ``strict``, ``map`` (prefix -> prefix or null), ``freeze`` (patterns) and ``checkpoint``."""
    if value is None:
        return None
    if isinstance(value, str):
        value = {"path": value}
    spec = v.mapping(value, path, "'init_from'")
    if spec is None:
        return None
    out = v.fields(spec, path, INIT_FROM_DEFAULTS, INIT_FROM_CHECKS, "'init_from'")
    mapping = out.get("map")
    if mapping is None:
        out["map"] = {}
    elif not isinstance(mapping, dict):
        v.error(path + ("map",), f"expected a mapping of key prefixes, got {show(mapping)}")
    else:
        for key, to in mapping.items():
            if not isinstance(key, str) or key == "":
                v.error(path + ("map",), f"expected a non-empty key prefix, got {show(key)}")
            elif to is not None and not isinstance(to, str):
                v.error(path + ("map", key), f"expected a prefix or null, got {show(to)}")
    patterns = out.get("freeze")
    if isinstance(patterns, str):
        out["freeze"] = [patterns]
    elif patterns is None:
        out["freeze"] = []
    elif not isinstance(patterns, list):
        v.error(path + ("freeze",), f"expected a list of name patterns, got {show(patterns)}")
    else:
        for i, p in enumerate(patterns):
            if not isinstance(p, str) or p == "":
                v.error(path + ("freeze", i), f"expected a name pattern, got {show(p)}")
    return out
