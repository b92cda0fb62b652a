"""``agrad runs``: the runs in a runs folder as one table, newest first. A run whose summary
says ``running`` but whose process is gone (killed, power loss) is shown as ``dead``."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from .console import console
from .errors import EXIT_OK, UserError

__all__ = ["list_runs", "run_runs"]

COLUMNS = ("name", "status", "epochs", "best", "wall time", "started", "folder")


def _run_row(folder: str) -> dict[str, Any] | None:
    """One run's row from its ``summary.json``; a folder with a config or checkpoints but no
    readable summary is ``broken`` (with why); other folders are not runs (None)."""
    name = os.path.basename(folder.rstrip(os.sep))
    spath = os.path.join(folder, "summary.json")
    is_run = any(
        os.path.exists(os.path.join(folder, f))
        for f in ("summary.json", "config.yaml", "config.resolved.yaml", "checkpoints")
    )
    if not is_run:
        return None
    row: dict[str, Any] = {"folder": name, "name": name, "status": "broken"}
    try:
        row["mtime"] = os.path.getmtime(folder)
        with open(spath, encoding="utf-8") as f:
            summary = json.load(f)
        if not isinstance(summary, dict):
            raise ValueError("summary.json is not a JSON object")
    except (OSError, ValueError) as err:
        row["error"] = f"summary.json: {getattr(err, 'strerror', None) or err}"
        return row
    best = summary.get("best") if isinstance(summary.get("best"), dict) else {}
    row.update(
        name=summary.get("name") or name,
        status=summary.get("status") or "unknown",
        epochs_completed=summary.get("epochs_completed"),
        epochs=summary.get("epochs"),
        best_monitor=best.get("monitor"),
        best_value=best.get("value"),
        best_epoch=best.get("epoch"),
        wall_time_s=summary.get("wall_time_s"),
        started_at=summary.get("started_at"),
    )
    if isinstance(summary.get("test"), dict):
        row["test"] = {k: v for k, v in summary["test"].items() if k.startswith("test_")}
    if row["status"] in LIVE_STATUSES:
        reason = _why_dead(folder)
        if reason is not None and _status(spath) in LIVE_STATUSES:  # not ended meanwhile
            row.update(status="dead", reason=reason)
    return row


# a summary.json status that a live process must stand behind (its lock held)
LIVE_STATUSES = ("created", "running")


def _status(spath: str) -> Any:
    try:
        with open(spath, encoding="utf-8") as f:
            return json.load(f).get("status")
    except (OSError, ValueError, AttributeError):
        return None


def _why_dead(folder: str) -> str | None:
    """Why a run whose summary says running is not (its lock is missing, or the process named
    in it is gone or no longer holds it), or None while it runs. Reads only."""
    path = os.path.join(folder, ".lock")
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return "no lock"
    except OSError:
        return None  # cannot tell: take the summary's word
    try:
        text = os.read(fd, 32).decode(errors="replace").strip()
        pid = int(text) if text.isdigit() else None
        if pid is not None and not _pid_exists(pid):
            return f"process gone, pid {pid}"
        return None if _lock_held(fd) else f"process gone, pid {text or '?'}"
    finally:
        os.close(fd)


def _pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError, OverflowError):
        return True  # another user's process, or cannot tell
    return True


def _lock_held(fd: int) -> bool:
    """Whether a process holds the run's ``flock`` (a pid can be reused by another program)."""
    try:
        import fcntl
    except ImportError:  # not POSIX: the pid alone decides
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    fcntl.flock(fd, fcntl.LOCK_UN)
    return False


def is_sweep_folder(path: str) -> bool:
    """A sweep folder (``agrad sweep``): its ``sweep.json`` beside ``study.db``."""
    return os.path.isfile(os.path.join(path, "sweep.json")) and os.path.isfile(
        os.path.join(path, "study.db")
    )


