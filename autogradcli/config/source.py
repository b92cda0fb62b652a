"""YAML loading that remembers where every key and item came from (file, line, column).

PyYAML's composer gives a node tree with marks; we build the plain Python data from it and keep
a map from key paths (``("model", 0, "type")``) to positions, so every validation error can say
``config.yaml:12:5  model[0].type: ...``.

A config is a small file written by a person, so the loader refuses, at the place they start,
what no config needs and what would make it use unbounded time or memory: bytes that are not
UTF-8 text, NUL bytes, nesting deeper than ``MAX_DEPTH``, aliases that expand past
``MAX_VALUES`` values ("billion laughs"), recursive aliases and tags other than YAML's own.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from .errors import ConfigError, ConfigIssue, Path

MAX_BYTES = 4 * 1024 * 1024  # a config larger than this is not a config
MAX_DEPTH = 64  # nested mappings/sequences
MAX_VALUES = 100_000  # keys, values and items after aliases are expanded

_YAML = "tag:yaml.org,2002:"
_TAGS = {_YAML + t for t in ("str", "int", "float", "bool", "null", "map", "seq", "timestamp")}
# YAML 1.1 (PyYAML) reads ``1e-3`` as a string: its floats need a dot. YAML 1.2 and every person
# read it as a number, so a plain (unquoted) scalar of that form is taken as the float meant.
_EXP_FLOAT = re.compile(r"[-+]?(?:\d[\d_]*(?:\.\d*)?|\.\d+)[eE][-+]?\d+")


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


def _at(file: str, mark: Any) -> str:
    return f"{file}:{mark.line + 1}:{mark.column + 1}" if mark is not None else f"{file}:1:1"


def _refuse(file: str, mark: Any, message: str, path: Path = ()) -> ConfigError:
    return ConfigError([ConfigIssue(_at(file, mark), path, message)])


class _Builder:
    """Plain data from a composed node graph, counting values and refusing cycles and tags."""

    def __init__(self, source: SourceMap) -> None:
        self.source = source
        self.constructor = yaml.SafeLoader("")
        self.issues: list[ConfigIssue] = []
        self.values = 0
        self.open: set[int] = set()  # ids of the collections being built (a cycle's witness)

    def build(self, node: yaml.Node, path: Path) -> Any:
        self._count(node)
        self._check_tag(node, path)
        self.source.positions[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
        if isinstance(node, yaml.ScalarNode):
            return self._scalar(node, path)
        if id(node) in self.open:
            raise _refuse(
                self.source.file,
                node.start_mark,
                "recursive alias: this value contains itself",
                path,
            )
        self.open.add(id(node))
        try:
            if isinstance(node, yaml.MappingNode):
                return self._mapping(node, path)
            return [self.build(item, path + (i,)) for i, item in enumerate(node.value)]
        finally:
            self.open.discard(id(node))

    def _count(self, node: yaml.Node) -> None:
        """Count one more value, refusing alias bombs."""
        self.values += 1
        if self.values > MAX_VALUES:
            raise _refuse(
                self.source.file,
                node.start_mark,
                f"the config expands to more than {MAX_VALUES:,} values through its aliases "
                "(*name); write the values out or use fewer aliases",
            )

    def _check_tag(self, node: yaml.Node, path: Path) -> None:
        """Refuse tags other than YAML's own (``!!python/object``, ``!custom``)."""
        if node.tag not in _TAGS:
            tag = node.tag.replace(_YAML, "!!")
            raise _refuse(
                self.source.file,
                node.start_mark,
                f"unknown YAML tag {tag!r}: configs take plain values, lists and mappings",
                path,
            )

    def _scalar(self, node: yaml.ScalarNode, path: Path) -> Any:
        """A scalar's value (``1e-3`` as a number)."""
        try:
            value = self.constructor.construct_object(node, deep=True)
        except (ValueError, OverflowError) as err:  # a date like 2024-13-45, a 5000-digit int
            raise _refuse(
                self.source.file, node.start_mark, f"cannot read {node.value[:40]!r}: {err}", path
            ) from None
        if isinstance(value, str) and node.style is None and _EXP_FLOAT.fullmatch(value):
            return float(value.replace("_", ""))
        return value

    def _mapping(self, node: yaml.MappingNode, path: Path) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise _refuse(
                    self.source.file,
                    key_node.start_mark,
                    "a key must be a plain value, not a list or mapping",
                    path,
                )
            self._count(key_node)
            self._check_tag(key_node, path)
            key = self._scalar(key_node, path)
            if not isinstance(key, (str, int)):
                key = str(key)
            child = path + (key,)
            if key in out:
                where = _at(self.source.file, key_node.start_mark)
                self.issues.append(ConfigIssue(where, child, "duplicate key"))
            out[key] = self.build(value_node, child)
            # a key's own position is more useful than its value's
            self.source.positions[child] = (
                key_node.start_mark.line + 1,
                key_node.start_mark.column + 1,
            )
        return out


