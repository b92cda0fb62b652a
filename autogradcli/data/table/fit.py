"""What a table kind learns from its training rows: each column's type, fill value, scale and
vocabulary, and the target's classes, as plain JSON-able data. Nothing here sees another row."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from ..kinds.base import Problem
from .problems import Problems
from .read import RawTable, missing
from .spec import ColumnSpec
from .values import booleans, is_boolean, is_number, numbers

__all__ = ["MISSING_TOKEN", "UNKNOWN_TOKEN", "fit_table"]

UNKNOWN_TOKEN = "<unknown>"  # slot 0 of every category: a value the training rows never had
MISSING_TOKEN = "<missing>"  # the category a missing cell becomes under ``fill: missing``
STATE_VERSION = 1
# A one-hot category wider than this is refused: a column of names or ids, not categories.
MAX_ONE_HOT = 1000


def fit_table(
    raw: RawTable, train: np.ndarray, target: str, specs: dict[str, ColumnSpec]
) -> dict[str, Any]:
    """The state learned from rows ``train`` (indices into ``raw``) of every feature column (all
    but the target and the ``drop`` ones) and of the target; ``DataError`` lists every problem."""
    problems = Problems()
    features: list[dict[str, Any]] = []
    width = 0
    names = [h for h in raw.header if h != target and specs.get(h, ColumnSpec()).type != "drop"]
    for name in names:
        spec = specs.get(name, ColumnSpec())
        column = _fit_column(raw, train, name, spec, problems)
        if column is not None:
            column["start"] = width
            width += column["width"]
            features.append(column)
    target_state = _fit_target(raw, train, target, specs.get(target, ColumnSpec()), problems)
    if not names:
        problems.add(
            Problem(
                raw.file,
                "no feature column is left once the target and the dropped columns are set aside",
            )
        )
    problems.check()
    return {"version": STATE_VERSION, "target": target_state, "features": features, "width": width}


def _observed(raw: RawTable, train: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray]:
    """The training cells of column ``name`` that are not missing, and their row numbers."""
    cells, rows = raw.cells[name][train], raw.rows[train]
    present = ~missing(cells)
    return cells[present], rows[present]


def _infer(
    cells: np.ndarray, rows: np.ndarray, raw: RawTable, name: str, problems: Problems
) -> str | None:
    """number, boolean or category from the training cells; None (with a problem) when the
    column mixes numbers with words."""
    if is_boolean(cells):
        return "boolean"
    numeric = np.array([is_number(c) for c in cells], dtype=bool)
    if numeric.all():
        return "number"
    if numeric.any() and numeric.mean() >= 0.5:
        odd = np.flatnonzero(~numeric)
        example = ", ".join(f"{cells[i]!r} at row {rows[i]}" for i in odd[:3])
        problems.add(
            Problem(
                raw.file,
                f"mixed types: {int(numeric.sum())} numbers and {len(odd)} other values ({example}); "
                f"fix those cells, or declare `columns: {{{name}: category}}`",
                column=name,
            )
        )
        return None
    return "category"


def _fit_column(
    raw: RawTable, train: np.ndarray, name: str, spec: ColumnSpec, problems: Problems
) -> dict[str, Any] | None:
    """One feature column: its type (declared, else inferred) and what it learns."""
    cells, rows = _observed(raw, train, name)
    if len(cells) == 0:
        problems.add(
            Problem(
                raw.file,
                f"every training row is missing this column: drop it with `columns: {{{name}: drop}}`",
                column=name,
            )
        )
        return None
    kind = spec.type or _infer(cells, rows, raw, name, problems)
    if kind == "number":
        return _fit_number(raw, name, spec, numbers(cells, rows, raw.file, name, problems))
    if kind == "boolean":
        flags = booleans(cells, rows, raw.file, name, problems)
        flags = flags[~np.isnan(flags)]
        mode = float(flags.mean() >= 0.5) if len(flags) else 0.0
        return {"name": name, "type": "boolean", "fill": mode, "width": 1}
    if kind == "category":
        return _fit_category(raw, train, name, spec, cells, problems)
    return None


def median(values: np.ndarray) -> float:
    """``np.median`` of 1-d NaN-free ``values``, computed as numpy does (partition, then the
    mean of the middle one or two), without its NaN check, which imports ``numpy.ma`` (~20 ms
    of a cold ``agrad train``)."""
    half = len(values) // 2
    if len(values) % 2:
        return float(np.partition(values, half)[half])
    return float(np.partition(values, [half - 1, half])[half - 1 : half + 1].mean())


def _fit_number(raw: RawTable, name: str, spec: ColumnSpec, values: np.ndarray) -> dict[str, Any]:
    """Fill value and scale of a number column, from its parsed training values."""
    values = values[~np.isnan(values)]
    if len(values) == 0:  # every cell was a bad one, already reported
        return {
            "name": name,
            "type": "number",
            "fill": 0.0,
            "center": 0.0,
            "scale": 1.0,
            "width": 1,
        }
    rule = spec.fill_for("number")
    fill = (
        median(values)
        if rule == "median"
        else float(values.mean())
        if rule == "mean"
        else float(rule)
    )
    if spec.scale == "standard":
        center, scale = float(values.mean()), float(values.std())
    elif spec.scale == "minmax":
        center, scale = float(values.min()), float(values.max() - values.min())
    else:
        center, scale = 0.0, 1.0
    return {
        "name": name,
        "type": "number",
        "fill": fill,
        "center": center,
        "scale": scale if scale > 0 else 1.0,  # a constant column stays constant (as sklearn does)
        "width": 1,
    }


def _fit_category(
    raw: RawTable,
    train: np.ndarray,
    name: str,
    spec: ColumnSpec,
    cells: np.ndarray,
    problems: Problems,
) -> dict[str, Any]:
    """Vocabulary and fill of a category column; refused when too wide to one-hot."""
    counts = Counter(cells.tolist())
    if spec.encode == "one_hot" and len(counts) > MAX_ONE_HOT:
        problems.add(
            Problem(
                raw.file,
                f"{len(counts):,} distinct values in the training rows, more than {MAX_ONE_HOT:,} "
                f"one-hot inputs (an identifier?): drop it with `columns: {{{name}: drop}}`, or "
                "give it `encode: embedding`",
                column=name,
            )
        )
    has_gaps = len(cells) < len(train)
    if spec.fill_for("category") == "mode":
        fill = counts.most_common(1)[0][0]
    else:
        fill = MISSING_TOKEN
        if has_gaps:
            counts[MISSING_TOKEN] += len(train) - len(cells)
    vocab = sorted(counts)
    width = 1 if spec.encode == "embedding" else len(vocab) + 1
    return {
        "name": name,
        "type": "category",
        "encode": spec.encode,
        "vocab": vocab,
        "fill": fill,
        "width": width,
    }


def _fit_target(
    raw: RawTable, train: np.ndarray, target: str, spec: ColumnSpec, problems: Problems
) -> dict[str, Any]:
    """The target: numbers (regression) or classes, whose names are kept as strings."""
    cells, rows = _observed(raw, train, target)
    kind = spec.type
    if kind is None:
        kind = "number" if len(cells) and all(is_number(c) for c in cells) else "category"
    if kind == "number":
        numbers(cells, rows, raw.file, target, problems)
        return {"name": target, "type": "number"}
    classes = sorted(set(cells.tolist()), key=_class_order)
    if len(classes) < 2:
        which = f"only the class {classes[0]!r}" if classes else "no class"
        problems.add(
            Problem(
                raw.file,
                f"the target has {which} in the training rows: a classifier needs two or more",
                column=target,
            )
        )
    return {"name": target, "type": "category", "classes": classes}


def _class_order(name: str) -> tuple[int, float, str]:
    """Numbers in numeric order (2 before 10), then words alphabetically."""
    return (0, float(name), name) if is_number(name) else (1, 0.0, name)
