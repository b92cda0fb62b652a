"""Reading the text cells of one column as numbers or booleans, each bad cell a located
problem."""

from __future__ import annotations

import math

import numpy as np

from ..kinds.base import Problem
from .problems import Problems

__all__ = ["FALSE", "TRUE", "booleans", "is_boolean", "is_number", "numbers"]

TRUE = frozenset(["true", "yes"])
FALSE = frozenset(["false", "no"])


def is_number(text: str) -> bool:
    """Whether ``text`` reads as a finite number."""
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def is_boolean(texts: np.ndarray) -> bool:
    """Whether every one of ``texts`` (non-missing) is a yes/no or true/false word."""
    words = {t.lower() for t in texts}
    return (
        bool(words)
        and (words <= TRUE | FALSE)
        and len(words) <= 2
        and not (words & {"yes", "no"} and words & {"true", "false"})
    )


def numbers(
    cells: np.ndarray, rows: np.ndarray, file: str, column: str, problems: Problems
) -> np.ndarray:
    """``cells`` as float64, NaN where missing; a cell that is not a finite number is a
    problem at its row."""
    out = np.full(len(cells), np.nan)
    for i, text in enumerate(cells):
        if text is None:
            continue
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            problems.add(
                Problem(file, f"{text!r} is not a number", row=int(rows[i]), column=column)
            )
            continue
        out[i] = value
    return out


def booleans(
    cells: np.ndarray, rows: np.ndarray, file: str, column: str, problems: Problems
) -> np.ndarray:
    """``cells`` as 1.0 (true/yes) and 0.0 (false/no), NaN where missing; any other word is a
    problem at its row."""
    out = np.full(len(cells), np.nan)
    for i, text in enumerate(cells):
        if text is None:
            continue
        word = text.lower()
        if word in TRUE:
            out[i] = 1.0
        elif word in FALSE:
            out[i] = 0.0
        else:
            problems.add(
                Problem(
                    file,
                    f"{text!r} is not a boolean (true/false, yes/no)",
                    row=int(rows[i]),
                    column=column,
                )
            )
    return out
