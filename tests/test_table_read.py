"""The table reader's cells: trimmed as pyarrow trims, NA spellings missing, each row's line,
read without importing pandas or ``pyarrow.compute``; the median fill as numpy computes it."""

from __future__ import annotations

import numpy as np
import pytest

READ_FRESH = """
import json, sys
from autogradcli.data.table.read import read_table
t = read_table({path!r})
cells = {{k: v.tolist() for k, v in t.cells.items()}}
loaded = [m for m in ("pandas", "pyarrow.compute") if m in sys.modules]
print(json.dumps({{"loaded": loaded, "cells": cells, "rows": t.rows.tolist()}}))
"""


def test_a_table_is_read_without_importing_pandas(tmp_path):
    """pyarrow's ``pa.array``/``pa.scalar``/``to_numpy`` import pandas (0.1-0.25 s of a cold
    ``agrad train``) and ``pyarrow.compute`` takes ~45 ms to import: the reader uses neither
    and still trims cells and maps NA spellings to missing (None), with each row's line."""
    pytest.importorskip("pyarrow")
    from test_lazy_imports import run_fresh

    path = tmp_path / "t.csv"
    path.write_text("a,b\n 1 ,NA\n,x y \n?,n/a\n2,None\n", encoding="utf-8")
    out = run_fresh(READ_FRESH.format(path=str(path)))
    assert out["loaded"] == []
    assert out["cells"] == {"a": ["1", None, "2"], "b": [None, "x y", None]}
    assert out["rows"] == [2, 3, 5]  # line 4's row is all missing: left out


def test_fill_median_is_numpys_median_bit_for_bit():
    from autogradcli.data.table.fit import median

    rng = np.random.default_rng(0)
    for n in (1, 2, 3, 4, 7, 10, 101):
        for values in (rng.standard_normal(n) * 1e3, rng.integers(0, 5, n).astype(np.float64)):
            assert median(values) == float(np.median(values)), (n, values)
            assert type(median(values)) is float


def test_cells_are_trimmed_of_what_pyarrow_calls_whitespace():
    """``str.strip`` trims exactly the characters of ``pyarrow.compute.utf8_trim_whitespace``
    (every code point below U+3100, where Unicode's spaces are)."""
    pa = pytest.importorskip("pyarrow")
    import pyarrow.compute as pc

    from autogradcli.data.table.read import _cells

    chars = [chr(c) for c in range(0x3100) if not 0xD800 <= c <= 0xDFFF]
    text = [f"{c}x{c}" for c in chars]
    want = pc.utf8_trim_whitespace(pa.chunked_array([pa.array(text)])).to_pylist()
    assert _cells(pa.chunked_array([pa.array(text)])).tolist() == want
    assert sum(w == "x" for w in want) >= 25  # the spaces are there to be trimmed
