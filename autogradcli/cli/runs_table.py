"""``agrad runs`` beyond the listing: each run's resolved config flattened to dotted keys (the
settings that differ between the listed runs become columns), ``--sort KEY`` and ``--filter
KEY<op>VALUE`` over statuses, metrics and settings, and sweep trials grouped under their sweep."""

from __future__ import annotations

import json
import math
import os
import re
from typing import Any

from .errors import UserError

__all__ = [
    "MAX_SETTING_COLUMNS",
    "add_details",
    "differing_keys",
    "filter_rows",
    "flatten",
    "group_sweeps",
    "sort_rows",
    "value_of",
]

MAX_SETTING_COLUMNS = 8  # more differing settings are listed under the table (--json: all)
IGNORED = ("name", "output.dir")  # differ between any two runs without saying anything
FIELDS = {  # the row's own keys, by the name --sort/--filter take
    "name": "name",
    "status": "status",
    "epochs": "epochs_completed",
    "best": "best_value",
    "wall_time": "wall_time_s",
    "started": "started_at",
    "folder": "folder",
    "sweep": "sweep",
}
_FILTER = re.compile(r"^\s*([^=!<>\s]+)\s*(>=|<=|!=|==|=|>|<)\s*(.*?)\s*$")


def flatten(data: Any, prefix: str = "") -> dict[str, Any]:
    """``{"optimizer": {"lr": 0.1}, "model": [{...}]}`` -> ``{"optimizer.lr": 0.1,
    "model.0.type": ...}``: the dotted paths ``--set`` takes."""
    if isinstance(data, dict) and data:
        out: dict[str, Any] = {}
        for k, v in data.items():
            out.update(flatten(v, f"{prefix}{k}."))
        return out
    if isinstance(data, list) and data:
        out = {}
        for i, v in enumerate(data):
            out.update(flatten(v, f"{prefix}{i}."))
        return out
    return {prefix[:-1]: data} if prefix else {}


def _read_json(path: str) -> Any:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def add_details(runs_dir: str, rows: list[dict[str, Any]]) -> None:
    """Each row's ``config`` (its flattened ``config.resolved.yaml``) and ``metrics`` (the
    best epoch's, else the last epoch's), read from its folder; both empty when unreadable."""
    import yaml

    for row in rows:
        folder = os.path.join(runs_dir, row["folder"])
        try:
            with open(os.path.join(folder, "config.resolved.yaml"), encoding="utf-8") as f:
                config = yaml.safe_load(f)
        except (OSError, yaml.YAMLError):
            config = None
        row["config"] = flatten(config) if isinstance(config, dict) else {}
        summary = _read_json(os.path.join(folder, "summary.json"))
        summary = summary if isinstance(summary, dict) else {}
        best = summary.get("best") if isinstance(summary.get("best"), dict) else {}
        metrics = best.get("metrics") or summary.get("final") or {}
        row["metrics"] = {k: v for k, v in metrics.items() if k not in ("epoch", "step", "time")}


def differing_keys(rows: list[dict[str, Any]]) -> list[str]:
    """The settings whose values are not the same in every row (a key a row lacks differs),
    in config order."""
    configs = [r["config"] for r in rows if r.get("config")]
    if len(configs) < 2:
        return []
    keys = list(dict.fromkeys(k for c in configs for k in c))
    missing = object()
    return [
        k
        for k in keys
        if k not in IGNORED
        and len({json.dumps(c.get(k, missing), default=str) for c in configs}) > 1
    ]


def value_of(row: dict[str, Any], key: str) -> Any:
    """A row's value for ``key``: its own field (status, epochs, best, wall_time...), then a
    metric of its best epoch (val_acc), then a setting (optimizer.lr); None where it has none."""
    if key in FIELDS:
        return row.get(FIELDS[key])
    if key in row.get("metrics", {}):
        return row["metrics"][key]
    return row.get("config", {}).get(key)


def _known(rows: list[dict[str, Any]], key: str) -> None:
    """UserError when no row has ``key`` at all, with the nearest known key."""
    if key in FIELDS or any(
        key in r.get("metrics", {}) or key in r.get("config", {}) for r in rows
    ):
        return
    from ..config.errors import did_you_mean

    names = list(FIELDS) + sorted(
        {k for r in rows for k in (*r.get("metrics", {}), *r.get("config", {}))}
    )
    hint = did_you_mean(key, names)
    raise UserError(
        f"no run has {key!r}{hint}; keys: {', '.join(FIELDS)}, a metric (val_acc) or a "
        "setting (optimizer.lr)"
    )


def _number(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    try:
        return float(str(v))
    except ValueError:
        return None


def _matches(value: Any, op: str, text: str) -> bool:
    a, b = _number(value), _number(text)
    if op in ("=", "==", "!="):
        same = (a == b) if a is not None and b is not None else str(value).lower() == text.lower()
        if value is None:
            same = text.lower() in ("", "null", "none")
        return same if op != "!=" else not same
    if a is None or b is None or math.isnan(a):
        return False
    return {"<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b}[op]


def filter_rows(rows: list[dict[str, Any]], filters: list[str]) -> list[dict[str, Any]]:
    """The rows matching every ``KEY=VALUE`` (also ``!=``, ``<``, ``>``, ``<=``, ``>=``;
    numbers compare as numbers, text without case)."""
    for text in filters:
        m = _FILTER.match(text)
        if not m:
            raise UserError(
                f"--filter {text!r}: expected KEY=VALUE, KEY!=VALUE or KEY<op>NUMBER "
                "(status=completed, optimizer.lr<0.01, val_acc>=0.9)"
            )
        key, op, want = m.groups()
        _known(rows, key)
        rows = [r for r in rows if _matches(value_of(r, key), op, want)]
    return rows


def sort_rows(rows: list[dict[str, Any]], key: str, descending: bool) -> list[dict[str, Any]]:
    """``rows`` by ``key`` (``-key``: descending); rows without a value last."""
    if key.startswith("-"):
        key, descending = key[1:], not descending
    _known(rows, key)

    def rank(r: dict[str, Any]) -> tuple:
        v = value_of(r, key)
        n = _number(v)
        if v is None or (n is not None and math.isnan(n)):
            return (1, 0, 0.0, "")
        if n is not None:
            return (0, 0, -n if descending else n, "")
        return (0, 1, 0.0, str(v))

    ordered = sorted(rows, key=rank)
    if descending:  # text values descending too; rows without a value stay last
        text = [r for r in ordered if rank(r)[:2] == (0, 1)]
        nums = [r for r in ordered if rank(r)[:2] == (0, 0)]
        ordered = nums + text[::-1] + [r for r in ordered if rank(r)[0] == 1]
    return ordered


def group_sweeps(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows with each sweep's trials together, where its first trial stands (the order
    within the sweep, and of the other rows, kept)."""
    out: list[dict[str, Any]] = []
    placed: set[str] = set()
    for r in rows:
        sweep = r.get("sweep")
        if sweep is None:
            out.append(r)
        elif sweep not in placed:
            placed.add(sweep)
            out += [t for t in rows if t.get("sweep") == sweep]
    return out
