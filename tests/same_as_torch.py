"""One call runs a case on both libraries: ``same_values(lambda m: m.isin(...))`` compares
results (dtype and values, tuples element by element), ``same_error(case, kind)`` the error's
type and message (its first line, as torch appends C++ context after it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import autogradcli as ag


def same_values(case: Callable[[Any], Any], rtol: float = 1e-6) -> None:
    """``case(autogradcli)`` equals ``case(torch)``: dtypes, shapes and values."""
    torch = pytest.importorskip("torch")
    ours, theirs = case(ag), case(torch)
    ours, theirs = (ours, theirs) if isinstance(ours, tuple) else ((ours,), (theirs,))
    assert len(ours) == len(theirs)
    for a, t in zip(ours, theirs):
        assert str(a.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        np.testing.assert_allclose(a.numpy(), t.numpy(), rtol=rtol)


def same_error(case: Callable[[Any], Any], kind: type[Exception] = RuntimeError) -> None:
    """``case`` raises ``kind`` with the same message on both libraries."""
    torch = pytest.importorskip("torch")
    with pytest.raises(kind) as theirs:
        case(torch)
    with pytest.raises(kind) as ours:
        case(ag)
    assert str(ours.value) == str(theirs.value).split("\n")[0]
