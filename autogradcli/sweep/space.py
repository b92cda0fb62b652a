"""The search space of a sweep: its parameters from the config's ``sweep.params``, a space file
(``--space``) and ``--param`` options, each checked against the config before any trial runs."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..config import Config, ConfigError, ConfigIssue, load_config_text
from ..config.errors import did_you_mean
from ..config.issues import IssueCollector
from ..config.source import SourceMap, parse_scalar_text
from ..config.validate_sweep import PARAM_KINDS, validate_param

__all__ = ["Param", "check_params", "cli_params", "grid_points", "override", "suggest"]


@dataclass
class Param:
    """One searched setting: its ``--set`` path, resolved space and where it was written."""

    path: str
    space: dict[str, Any]
    where: str

    @property
    def log(self) -> bool:
        return bool(self.space.get("log"))

    def probes(self) -> list[Any]:
        """The values checked before the sweep starts: the range's ends, or every choice."""
        if self.space["type"] == "choice":
            return list(self.space["values"])
        return [self.space["low"], self.space["high"]]


class _Fixed(SourceMap):
    """A SourceMap whose every path is one place (``--param #2``)."""

    def where(self, path: Any) -> str:
        return self.file


def cli_params(texts: list[str]) -> tuple[list[Param], list[ConfigIssue]]:
    """``--param path=kind:a,b[,step=S][,log]`` options (``choice:32,64``) as Params."""
    params, issues = [], []
    for i, text in enumerate(texts):
        where = f"--param #{i + 1}"
        key, sep, rest = text.partition("=")
        kind, colon, args = rest.partition(":")
        key, kind = key.strip(), kind.strip()
        if not sep or not key or not colon or kind not in PARAM_KINDS:
            hint = did_you_mean(kind, PARAM_KINDS) if kind else ""
            issues.append(
                ConfigIssue(
                    where,
                    (),
                    f"expected key.path=KIND:VALUES with KIND one of {', '.join(PARAM_KINDS)} "
                    f"(optimizer.lr=loguniform:1e-4,1e-1), got {text!r}{hint}",
                )
            )
            continue
        parts = [p.strip() for p in args.split(",")] if args.strip() else []
        space: dict[str, Any] = {}
        if kind == "choice":
            space["choice"] = [parse_scalar_text(p, where) for p in parts]
        else:
            space[kind] = [parse_scalar_text(p, where) for p in parts[:2]]
            for extra in parts[2:]:
                name, _, value = extra.partition("=")
                space[name] = (
                    True if name == "log" and not value else parse_scalar_text(value, where)
                )
        collector = IssueCollector(_Fixed(where), ".")
        resolved = validate_param(collector, space, (key,))
        issues += collector.issues
        if resolved is not None:
            params.append(Param(key, resolved, where))
    return params, issues


def _walk(data: Any, parts: list[str]) -> str | None:
    """Why the dotted path ``parts`` names no setting of ``data`` (None: it does, or names a
    new key of an existing mapping, which validating the trial config then judges)."""
    node = data
    for depth, part in enumerate(parts):
        last = depth == len(parts) - 1
        where = ".".join(parts[:depth]) or "the config"
        if isinstance(node, dict):
            key: Any = part
            if part not in node and part.lstrip("-").isdigit() and int(part) in node:
                key = int(part)
            if key not in node:
                if last and depth > 0:
                    return None
                hint = did_you_mean(part, [str(k) for k in node])
                return f"{where} has no key {part!r}{hint}"
            node = node[key]
        elif isinstance(node, list):
            if not part.lstrip("-").isdigit() or not -len(node) <= int(part) < len(node):
                return f"{where} is a list of {len(node)} items: {part!r} is not an index of it"
            node = node[int(part)]
        else:
            return f"{where} is {json.dumps(node)}, it has no key {part!r}"
    return None


def override(path: str, value: Any) -> str:
    """The ``--set`` text that puts ``value`` at ``path`` (JSON is YAML)."""
    return f"{path}={json.dumps(value)}"


def check_params(config: Config, overrides: list[str], params: list[Param]) -> list[ConfigIssue]:
    """Every problem of ``params`` against ``config`` (loaded with ``overrides``): a path that
    names no setting, and any value of the space (the range's ends, every choice) that makes
    the config invalid, each at the parameter's own line."""
    issues = []
    data = {k: v for k, v in config.data.items() if k != "sweep"}
    for p in params:
        label = ("sweep", "params", p.path)
        problem = _walk(data, p.path.split("."))
        if problem is not None:
            issues.append(ConfigIssue(p.where, label, problem))
            continue
        for value in p.probes():
            try:
                load_config_text(config.text, config.path, [*overrides, override(p.path, value)])
            except ConfigError as err:
                for issue in err.issues:
                    issues.append(
                        ConfigIssue(p.where, label, f"with {p.path}={value!r}: {issue.message}")
                    )
                break
    return issues


def suggest(trial: Any, p: Param) -> Any:
    """The trial's value of ``p`` (Optuna's ``suggest_*``; non-scalar choices by their JSON)."""
    s = p.space
    if s["type"] == "choice":
        values = s["values"]
        if all(v is None or isinstance(v, (bool, int, float, str)) for v in values):
            return trial.suggest_categorical(p.path, values)
        return json.loads(trial.suggest_categorical(p.path, [json.dumps(v) for v in values]))
    if s["type"] == "int":
        return trial.suggest_int(p.path, s["low"], s["high"], step=s["step"] or 1, log=s["log"])
    return trial.suggest_float(p.path, s["low"], s["high"], step=s["step"], log=s["log"])


def grid_points(params: list[Param]) -> tuple[list[dict[str, Any]], list[ConfigIssue]]:
    """Every combination of the parameters' values, for ``sampler: grid`` (a float range
    needs a ``step``)."""
    axes, issues = [], []
    for p in params:
        s = p.space
        if s["type"] == "choice":
            values = (
                s["values"]
                if all(not isinstance(v, (list, dict)) for v in s["values"])
                else [json.dumps(v) for v in s["values"]]
            )
        elif s["step"] is not None:
            n = int((s["high"] - s["low"]) / s["step"] + 1e-9)
            values = [s["low"] + k * s["step"] for k in range(n + 1)]
            if s["type"] == "float":
                values = [round(v, 12) for v in values]
        elif s["type"] == "int" and not s["log"]:
            values = list(range(s["low"], s["high"] + 1))
        else:
            issues.append(
                ConfigIssue(
                    p.where,
                    ("sweep", "params", p.path),
                    "sampler grid needs a choice, an int range or a step for every parameter",
                )
            )
            continue
        axes.append((p.path, values))
    points: list[dict[str, Any]] = [{}]
    for path, values in axes:
        points = [{**point, path: v} for point in points for v in values]
    return (points if not issues else []), issues
