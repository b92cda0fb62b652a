"""``agrad runs --diff RUN_A RUN_B``: the settings where two runs' resolved configs differ, and
the change of each metric of their best epochs (B - A), with status, epochs and time."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from .errors import EXIT_OK, UserError

__all__ = ["diff_runs", "run_diff"]

_MISSING = "(not set)"


def _folder(runs_dir: str, run: str) -> str:
    """``run`` as a run folder: a path, or a folder (``sweep/trial-003``) under ``runs_dir``."""
    for path in (run, os.path.join(runs_dir, run)):
        if os.path.isfile(os.path.join(path, "config.resolved.yaml")):
            return path
    raise UserError(
        f"--diff {run}: not a run folder (no config.resolved.yaml there or in {runs_dir})"
    )


def diff_runs(runs_dir: str, a: str, b: str) -> dict[str, Any]:
    """``{"a", "b", "config": [{key, a, b}], "metrics": {name: {a, b, delta}}, "runs": ...}``."""
    from .runs_cmd import _run_row
    from .runs_table import add_details

    rows = []
    for run in (a, b):
        folder = _folder(runs_dir, run)
        row = _run_row(folder) or {"folder": folder, "status": "broken"}
        row["folder"] = os.path.abspath(folder)
        rows.append(row)
    add_details("", rows)
    ca, cb = rows[0]["config"], rows[1]["config"]
    config = [
        {"key": k, "a": ca.get(k, _MISSING), "b": cb.get(k, _MISSING)}
        for k in dict.fromkeys([*ca, *cb])
        if k not in ("output.dir",) and ca.get(k, _MISSING) != cb.get(k, _MISSING)
    ]
    ma, mb = rows[0]["metrics"], rows[1]["metrics"]
    metrics = {}
    for k in dict.fromkeys([*ma, *mb]):
        va, vb = ma.get(k), mb.get(k)
        num = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (va, vb))
        metrics[k] = {"a": va, "b": vb, "delta": (vb - va) if num else None}
    keep = ("status", "epochs_completed", "epochs", "best_monitor", "best_epoch", "wall_time_s")
    runs = [{"folder": r["folder"], **{k: r.get(k) for k in keep}} for r in rows]
    return {"a": a, "b": b, "config": config, "metrics": metrics, "runs": runs}


def _show(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    return json.dumps(v) if isinstance(v, (list, dict)) or v is None else str(v)


def run_diff(runs_dir: str, a: str, b: str, as_json: bool) -> int:
    d = diff_runs(runs_dir, a, b)
    if as_json:
        sys.stdout.write(json.dumps(d, indent=2) + "\n")
        return EXIT_OK
    ra, rb = d["runs"]
    lines = [f"A: {ra['folder']} ({ra['status']}, {ra['epochs_completed']}/{ra['epochs']} epochs)"]
    lines.append(
        f"B: {rb['folder']} ({rb['status']}, {rb['epochs_completed']}/{rb['epochs']} epochs)"
    )
    lines.append(f"settings that differ ({len(d['config'])}):" if d["config"] else "same settings")
    lines += [f"  {c['key']}: {_show(c['a'])} -> {_show(c['b'])}" for c in d["config"]]
    if d["metrics"]:
        lines.append(f"metrics at the best epoch (A -> B, B - A; best by {ra['best_monitor']}):")
    for k, m in d["metrics"].items():
        delta = f" ({m['delta']:+.4g})" if m["delta"] is not None else ""
        lines.append(f"  {k}: {_show(m['a'])} -> {_show(m['b'])}{delta}")
    wa, wb = ra.get("wall_time_s"), rb.get("wall_time_s")
    if isinstance(wa, (int, float)) and isinstance(wb, (int, float)):
        lines.append(f"wall time: {wa:.1f}s -> {wb:.1f}s ({wb - wa:+.1f}s)")
    sys.stdout.write("\n".join(lines) + "\n")
    return EXIT_OK
