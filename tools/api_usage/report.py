"""Print the coverage of a usage count on the current autogradcli, and the missing names.

    python tools/api_usage/report.py [counts.json] [--missing N] [--markdown]

Presence is re-read from autogradcli now (the same table as ``agrad port``), so the figures
follow what has been implemented since the count was made.
"""

from __future__ import annotations

import argparse
import json
import os
from collections import defaultdict

from autogradcli.cli.port_table import category, present


def coverage(data: dict) -> dict:
    """Overall and per-category figures: share of uses, of files fully covered, of names."""
    names = [row["name"] for row in data["names"]]
    ok = [present(n) for n in names]
    total = defaultdict(lambda: [0, 0, 0, 0, 0, 0])  # uses, uses ok, files, files ok, names, ok
    for row, has in zip(data["names"], ok):
        for cat in ("all", category(row["name"])):
            t = total[cat]
            t[0] += row["uses"]
            t[1] += row["uses"] if has else 0
            t[4] += 1
            t[5] += has
    for indices in data["files"].values():
        cats = defaultdict(lambda: True)
        for i in indices:
            cats[category(names[i])] &= ok[i]
            cats["all"] &= ok[i]
        for cat, fine in cats.items():
            total[cat][2] += 1
            total[cat][3] += fine
    return dict(total)


def missing(data: dict) -> list[dict]:
    """The rows autogradcli lacks now, most files first."""
    return [row for row in data["names"] if not present(row["name"])]


def _pct(a: int, b: int) -> str:
    return f"{100.0 * a / b:.1f}%" if b else "-"


def main(argv: list[str] | None = None) -> int:
    """Print the coverage table, then the missing names ranked by files."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("counts", nargs="?", default=os.path.join(here, "counts.json"))
    parser.add_argument("--missing", type=int, default=40, metavar="N", help="list N names")
    parser.add_argument("--markdown", action="store_true", help="the table as Markdown")
    parser.add_argument(
        "--wanted", action="store_true", help="only missing names in >= 2 repos or >= 3 files"
    )
    args = parser.parse_args(argv)
    with open(args.counts, encoding="utf-8") as f:
        data = json.load(f)
    table = coverage(data)
    order = ["all"] + sorted((c for c in table if c != "all"), key=lambda c: -table[c][0])
    print(f"{len(data['repos'])} repositories, {len(data['files'])} files using torch")
    if args.markdown:
        print("| category | uses | uses covered | files fully covered | names present |")
        print("|---|---:|---:|---:|---:|")
    for cat in order:
        u, uo, fl, fo, n, no = table[cat]
        cells = [cat, str(u), _pct(uo, u), _pct(fo, fl), f"{no}/{n}"]
        if args.markdown:
            print("| " + " | ".join(cells) + " |")
        else:
            print(
                f"{cells[0]:<16} {cells[1]:>7} uses  {cells[2]:>6} of uses  {cells[3]:>6} of "
                f"files  {cells[4]:>9} names"
            )
    rows = missing(data)
    if args.wanted:
        rows = [r for r in rows if r["repos"] >= 2 or r["files"] >= 3]
    print(f"\nmissing names ({len(rows)}), by files: name files repos uses")
    for row in rows[: args.missing] if args.missing >= 0 else rows:
        print(f"{row['name']:<56} {row['files']:>5} {row['repos']:>3} {row['uses']:>6}")
    return 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except BrokenPipeError:  # ``report.py | head``: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
        raise SystemExit(0) from None
