"""Collecting a table's problems so that every one is reported at once, in a bounded list."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from ..kinds.base import DataError, Problem

# More than this many problems are counted, not listed: a broken file can have millions.
MAX_PROBLEMS = 20


class Problems:
    """Problems found so far: the first ``MAX_PROBLEMS`` kept, the rest counted."""

    def __init__(self) -> None:
        self.items: list[Problem] = []
        self.more = 0

    def add(self, problem: Problem) -> None:
        """Keep ``problem``, or count it once the list is full."""
        if len(self.items) < MAX_PROBLEMS:
            self.items.append(problem)
        else:
            self.more += 1

    def __bool__(self) -> bool:
        return bool(self.items)

    def check(self) -> None:
        """Raise every problem kept (and the count of the others) as one ``DataError``."""
        if self.items:
            raise DataError(self.items, self.more)


def suggest(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest of ``choices``, or the header itself."""
    names = list(choices)
    close = difflib.get_close_matches(word, names, n=1, cutoff=0.6)
    if close:
        return f" (did you mean {close[0]!r}?)"
    return f" (the columns are {', '.join(repr(n) for n in names[:30])})"
