"""The ``columns:`` setting of a table: per-column type and preprocessing, checked once when the
kind is built so that a typo is refused before any file is read."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["MISSING_POLICIES", "TYPES", "ColumnSpec", "parse_columns"]

TYPES = ("number", "category", "boolean", "drop")
MISSING_POLICIES = ("fill", "drop_rows", "error")
_FILLS = {"number": ("median", "mean"), "category": ("missing", "mode"), "boolean": ("mode",)}
_DEFAULT_FILL = {"number": "median", "category": "missing", "boolean": "mode"}
_SCALES = ("standard", "minmax", "none")
_ENCODINGS = ("one_hot", "embedding")
_KEYS = ("type", "fill", "scale", "encode")


@dataclass(frozen=True)
class ColumnSpec:
    """What the config says of one column; None where it leaves the choice to inference."""

    type: str | None = None
    fill: str | float | None = None
    scale: str = "standard"
    encode: str = "one_hot"

    def fill_for(self, kind: str) -> str | float:
        """The fill rule for a column of type ``kind``: the declared one, else the default."""
        return self.fill if self.fill is not None else _DEFAULT_FILL[kind]


def parse_columns(columns: dict[str, Any] | None) -> dict[str, ColumnSpec]:
    """``columns:`` as ``ColumnSpec``s; ``ValueError`` naming the setting for anything wrong."""
    if columns is None:
        return {}
    if not isinstance(columns, dict):
        raise ValueError(f"columns: expected a mapping of column name to type, got {columns!r}")
    specs, errors = {}, []
    for name, value in columns.items():
        where = f"columns.{name}"
        if isinstance(value, str):
            value = {"type": value}
        if not isinstance(value, dict):
            errors.append(
                f"{where}: expected one of {', '.join(TYPES)} or a mapping, got {value!r}"
            )
            continue
        unknown = [k for k in value if k not in _KEYS]
        if unknown:
            errors.append(f"{where}: unknown key {unknown[0]!r} (expected {', '.join(_KEYS)})")
            continue
        errors.extend(_check(where, value))
        specs[str(name)] = ColumnSpec(
            type=value.get("type"),
            fill=value.get("fill"),
            scale=value.get("scale", "standard"),
            encode=value.get("encode", "one_hot"),
        )
    if errors:
        raise ValueError("\n".join(errors))
    return specs


def _check(where: str, value: dict[str, Any]) -> list[str]:
    """The problems of one column's mapping."""
    errors = []
    kind = value.get("type")
    if kind is not None and kind not in TYPES:
        errors.append(f"{where}.type: {kind!r} is not one of {', '.join(TYPES)}")
        return errors
    if "scale" in value and value["scale"] not in _SCALES:
        errors.append(f"{where}.scale: {value['scale']!r} is not one of {', '.join(_SCALES)}")
    if "encode" in value and value["encode"] not in _ENCODINGS:
        errors.append(f"{where}.encode: {value['encode']!r} is not one of {', '.join(_ENCODINGS)}")
    fill = value.get("fill")
    if fill is not None:
        allowed = _FILLS.get(kind) if kind else sorted({f for fs in _FILLS.values() for f in fs})
        number_ok = kind in (None, "number") and isinstance(fill, (int, float))
        if not number_ok and fill not in (allowed or ()):
            errors.append(
                f"{where}.fill: {fill!r} is not one of {', '.join(allowed or ())}"
                + (" or a number" if kind in (None, "number") else "")
            )
    return errors
