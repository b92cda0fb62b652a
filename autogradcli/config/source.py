"""YAML loading that remembers where every key and item came from (file, line, column).

PyYAML's composer gives a node tree with marks; we build the plain Python data from it and keep
a map from key paths (``("model", 0, "type")``) to positions, so every validation error can say
``config.yaml:12:5  model[0].type: ...``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import yaml

from .errors import ConfigError, ConfigIssue, Path


@dataclass
class SourceMap:
    """Positions of the keys of one config, plus the overrides applied on top."""

    file: str
    positions: dict[Path, tuple[int, int]] = field(default_factory=dict)
    overrides: dict[Path, int] = field(default_factory=dict)  # path -> index of its --set

    def where(self, path: Path) -> str:
        """``file:line:col`` of ``path`` (or of its nearest located ancestor)."""
        for n in range(len(path), -1, -1):
            prefix = tuple(path[:n])
            if prefix in self.overrides:
                return f"--set #{self.overrides[prefix] + 1}"
            if prefix in self.positions:
                line, col = self.positions[prefix]
                return f"{self.file}:{line}:{col}"
        return f"{self.file}:1:1"

    def issue(self, path: Path, message: str) -> ConfigIssue:
        return ConfigIssue(self.where(path), tuple(path), message)

    def base_dir_for(self, path: Path, config_dir: str) -> str:
        """The directory a relative file path found at ``path`` is relative to: the working
        directory for a value given with ``--set``, else ``config_dir`` (the config's own)."""
        return os.getcwd() if self.where(path).startswith("--set") else config_dir


class _Builder:
    def __init__(self, source: SourceMap) -> None:
        self.source = source
        self.constructor = yaml.SafeLoader("")
        self.issues: list[ConfigIssue] = []

    def build(self, node: yaml.Node, path: Path) -> Any:
        self.source.positions[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
        if isinstance(node, yaml.MappingNode):
            out: dict[Any, Any] = {}
            for key_node, value_node in node.value:
                key = self.constructor.construct_object(key_node, deep=True)
                if not isinstance(key, (str, int)):
                    key = str(key)
                child = path + (key,)
                if key in out:
                    line = key_node.start_mark.line + 1
                    col = key_node.start_mark.column + 1
                    self.issues.append(
                        ConfigIssue(f"{self.source.file}:{line}:{col}", child, "duplicate key")
                    )
                out[key] = self.build(value_node, child)
                # a key's own position is more useful than its value's
                self.source.positions[child] = (
                    key_node.start_mark.line + 1,
                    key_node.start_mark.column + 1,
                )
            return out
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, path + (i,)) for i, item in enumerate(node.value)]
        return self.constructor.construct_object(node, deep=True)


def load_yaml_text(text: str, file: str) -> tuple[Any, SourceMap]:
    """Parse YAML ``text`` into plain data and its SourceMap; syntax errors become ConfigError."""
    source = SourceMap(file)
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f"{file}:{mark.line + 1}:{mark.column + 1}" if mark else f"{file}:1:1"
        raise ConfigError([ConfigIssue(where, (), f"invalid YAML: {err.problem or err}")]) from None
    if node is None:
        return {}, source
    builder = _Builder(source)
    data = builder.build(node, ())
    if builder.issues:
        raise ConfigError(builder.issues)
    return data, source


def read_config_text(path: str) -> str:
    """The text of the config file at ``path``; a ConfigError saying why it cannot be read."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as err:
        raise ConfigError(
            [ConfigIssue(path, (), f"cannot read the config: {err.strerror or err}")]
        ) from None


def load_yaml(path: str) -> tuple[Any, SourceMap]:
    """Read and parse the YAML file at ``path``."""
    return load_yaml_text(read_config_text(path), path)
