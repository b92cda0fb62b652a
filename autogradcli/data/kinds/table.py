"""``dataset: table``: a CSV, TSV or Parquet file with a target column and feature columns of
numbers, categories and booleans, gaps included, preprocessed as the config declares.

Every cell is read as text (``data/table/read.py``); each column's type is inferred from the
training rows unless declared; fill values, scales, vocabularies and class names are fitted on
the training rows only (``data/table/fit.py``) and applied to any rows, a new file's included
(``data/table/encode.py``). Inputs are float32; class targets int64, numeric targets float32
shaped (n, 1).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..table.problems import Problems, suggest
from ..table.spec import MISSING_POLICIES, parse_columns
from .base import DataKind, Problem, Source

__all__ = ["TableKind", "TableSource"]

_FORMATS = ("auto", "csv", "tsv", "parquet")


class TableSource(Source):
    """A table as read (``raw``, a ``RawTable``): every cell as text, gaps as None."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw

    def __len__(self) -> int:
        return len(self.raw)


class TableKind(DataKind):
    """A table file: ``target`` names the column to predict, ``columns`` declares per-column
    types and preprocessing, ``missing`` says what a gap does (fill, drop_rows or error)."""

    name = "table"
    path_settings = ("path",)

    def __init__(
        self,
        path: str,
        target: str,
        columns: dict[str, Any] | None = None,
        missing: str = "fill",
        format: str = "auto",
    ) -> None:
        if not isinstance(target, str) or not target:
            raise ValueError(f"target: expected a column name, got {target!r}")
        if missing not in MISSING_POLICIES:
            raise ValueError(f"missing: {missing!r} is not one of {', '.join(MISSING_POLICIES)}")
        if format not in _FORMATS:
            raise ValueError(f"format: {format!r} is not one of {', '.join(_FORMATS)}")
        self.specs = parse_columns(columns)
        if self.specs.get(target) and self.specs[target].type in ("drop", "boolean"):
            raise ValueError(
                f"columns.{target}: the target can be declared number or category, not "
                f"{self.specs[target].type}"
            )
        self.path, self.target, self.missing, self.format = path, target, missing, format

    def read(self, path: str | None = None) -> TableSource:
        """The configured table (``path`` None: its target and ``columns`` names are checked
        against the header) or a new file for eval/predict; gaps handled per ``missing``."""
        from ..table.read import missing, read_table

        raw = read_table(self.path if path is None else path, self.format)
        problems = Problems()
        if path is None:
            for name in [self.target, *self.specs]:
                if name not in raw.cells:
                    what = "target" if name == self.target else "columns"
                    problems.add(
                        Problem(
                            raw.file,
                            f"{what}: no column {name!r} in the header{suggest(name, raw.header)}",
                            row=1,
                        )
                    )
            problems.check()
        used = [h for h in raw.header if self.specs.get(h) is None or self.specs[h].type != "drop"]
        gaps = np.column_stack([missing(raw.cells[h]) for h in used]) if used else None
        if gaps is not None and gaps.any():
            if self.missing == "drop_rows":
                raw = raw.take(~gaps.any(axis=1))
                if len(raw) == 0:
                    problems.add(
                        Problem(
                            raw.file,
                            "every row has a missing value, so `missing: drop_rows` leaves none",
                        )
                    )
            elif self.missing == "error" or path is None:
                self._gap_problems(raw, used, gaps, problems)
        problems.check()
        return TableSource(raw)

    def _gap_problems(
        self, raw: Any, used: list[str], gaps: np.ndarray, problems: Problems
    ) -> None:
        """Each missing cell a problem under ``missing: error``; else only missing targets."""
        for r, c in np.argwhere(gaps):
            name = used[c]
            if self.missing == "error":
                why = "missing value (the config says `missing: error`)"
            elif name == self.target:
                why = "the target is missing (fix it, or set `missing: drop_rows`)"
            else:
                continue
            problems.add(Problem(raw.file, why, row=int(raw.rows[r]), column=name))

    def fit(self, source: Source, train: Sequence[int]) -> dict[str, Any]:
        """Column types, fills, scales, vocabularies and classes from rows ``train`` only."""
        from ..table.fit import fit_table

        assert isinstance(source, TableSource)
        index = np.asarray(train, dtype=np.int64)
        return fit_table(source.raw, index, self.target, self.specs)

    def samples(
        self,
        source: Source,
        state: dict[str, Any],
        rows: Sequence[int] | None = None,
        train: bool = False,
    ) -> Any:
        """(float32 input, target) pairs of ``rows`` with the fitted ``state`` applied."""
        from ...tensor.tensor import wrap
        from ..dataset import TensorDataset
        from ..table.encode import encode_inputs, encode_target

        assert isinstance(source, TableSource)
        index = np.arange(len(source)) if rows is None else np.asarray(rows, dtype=np.int64)
        problems = Problems()
        x = encode_inputs(source.raw, state, index, problems)
        y = encode_target(source.raw, state, index, problems)
        problems.check()
        return TensorDataset(wrap(x), wrap(y))

    def inputs(self, source: Source, state: dict[str, Any]) -> Any:
        """The float32 inputs of every row of a new table (no target needed)."""
        from ...tensor.tensor import wrap
        from ..dataset import TensorDataset
        from ..table.encode import encode_inputs

        assert isinstance(source, TableSource)
        problems = Problems()
        x = encode_inputs(source.raw, state, np.arange(len(source)), problems)
        problems.check()
        return TensorDataset(wrap(x))

    def names(self, source: Source) -> list[str]:
        """Each row's number as errors give it (its line in a CSV/TSV file)."""
        assert isinstance(source, TableSource)
        return [str(r) for r in source.raw.rows]

    def sizes(self, state: dict[str, Any]) -> dict[str, Any]:
        """``classes``, the class count of a class target (none for a numeric one), and, when
        a column has ``encode: embedding``, ``embeddings``: the input ``width`` and each such
        column's ``name``, index ``slot`` and ``num_embeddings`` (its vocabulary and the
        unknown slot 0), what the config's ``TableEmbeddings`` layer is built from."""
        target = state["target"]
        out: dict[str, Any] = {}
        if target["type"] == "category":
            out["classes"] = len(target["classes"])
        columns = [
            {"name": c["name"], "slot": c["start"], "num_embeddings": len(c["vocab"]) + 1}
            for c in state["features"]
            if c["type"] == "category" and c["encode"] == "embedding"
        ]
        if columns:
            out["embeddings"] = {"width": state["width"], "columns": columns}
        return out

    def class_names(self, state: dict[str, Any]) -> list[str] | None:
        """The target's class names in index order; None for a numeric target."""
        target = state["target"]
        return list(target["classes"]) if target["type"] == "category" else None