def list_runs(runs_dir: str) -> list[dict[str, Any]]:
    """Every run folder's row, newest first (by ``started_at``, then the folder's time); a
    sweep folder's trials each get a row whose ``sweep`` is the sweep folder's name."""
    rows = []
    for entry in sorted(os.listdir(runs_dir)):
        path = os.path.join(runs_dir, entry)
        if os.path.isdir(path) and not entry.startswith("."):
            if is_sweep_folder(path):
                for trial in sorted(t for t in os.listdir(path) if not t.startswith(".")):
                    row = _run_row(os.path.join(path, trial))
                    if row is not None and os.path.isdir(os.path.join(path, trial)):
                        row.update(folder=f"{entry}/{trial}", sweep=entry)
                        rows.append(row)
                continue
            row = _run_row(path)
            if row is not None:
                rows.append(row)
    rows.sort(key=lambda r: (str(r.get("started_at") or ""), r.get("mtime", 0)), reverse=True)
    for r in rows:
        r.pop("mtime", None)
    return rows


def _setting(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return "" if v is None else json.dumps(v) if isinstance(v, (list, dict)) else str(v)


def _cells(r: dict[str, Any], keys: list[str]) -> list[str]:
    name = f"  {os.path.basename(r['folder'])}" if r.get("sweep") else r["name"]
    settings = [_setting(r.get("config", {}).get(k)) for k in keys]
    if r["status"] == "broken":
        return [name, "broken", "", "", *settings, "", "", r["folder"]]
    epochs = f"{r.get('epochs_completed')}/{r.get('epochs')}"
    best = ""
    if r.get("best_value") is not None:
        best = f"{r['best_monitor']} {r['best_value']:.4g} (epoch {r['best_epoch']})"
    wall = f"{r['wall_time_s']:.1f}s" if isinstance(r.get("wall_time_s"), (int, float)) else ""
    started = str(r.get("started_at") or "")[:19].replace("T", " ")
    status = f"dead ({r['reason']})" if r["status"] == "dead" else r["status"]
    return [name, status, epochs, best, *settings, wall, started, r["folder"]]


def run_runs(
    runs_dir: str,
    as_json: bool,
    sort: str | None = None,
    descending: bool = False,
    filters: list[str] | None = None,
    diff: tuple[str, str] | None = None,
) -> int:
    from .runs_table import (
        MAX_SETTING_COLUMNS,
        add_details,
        differing_keys,
        filter_rows,
        group_sweeps,
        sort_rows,
    )

    if diff is not None:
        from .runs_diff import run_diff

        return run_diff(runs_dir, diff[0], diff[1], as_json)
    if not os.path.isdir(runs_dir):
        raise UserError(f"no such runs folder: {runs_dir}")
    rows = list_runs(runs_dir)
    add_details(runs_dir, rows)
    if filters:
        rows = filter_rows(rows, filters)
    if sort:
        rows = sort_rows(rows, sort, descending)
    rows = group_sweeps(rows)
    keys = differing_keys(rows)
    if as_json:
        for r in rows:
            r["settings"] = {k: r["config"].get(k) for k in keys}
            del r["config"]
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        return EXIT_OK
    out = console()
    if not rows:
        out.print(
            f"no runs in {runs_dir}" + (" match the filters" if filters else ""), markup=False
        )
        return EXIT_OK
    from rich import box
    from rich.table import Table

    shown = keys[:MAX_SETTING_COLUMNS]
    columns = [*COLUMNS[:4], *shown, *COLUMNS[4:]]
    table = Table(box=box.SIMPLE_HEAD)
    for col in columns:
        table.add_column(col, no_wrap=True)
    cells = []
    sweep = None
    for r in rows:
        if r.get("sweep") and r["sweep"] != sweep:
            n = sum(t.get("sweep") == r["sweep"] for t in rows)
            cells.append(
                [f"{r['sweep']}/ (sweep, {n} trial{'s' * (n != 1)})"] + [""] * (len(columns) - 1)
            )
        sweep = r.get("sweep")
        cells.append(_cells(r, shown))
    for row in cells:
        table.add_row(*row)
    # piped output: whole rows, never cut (each column: its widest cell plus padding)
    needed = sum(max(len(c), *(len(row[i]) for row in cells)) + 3 for i, c in enumerate(columns))
    if not out.is_terminal and needed + 2 > out.width:
        from rich.console import Console

        out = Console(width=needed + 2, color_system=None, highlight=False, emoji=False)
    out.print(table)
    if len(keys) > len(shown):
        out.print(f"also differ: {', '.join(keys[len(shown) :])} (--json shows them)", markup=False)
    for r in rows:
        if r["status"] == "broken":
            out.print(f"broken: {r['folder']}: {r.get('error', '')}", markup=False)
    return EXIT_OK
