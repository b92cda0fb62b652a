"""``load_config``: read a YAML config, apply ``--set`` overrides, validate, fill defaults."""

from __future__ import annotations

import copy
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from .errors import ConfigError, ConfigIssue, Path, format_path
from .imports import is_import_path, resolve_import
from .schema import path_settings_of
from .source import SourceMap, load_yaml_text, parse_scalar_text, read_config_text
from .validator import Validator


@dataclass
class Config:
    """A validated config.

    ``data`` is the resolved config (plain YAML data, every default filled in); ``source`` maps
    key paths to ``file:line:col`` (or ``--set #N``); ``path`` is the config file; ``text`` its
    original YAML text.
    """

    data: dict[str, Any]
    source: SourceMap
    path: str
    text: str

    @property
    def base_dir(self) -> str:
        """The directory relative file paths in the config are resolved against."""
        return os.path.dirname(os.path.abspath(self.path))

    def where(self, path: Path) -> str:
        return self.source.where(path)

    def file_path(self, key_path: Path, value: str) -> str:
        """``value`` (a file path found at ``key_path``) made absolute: relative to the config's
        directory, or to the working directory when it came from ``--set``."""
        value = os.path.expanduser(value)
        if os.path.isabs(value):
            return value
        base = self.source.base_dir_for(key_path, self.base_dir)
        return os.path.normpath(os.path.join(base, value))

    def output_dir(self) -> str:
        """``output.dir`` made absolute by the config paths rule: written in the config file,
        relative to the config file's folder (as data paths are); given with ``--set`` or left
        at its default (``runs``), relative to the working directory."""
        key = ("output", "dir")
        value = os.path.expanduser(str((self.data.get("output") or {}).get("dir", "runs")))
        if os.path.isabs(value):
            return value
        written = key in self.source.positions and not self.source.where(key).startswith("--set")
        base = self.base_dir if written else os.getcwd()
        return os.path.normpath(os.path.join(base, value))

    def to_yaml(self, absolute_paths: bool = False) -> str:
        """The resolved config as YAML (``--print-config``, ``config.resolved.yaml``).

        With ``absolute_paths=True``, data files, ``output.dir`` and ``file.py:Name`` import paths
        are written as absolute paths, so the YAML works from any directory.
        """
        data = copy.deepcopy(self.data)
        if absolute_paths:
            _absolutize(self, data, ())
            if isinstance(data.get("output"), dict) and "dir" in data["output"]:
                data["output"]["dir"] = self.output_dir()
        return yaml.safe_dump(data, sort_keys=False, default_flow_style=None, width=100)


def _absolutize(config: Config, node: Any, path: Path) -> None:
    items = (
        node.items()
        if isinstance(node, dict)
        else enumerate(node)
        if isinstance(node, list)
        else ()
    )
    paths = _data_paths(config, node, path)
    for key, value in list(items):
        child = path + (key,)
        if isinstance(value, (dict, list)):
            _absolutize(config, value, child)
        elif isinstance(value, str):
            if is_import_path(value):
                where, _, name = value.rpartition(":")
                if where.endswith(".py") or "/" in where:
                    node[key] = f"{config.file_path(child, where)}:{name}"
            elif key in paths:
                node[key] = config.file_path(child, value)


def _data_paths(config: Config, node: Any, path: Path) -> tuple[str, ...]:
    """The settings of the data section ``node`` (``data``, ``data.val``, ``data.test``) that
    name files: its kind's, or its dataset function's path arguments; () for another node."""
    if path == ("init_from",) and isinstance(node, dict):
        return ("path",)
    if not isinstance(node, dict) or not path or path[-1] not in ("data", "val", "test"):
        return ()
    name = node.get("dataset")
    fn = None
    if isinstance(name, str) and is_import_path(name):
        try:
            fn = resolve_import(
                name, config.source.base_dir_for(path + ("dataset",), config.base_dir)
            )
        except Exception:  # reported by validation
            return ()
    return path_settings_of(name, fn)


