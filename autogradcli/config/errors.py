"""Configuration errors that point at the file, line and key at fault."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass

Path = tuple[str | int, ...]


def format_path(path: Path) -> str:
    """``("model", 2, "type")`` -> ``model.2.type``: the same dotted syntax ``--set`` takes."""
    return ".".join(str(part) for part in path) or "<root>"


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'Linear'?)`` for a near miss, else an empty string."""
    matches = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    if not matches:
        lowered = {c.lower(): c for c in choices}
        if word.lower() in lowered:
            matches = [lowered[word.lower()]]
    return f" (did you mean '{matches[0]}'?)" if matches else ""


@dataclass(frozen=True)
class ConfigIssue:
    """One problem in a config: where it is and what is wrong."""

    where: str  # "file:line:col", or "--set #2" for an override
    path: Path
    message: str

    def __str__(self) -> str:
        if not self.path:
            return f"{self.where}  {self.message}"
        return f"{self.where}  {format_path(self.path)}: {self.message}"


class ConfigError(Exception):
    """Every problem found in a config, reported together (the CLI exits with code 2)."""

    def __init__(self, issues: list[ConfigIssue]) -> None:
        self.issues = issues
        super().__init__("\n".join(str(i) for i in issues))
