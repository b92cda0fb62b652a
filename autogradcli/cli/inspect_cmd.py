"""``agrad inspect``: the model table of a config or a run folder."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import numpy as np

from .console import console
from .errors import EXIT_OK, UserError

RUN_CONFIGS = ("config.resolved.yaml", "config.yaml")


def _run_folder(path: str) -> tuple[str, dict[str, Any] | None]:
    """(config path, summary.json contents or None) of a run folder."""
    for name in RUN_CONFIGS:
        candidate = os.path.join(path, name)
        if os.path.isfile(candidate):
            break
    else:
        raise UserError(f"{path} is a folder without {' or '.join(RUN_CONFIGS)}: not a run folder")
    summary = None
    spath = os.path.join(path, "summary.json")
    if os.path.isfile(spath):
        try:
            with open(spath, encoding="utf-8") as f:
                summary = json.load(f)
        except (OSError, ValueError) as err:
            raise UserError(f"cannot read {spath}: not valid JSON ({err})") from None
        _check_summary(spath, summary)
    return candidate, summary


# the entries of summary.json that inspect shows, and the JSON types they may have
_SUMMARY_TYPES: dict[str, tuple[type, ...]] = {
    "status": (str,),
    "message": (str,),
    "exit_code": (int, type(None)),
    "best": (dict, type(None)),
    "final": (dict, type(None)),
}


def _check_summary(spath: str, summary: Any) -> None:
    """Refuse a ``summary.json`` that is not a run's summary (a list, a string, mistyped
    entries), naming the file and the entry."""
    if not isinstance(summary, dict):
        kind = {list: "a list", str: "a string"}.get(type(summary), type(summary).__name__)
        raise UserError(f"{spath}: not a run summary: the JSON is {kind}, not an object")
    for key, kinds in _SUMMARY_TYPES.items():
        if key in summary and (
            not isinstance(summary[key], kinds) or isinstance(summary[key], bool)
        ):
            want = " or ".join("null" if k is type(None) else _JSON_NAME[k] for k in kinds)
            raise UserError(
                f"{spath}: not a run summary: {key!r} is {json.dumps(summary[key])[:40]}, "
                f"expected {want}"
            )


_JSON_NAME = {str: "a string", int: "an integer", dict: "an object"}


def _data_state(path: str) -> dict[str, Any] | None:
    """The run folder's ``data_state.json`` (None for a run made before it existed)."""
    from ..trainer.run_dir import RunDir, RunFolderError

    try:
        return RunDir(path).read_data_state()
    except RunFolderError as err:
        raise UserError(str(err)) from None


def _batch(exp: Any) -> Any:
    """A first training batch's worth of zeros (the stored sample shape, as many rows as the
    first batch had), for a run rebuilt without its data."""
    from ..tensor.tensor import wrap

    doc = exp.data_state or {}
    x = doc["sample"]["x"]
    rows = min(exp.train.batch_size, int((doc.get("rows") or {}).get("train", x["shape"][0])))
    return wrap(np.zeros([rows, *x["shape"][1:]], dtype=x["dtype"]))


def run_inspect(path: str, depth: int, overrides: list[str], as_json: bool) -> int:
    if not os.path.exists(path):
        raise UserError(f"no such file or folder: {path}")
    run_summary = None
    config_path = path
    if os.path.isdir(path):
        config_path, run_summary = _run_folder(path)
    from ..config import build_experiment, load_config
    from ..nn.utils.summary import summarize

    config = load_config(config_path, overrides)
    stored = _data_state(path) if os.path.isdir(path) else None
    exp = build_experiment(config, stored, read_data=stored is None)
    x = next(iter(exp.train_loader))[0] if exp.train_loader is not None else _batch(exp)
    summary = summarize(exp.model, x, depth=depth)
    if as_json:
        doc: dict[str, Any] = {"source": path, "config": config_path, "name": exp.name}
        doc["summary"] = summary.to_dict()
        if os.path.isdir(path):
            doc["run"] = run_summary
        sys.stdout.write(json.dumps(doc, indent=2, default=str) + "\n")
        return EXIT_OK
    out = console()
    if os.path.isdir(path):
        render_run(out, path, run_summary)
    render_summary(out, summary, title=f"{exp.name} ({config_path})")
    return EXIT_OK


def _fmt_metric(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def _metrics(m: dict[str, Any]) -> str:
    skip = ("epoch", "step", "time")
    return ", ".join(f"{k} {_fmt_metric(v)}" for k, v in m.items() if k not in skip)


def render_run(out: Any, path: str, summary: dict[str, Any] | None) -> None:
    out.print(f"[bold]Run[/bold] {path}")
    if summary is None:
        out.print("  no summary.json (the run has not finished its first epoch?)")
        return
    status = summary.get("status", "unknown")
    line = f"  status: {status}"
    if "exit_code" in summary:
        line += f" (exit code {summary['exit_code']})"
    out.print(line)
    if summary.get("world_size"):
        out.print(f"  world size: {summary['world_size']} process(es), data-parallel")
    best = summary.get("best")
    if isinstance(best, dict) and best:
        metrics = best.get("metrics") if isinstance(best.get("metrics"), dict) else best
        head = "  best"
        if "epoch" in best:
            head += f" (epoch {best['epoch']}"
            if best.get("monitor"):
                head += f", {best['monitor']} {best.get('mode', '')}".rstrip()
            head += ")"
        out.print(head + ": " + _metrics(metrics), markup=False)
    final = summary.get("final")
    if isinstance(final, dict) and final:
        out.print(f"  final (epoch {final.get('epoch', '?')}): " + _metrics(final), markup=False)
    if summary.get("message"):
        out.print(f"  message: {summary['message']}")
    out.print()


def render_summary(out: Any, summary: Any, title: str | None = None) -> None:
    """The summary as a rich table plus the totals."""
    from rich import box
    from rich.table import Table

    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD)
    table.add_column("Layer (type)", no_wrap=True)
    table.add_column("Output Shape", no_wrap=True)
    table.add_column("Param #", justify="right", no_wrap=True)
    table.add_column("Trainable", no_wrap=True)
    for row, cells in zip(summary.rows, summary.table_rows()):
        label = cells[0]
        if row.is_function:
            label = label.replace("[Function]", "\\[Function]")
            label = f"[magenta]{label}[/magenta]"
        table.add_row(label, *cells[1:])
    out.print(table)
    for line in summary.totals_lines():
        out.print(line, markup=False)
