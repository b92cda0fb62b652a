"""A minimal reader of a labelled text table (CSV or TSV) for ``dataset: text, task: classify``:
the standard library's ``csv`` module, a header row, one text column and one label column."""

from __future__ import annotations

import csv
import difflib
import io
from dataclasses import dataclass

from ..kinds.base import DataError, Problem
from .files import read_utf8

__all__ = ["MAX_PROBLEMS", "TextTable", "read_table"]

MAX_PROBLEMS = 20  # problems listed before "... and N more"


@dataclass
class TextTable:
    """The texts of a table, their labels (None when the file has no label column) and the
    file's line number of each row (for messages)."""

    texts: list[str]
    labels: list[str] | None
    lines: list[int]


def _column(header: list[str], name: str, path: str, what: str) -> tuple[int | None, Problem]:
    """The index of column ``name`` in ``header``, or the problem of its absence."""
    if name in header:
        return header.index(name), Problem(path, "")
    close = difflib.get_close_matches(name, header, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else f"; the header has {header}"
    return None, Problem(path, f"no {what} column {name!r}{hint}", row=1)


def read_table(
    path: str, text_column: str, label_column: str, need_labels: bool = True
) -> TextTable:
    """The rows of ``path`` (``.tsv``: tab-separated, else comma-separated). Every problem (a
    missing column, a row of the wrong width, an empty label) is reported at once."""
    delimiter = "\t" if path.lower().endswith(".tsv") else ","
    text = read_utf8(path)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    problems: list[Problem] = []
    more = 0
    try:
        header = next(reader, None)
        if header is None:
            raise DataError([Problem(path, "the file is empty: it needs a header row")])
        t_idx, t_problem = _column(header, text_column, path, "text")
        l_idx, l_problem = _column(header, label_column, path, "label")
        if t_idx is None:
            problems.append(t_problem)
        if l_idx is None and need_labels:
            problems.append(l_problem)
        if problems:
            raise DataError(problems)
        texts, labels, lines = [], [], []
        for row in reader:
            if not row:
                continue
            line = reader.line_num
            found = None
            if len(row) != len(header):
                found = f"{len(row)} fields where the header has {len(header)}"
            elif l_idx is not None and not row[l_idx].strip():
                found = f"empty label in column {label_column!r}"
            if found:
                if len(problems) < MAX_PROBLEMS:
                    problems.append(Problem(path, found, row=line))
                else:
                    more += 1
                continue
            assert t_idx is not None
            texts.append(row[t_idx])
            labels.append(row[l_idx].strip() if l_idx is not None else "")
            lines.append(line)
    except csv.Error as err:
        problems.append(Problem(path, f"cannot parse the table: {err}", row=reader.line_num))
    if problems:
        raise DataError(problems, more)
    if not texts:
        raise DataError([Problem(path, "the table has a header but no rows")])
    return TextTable(texts, labels if l_idx is not None else None, lines)