def _check_depth(text: str, file: str) -> None:
    """Refuse nesting deeper than MAX_DEPTH before the (recursive) composer sees it."""
    depth = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise _refuse(
                    file,
                    event.start_mark,
                    f"the config nests lists/mappings more than {MAX_DEPTH} deep",
                )
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _yaml_error(err: yaml.YAMLError, text: str, file: str) -> ConfigError:
    if isinstance(err, yaml.reader.ReaderError):
        # a control character (YAML allows none but tab, CR and LF); locate it in the text
        pos = err.position
        line = text.count("\n", 0, pos) + 1
        col = pos - (text.rfind("\n", 0, pos) + 1) + 1
        char = f"U+{err.character:04X}" if isinstance(err.character, int) else repr(err.character)
        return ConfigError(
            [ConfigIssue(f"{file}:{line}:{col}", (), f"invalid YAML: control character {char}")]
        )
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    problem = getattr(err, "problem", None) or str(err)
    return _refuse(file, mark, f"invalid YAML: {problem}")


def load_yaml_text(text: str, file: str) -> tuple[Any, SourceMap]:
    """Parse YAML ``text`` into plain data and its SourceMap; every problem (syntax, depth,
    alias expansion, tags) becomes a located ConfigError."""
    source = SourceMap(file)
    try:
        _check_depth(text, file)
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        if node is None:
            return {}, source
        builder = _Builder(source)
        data = builder.build(node, ())
    except yaml.YAMLError as err:
        raise _yaml_error(err, text, file) from None
    if builder.issues:
        raise ConfigError(builder.issues)
    return data, source


def parse_scalar_text(text: str, where: str) -> Any:
    """A ``--set`` value parsed as the config file would parse it (``1e-3`` is a number); text
    that is not valid YAML stays the string it is."""
    if not text.strip():
        return ""
    try:
        data, _ = load_yaml_text(text, where)
    except ConfigError:
        return text
    return data


def decode_config_bytes(raw: bytes, path: str) -> str:
    """The text of a config file's bytes: UTF-8 (a BOM allowed), no NUL bytes; a located
    ConfigError otherwise."""

    def located(pos: int, message: str) -> ConfigError:
        line = raw.count(b"\n", 0, pos) + 1
        col = pos - (raw.rfind(b"\n", 0, pos) + 1) + 1
        return ConfigError([ConfigIssue(f"{path}:{line}:{col}", (), message)])

    nul = raw.find(b"\x00")
    if nul >= 0:
        raise located(nul, "the config contains a NUL byte: it is a binary file, not YAML text")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        byte = raw[err.start]
        raise located(
            err.start,
            f"the config is not UTF-8 text (byte 0x{byte:02x}); save it as UTF-8",
        ) from None


def read_config_text(path: str) -> str:
    """The text of the config file at ``path``; a ConfigError saying why it cannot be read."""
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_BYTES + 1)
    except OSError as err:
        raise ConfigError(
            [ConfigIssue(path, (), f"cannot read the config: {err.strerror or err}")]
        ) from None
    if len(raw) > MAX_BYTES:
        raise ConfigError(
            [ConfigIssue(path, (), f"the config is larger than {MAX_BYTES // 2**20} MiB")]
        )
    return decode_config_bytes(raw, path)


def load_yaml(path: str) -> tuple[Any, SourceMap]:
    """Read and parse the YAML file at ``path``."""
    return load_yaml_text(read_config_text(path), path)
