"""Turning a table's raw rows into a float32 input matrix and its targets, with the state fitted
on the training rows (the same code for training, evaluation and prediction)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..kinds.base import Problem
from .problems import Problems, suggest
from .read import RawTable, missing
from .values import booleans, numbers

__all__ = ["encode_inputs", "encode_target"]


def encode_inputs(
    raw: RawTable, state: dict[str, Any], index: np.ndarray, problems: Problems
) -> np.ndarray:
    """Rows ``index`` of ``raw`` as float32 ``(len(index), state['width'])``: numbers filled and
    scaled, booleans 0/1, categories one-hot (slot 0: unknown) or one embedding index each."""
    out = np.zeros((len(index), state["width"]), dtype=np.float32)
    rows = raw.rows[index]
    for col in state["features"]:
        name = col["name"]
        if name not in raw.cells:
            problems.add(
                Problem(
                    raw.file,
                    f"not in the header, and the model was trained on it{suggest(name, raw.header)}",
                    column=name,
                )
            )
            continue
        cells = raw.cells[name][index]
        start = col["start"]
        if col["type"] == "number":
            values = numbers(cells, rows, raw.file, name, problems)
            values[np.isnan(values)] = col["fill"]
            out[:, start] = (values - col["center"]) / col["scale"]
        elif col["type"] == "boolean":
            values = booleans(cells, rows, raw.file, name, problems)
            values[np.isnan(values)] = col["fill"]
            out[:, start] = values
        else:
            slots = _category_slots(cells, col)
            if col["encode"] == "embedding":
                out[:, start] = slots
            else:
                out[np.arange(len(index)), start + slots] = 1.0
    return out


def _category_slots(cells: np.ndarray, col: dict[str, Any]) -> np.ndarray:
    """Each cell's slot: 1 + its place in the vocabulary, 0 for a value never seen in training."""
    lookup = {v: i + 1 for i, v in enumerate(col["vocab"])}
    fill = col["fill"]
    return np.array([lookup.get(fill if c is None else c, 0) for c in cells], dtype=np.int64)


def encode_target(
    raw: RawTable, state: dict[str, Any], index: np.ndarray, problems: Problems
) -> np.ndarray:
    """The target of rows ``index``: int64 class indices, or float32 values shaped (n, 1)."""
    target = state["target"]
    name = target["name"]
    if name not in raw.cells:
        problems.add(
            Problem(
                raw.file, f"has no target column {name!r}{suggest(name, raw.header)}", column=name
            )
        )
        return np.zeros(0)
    cells, rows = raw.cells[name][index], raw.rows[index]
    for i in np.flatnonzero(missing(cells)):
        problems.add(
            Problem(
                raw.file,
                "the target is missing (fix it, or set `missing: drop_rows`)",
                row=int(rows[i]),
                column=name,
            )
        )
    if target["type"] == "number":
        return numbers(cells, rows, raw.file, name, problems).astype(np.float32).reshape(-1, 1)
    lookup = {c: i for i, c in enumerate(target["classes"])}
    out = np.zeros(len(cells), dtype=np.int64)
    for i, c in enumerate(cells):
        if c is None:
            continue
        if c not in lookup:
            problems.add(
                Problem(
                    raw.file,
                    f"the class {c!r} is not one the training rows had ({', '.join(target['classes'][:10])})",
                    row=int(rows[i]),
                    column=name,
                )
            )
        else:
            out[i] = lookup[c]
    return out
