"""The end of a sweep: its trials sorted by the metric, ``best.yaml`` (the best trial's
complete resolved config, which ``agrad train best.yaml`` reproduces) and a plot per parameter."""

from __future__ import annotations

import math
import os
import re
from typing import Any

from .._utils.atomic import atomic_write_text
from .plot import param_svg
from .runner import trial_folder
from .spec import SweepSpec
from .study import trial_state

__all__ = ["BEST_YAML", "trial_rows", "write_best", "write_plots"]

BEST_YAML = "best.yaml"
_ORDER = {"completed": 0, "pruned": 1, "failed": 2, "interrupted": 3, "running": 4, "waiting": 5}


def trial_rows(study: Any, spec: SweepSpec) -> list[dict[str, Any]]:
    """One row per trial: number, state, value (a pruned trial's last reported one), params,
    run folder, message; completed best first, then pruned, failed, interrupted, running."""
    rows = []
    for t in study.get_trials(deepcopy=False):
        state = trial_state(t)
        value = t.value if state == "completed" else None
        if state == "pruned" and t.intermediate_values:
            value = t.intermediate_values[max(t.intermediate_values)]
        rows.append(
            {
                "number": t.number,
                "state": state,
                "value": value,
                "params": dict(t.params),
                "run": t.user_attrs.get("run") or trial_folder(t.number),
                "message": t.user_attrs.get("message", ""),
            }
        )
    sign = -1.0 if spec.direction == "maximize" else 1.0

    def key(r: dict[str, Any]) -> tuple:
        v = r["value"]
        good = isinstance(v, (int, float)) and math.isfinite(v)
        return (_ORDER.get(r["state"], 9), 0 if good else 1, sign * v if good else 0.0, r["number"])

    return sorted(rows, key=key)


def write_best(sweep_dir: str, rows: list[dict[str, Any]], spec: SweepSpec) -> str | None:
    """``best.yaml`` from the best completed trial's ``config.resolved.yaml``; its path, or
    None when no trial completed."""
    best = next((r for r in rows if r["state"] == "completed"), None)
    if best is None:
        return None
    with open(os.path.join(sweep_dir, best["run"], "config.resolved.yaml"), encoding="utf-8") as f:
        text = f.read()
    head = (
        f"# the best trial of sweep {os.path.basename(sweep_dir)}: trial {best['number']} "
        f"({best['run']}), {spec.metric} {best['value']:.6g}\n"
        f"# reproduce it with: agrad train {BEST_YAML}\n"
    )
    path = os.path.join(sweep_dir, BEST_YAML)
    atomic_write_text(path, head + text)
    return path


def write_plots(sweep_dir: str, rows: list[dict[str, Any]], spec: SweepSpec) -> list[str]:
    """``plot-<param>.svg``: the metric of completed and pruned trials against each parameter."""
    paths = []
    for p in spec.params:
        points = [
            (r["params"][p.path], float(r["value"]), r["state"])
            for r in rows
            if p.path in r["params"]
            and isinstance(r["value"], (int, float))
            and math.isfinite(r["value"])
        ]
        path = os.path.join(sweep_dir, f"plot-{re.sub(r'[^A-Za-z0-9._-]+', '_', p.path)}.svg")
        atomic_write_text(path, param_svg(points, p.path, p.space, spec.metric))
        paths.append(path)
    return paths
