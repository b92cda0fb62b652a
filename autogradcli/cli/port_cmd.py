"""``agrad port SCRIPT_OR_DIR ...``: the torch names a program uses that autogradcli lacks (or
has only as what PyTorch does without the feature), each with the file:line of its uses."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from .errors import EXIT_FAILED, EXIT_OK, UserError
from .port_analysis import PortSyntaxError, Use, file_uses
from .port_table import NOTES, iter_sources, note, present

__all__ = ["analyse", "run_port"]


def analyse(paths: list[str]) -> dict[str, Any]:
    """The report for ``paths``: files read, names used, the missing and the partial ones."""
    files: list[str] = []
    for path in paths:
        if not os.path.exists(path):
            raise UserError(f"no such file or folder: {path}")
        files += list(iter_sources(path))
    uses: list[Use] = []
    for path in files:
        try:
            uses += file_uses(path, present)
        except PortSyntaxError as err:
            raise UserError(str(err)) from None
        except (OSError, UnicodeDecodeError) as err:
            raise UserError(f"{path}: cannot read: {err}") from None
    by_name: dict[str, list[Use]] = {}
    for use in uses:
        by_name.setdefault(use.name, []).append(use)

    def rows(names: list[str]) -> list[dict[str, Any]]:
        out = []
        for name in names:
            reason, instead = note(name)
            where = [{"file": u.path, "line": u.line, "cell": u.where} for u in by_name[name]]
            out.append({"name": name, "reason": reason, "instead": instead, "uses": where})
        return out

    missing = sorted((n for n in by_name if not present(n)), key=lambda n: (-len(by_name[n]), n))
    partial = sorted(n for n in by_name if present(n) and n in NOTES)
    return {
        "files": len(files),
        "names": len(by_name),
        "missing": rows(missing),
        "partial": rows(partial),
    }


def _where(uses: list[dict[str, Any]]) -> str:
    """``path:3,17`` per file (a notebook's ``path:4 (cell 2)``), one file a line."""
    lines: dict[str, list[str]] = {}
    for u in uses:
        key = u["file"] + (f" ({u['cell']})" if u["cell"] else "")
        if str(u["line"]) not in lines.setdefault(key, []):
            lines[key].append(str(u["line"]))
    return "\n".join(
        f"{key.split(' (')[0]}:{','.join(ls)}" + (f" ({key.split(' (')[1]}" if " (" in key else "")
        for key, ls in lines.items()
    )


def _table(title: str, rows: list[dict[str, Any]]) -> Any:
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    columns = ["name", "used at", "why"] + (["instead"] if any(r["instead"] for r in rows) else [])
    for col in columns:
        table.add_column(col, overflow="fold")
    for row in rows:
        cells = [row["name"], _where(row["uses"]), row["reason"], row["instead"]]
        table.add_row(*cells[: len(columns)])
    return table


def run_port(paths: list[str], as_json: bool) -> int:
    """Print the report; exit 0 when every name is available, 1 when some are missing."""
    report = analyse(paths)
    code = EXIT_FAILED if report["missing"] else EXIT_OK
    if as_json:
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return code
    from .console import console

    out = console()
    if report["partial"]:
        out.print(
            _table("Available, working as PyTorch does without the feature:", report["partial"])
        )
    n, files = report["names"], report["files"]
    if not report["missing"]:
        out.print(f"all {n} torch names used are available ({files} file{'s' * (files != 1)})")
        return code
    out.print(_table("Missing from autogradcli:", report["missing"]))
    missing = len(report["missing"])
    out.print(
        f"{missing} of the {n} torch names used are missing ({files} file{'s' * (files != 1)})"
    )
    return code
