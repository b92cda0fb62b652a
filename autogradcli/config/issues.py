"""``IssueCollector``: the shared core of validating and building a config.

Both passes walk the config, note every problem against its key path (so each one reads
``file:line:col  key.path: message``) instead of stopping at the first, and resolve the user's
import paths relative to the config file (or to the working directory for ``--set`` values).
"""

from __future__ import annotations

from typing import Any

from .errors import ConfigIssue, Path
from .imports import ImportPathError, resolve_import
from .source import SourceMap


class IssueCollector:
    """Collects ``ConfigIssue``s located by ``source``; ``config_dir`` is the config's directory."""

    def __init__(self, source: SourceMap, config_dir: str) -> None:
        self.source = source
        self.base_dir = config_dir
        self.issues: list[ConfigIssue] = []

    def error(self, path: Path, message: str) -> None:
        """Note a problem with the value at ``path``."""
        self.issues.append(self.source.issue(path, message))

    def base_for(self, path: Path) -> str:
        """The directory a relative file path at ``path`` is relative to."""
        return self.source.base_dir_for(path, self.base_dir)

    def resolve(self, text: str, path: Path) -> Any:
        """The object at import path ``text``, or None after reporting why there is none."""
        try:
            return resolve_import(text, self.base_for(path))
        except ImportPathError as err:
            self.error(path, str(err))
            return None