# ----------------------------------------------------------------------------- overrides
def apply_override(data: Any, source: SourceMap, index: int, text: str) -> list[ConfigIssue]:
    """Apply ``--set key.path=value`` number ``index`` (0-based) to ``data`` in place."""
    where = f"--set #{index + 1}"
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key:
        return [ConfigIssue(where, (), f"expected key.path=value, got {text!r}")]
    parts = key.split(".")
    if any(p == "" for p in parts):
        return [ConfigIssue(where, (), f"bad key path {key!r}")]
    value = parse_scalar_text(raw, where)
    node = data
    path: tuple[str | int, ...] = ()
    created: tuple[str | int, ...] = ()  # the first mapping this override creates
    for depth, part in enumerate(parts):
        last = depth == len(parts) - 1
        if isinstance(node, list):
            try:
                idx = int(part)
            except ValueError:
                return [
                    ConfigIssue(
                        where,
                        path + (part,),
                        f"{format_path(path)} is a list: use an index, not {part!r}",
                    )
                ]
            if not -len(node) <= idx <= len(node) or (idx == len(node) and not last):
                return [
                    ConfigIssue(
                        where,
                        path + (idx,),
                        f"index {idx} is out of range: {format_path(path)} has {len(node)} items",
                    )
                ]
            idx %= len(node) + (idx == len(node))
            path += (idx,)
            if last:
                if idx == len(node):
                    node.append(value)
                else:
                    node[idx] = value
            else:
                node = node[idx]
        elif isinstance(node, dict):
            k: str | int = part
            if part not in node and part.lstrip("-").isdigit() and int(part) in node:
                k = int(part)
            path += (k,)
            if last:
                node[k] = value
            elif k not in node or node[k] is None:
                node[k] = {}
                node = node[k]
                created = created or path
            else:
                node = node[k]
        else:
            what = f"a {type(node).__name__}" if node is not None else "null"
            return [
                ConfigIssue(
                    where, path + (part,), f"{format_path(path)} is {what}, it has no key {part!r}"
                )
            ]
    top = created or path
    for p in [p for p in source.positions if p[: len(top)] == top]:
        del source.positions[p]
    for p in [p for p in source.overrides if p[: len(top)] == top]:
        del source.overrides[p]
    source.overrides[top] = index
    return []


# ----------------------------------------------------------------------------- entry point
def _position(issue: ConfigIssue) -> tuple[int, ...]:
    """Sort key: --set issues first, then file order (the sort is stable)."""
    if issue.where.startswith("--set #"):
        return (0, int(issue.where[7:]))
    parts = issue.where.rsplit(":", 2)
    try:
        return (1, int(parts[1]), int(parts[2]))
    except (IndexError, ValueError):
        return (1, 0, 0)


def load_config_text(text: str, path: str = "<config>", overrides: Sequence[str] = ()) -> Config:
    """``load_config`` on YAML ``text`` (``path`` names it in messages and is the base directory
    for relative file paths)."""
    data, source = load_yaml_text(text, path)
    if data is None:
        data = {}
    issues: list[ConfigIssue] = []
    for i, item in enumerate(overrides):
        issues += apply_override(data, source, i, item)
    stem = os.path.splitext(os.path.basename(path))[0] or "run"
    validator = Validator(source, os.path.dirname(os.path.abspath(path)), stem)
    resolved = validator.validate(data)
    issues = sorted(issues + validator.issues, key=_position)
    if issues:
        raise ConfigError(issues)
    return Config(resolved, source, path, text)


def load_config(path: str, overrides: Sequence[str] = ()) -> Config:
    """Load, override, validate and complete the config at ``path``.

    ``overrides`` are ``key.path=value`` strings (``--set``): the value is parsed as YAML (a
    scalar or a flow collection such as ``[1, 2]`` / ``{type: Adam}``), list items are addressed
    by index (``model.1.out_features=32``), and a missing mapping key is created. Raises one
    ``ConfigError`` listing every problem found.
    """
    return load_config_text(read_config_text(path), path, overrides)
