"""A sweep's whole description: the trial config, the merged ``sweep`` settings (config, then
``--space`` file, then ``--param``), the parameters, and the hash that ties a study to it."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from typing import Any

from ..config import Config, ConfigError, ConfigIssue, load_config_text, load_yaml_text
from ..config.validate_data import has_validation
from ..config.validate_sweep import validate_sweep
from ..config.validator import Validator
from ..trainer.metrics import resolve_mode
from .space import Param, check_params, cli_params, grid_points

__all__ = ["SweepSpec", "load_spec"]


@dataclass
class SweepSpec:
    """What a sweep searches: ``config`` (loaded with ``overrides``), ``settings`` (the
    resolved sweep section), ``params``, and for ``sampler: grid`` its ``grid`` points."""

    config: Config
    overrides: list[str]
    settings: dict[str, Any]
    params: list[Param]
    grid: list[dict[str, Any]]

    @property
    def metric(self) -> str:
        return self.settings["metric"]

    @property
    def direction(self) -> str:
        """``maximize`` or ``minimize``: the mode, ``auto`` from the metric as hooks do."""
        return (
            "maximize" if resolve_mode(self.metric, self.settings["mode"]) == "max" else "minimize"
        )

    @property
    def trials(self) -> int:
        """How many trials the sweep runs (for a grid: its points, at most ``trials``)."""
        n = self.settings["trials"]
        return min(n, len(self.grid)) if self.settings["sampler"] == "grid" else n

    def trial_config(self, values: dict[str, Any]) -> Config:
        """The config of one trial (``--set`` of each value), validated as ``agrad train``
        validates, without the ``sweep`` section."""
        from .space import override

        sets = [*self.overrides, *(override(k, v) for k, v in values.items())]
        config = load_config_text(self.config.text, self.config.path, sets)
        config.data.pop("sweep", None)
        return config

    def hash(self) -> str:
        """What a study must have been made by: the trial config and the search (not the
        number of trials, which a resume may raise)."""
        settings = {k: v for k, v in self.settings.items() if k != "trials"}
        settings["params"] = {p.path: p.space for p in self.params}
        data = {k: v for k, v in self.config.data.items() if k != "sweep"}
        text = json.dumps({"config": data, "sweep": settings}, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def _space_file(
    text: str, path: str, has_val: bool, metrics: list[str] | None
) -> tuple[dict[str, Any], list[Param], list]:
    """The settings written in a ``--space`` file (a sweep section, or ``sweep:`` holding one)
    and its parameters, located in that file."""
    data, source = load_yaml_text(text, path)
    prefix: tuple = ()
    if isinstance(data, dict) and list(data) == ["sweep"]:
        data, prefix = data["sweep"], ("sweep",)
    v = Validator(source, os.path.dirname(os.path.abspath(path)), "space")
    resolved = validate_sweep(v, data, prefix, has_val, metrics) or {}
    written = {k: resolved[k] for k in data if k in resolved and k != "params"}
    params = [
        Param(key, space, source.where(prefix + ("params", key)))
        for key, space in resolved.get("params", {}).items()
        if space is not None
    ]
    return written, params, v.issues


def load_spec(
    text: str,
    path: str,
    overrides: list[str],
    params: list[str],
    space: tuple[str, str] | None = None,
) -> SweepSpec:
    """The sweep of the config ``text`` (read from ``path``) with ``--set`` ``overrides``,
    ``--param`` texts ``params`` and a ``--space`` file's (text, path); one ConfigError
    listing every problem, paths checked against the config, before anything runs."""
    config = load_config_text(text, path, overrides)
    has_val = has_validation(config.data.get("data"))
    section = config.data.get("sweep")
    if section is None:
        v = Validator(config.source, config.base_dir, "sweep")
        section = validate_sweep(v, {}, ("sweep",), has_val) or {}
    settings = dict(section)
    merged = {
        key: Param(key, sp, config.where(("sweep", "params", key)))
        for key, sp in section.get("params", {}).items()
        if sp is not None
    }
    issues: list[ConfigIssue] = []
    if space is not None:
        written, file_params, issues = _space_file(
            space[0], space[1], has_val, config.data.get("metrics")
        )
        settings.update(written)
        merged.update({p.path: p for p in file_params})
    extra, cli_issues = cli_params(params)
    issues += cli_issues
    merged.update({p.path: p for p in extra})
    found = list(merged.values())
    issues += check_params(config, overrides, found)
    if not found and not issues:
        issues.append(
            ConfigIssue(
                config.where(("sweep",)) if "sweep" in config.data else path,
                (),
                "nothing to search: give sweep.params in the config, a --space file or --param",
            )
        )
    grid: list[dict[str, Any]] = []
    if settings.get("sampler") == "grid" and not issues:
        grid, grid_issues = grid_points(found)
        issues += grid_issues
    if issues:
        raise ConfigError(issues)
    settings["params"] = {p.path: p.space for p in found}
    return SweepSpec(config, list(overrides), settings, found, grid)
