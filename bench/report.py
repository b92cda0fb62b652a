"""Write the README's benchmark tables from a measurement, so they cannot go stale by hand.

    python bench/report.py             # run every workload 3 times, rewrite the tables in README.md
    python bench/report.py --print     # print the Markdown tables instead of writing them
    python bench/report.py --runs 5    # more runs: the ranges get wider and more honest
    python bench/report.py --quick     # fewer repeats per run (a smoke run)

Each run calls ``bench_floors.measure()`` for every row (autogradcli, PyTorch, the hand-written
numpy floor and the matrix products alone, rotated round by round in one process) and
``bench_memory.measure()`` (fresh processes: peak RSS, page faults, RSS after import); the tables
give each ratio's range over the runs. The rows between the two marker comments in README.md
are replaced; everything else in the file is left as it is.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import NamedTuple

HERE = os.path.dirname(os.path.abspath(__file__))
README = os.path.join(os.path.dirname(HERE), "README.md")
BEGIN = "<!-- bench-table:begin (written by `python bench/report.py`; do not edit) -->"
END = "<!-- bench-table:end -->"


class Row(NamedTuple):
    key: str  # the row's key in a run's results
    kind: str  # bench_floors.measure's workload
    threads: int
    workload: str
    target: str  # issue 13's target


WORKLOADS = [
    Row("chain", "chain", 1,
        "per-op overhead: 100 elementwise ops on 16 float32 values, forward + backward",
        "<= 0.9x torch"),
    Row("fit", "fit", 1,
        "custom Function: fit sin(x) with a + b*P3(c + d*x), 2000 points, 500 iterations",
        "<= 0.9x torch"),
    Row("mlp", "mlp", 1,
        "MLP 784-512-256-10 training step, batch 128, cross-entropy, SGD momentum",
        "<= 1.02x floor"),
    Row("cnn", "cnn", 1,
        "CNN (conv 1-8-16, pooling, linear) training step, batch 64, 28x28", "<= 0.85x torch"),
    Row("wide", "wide", 1,
        "wide MLP 4096-4096-4096-10 training step, batch 256, SGD momentum", "<= 1.03x floor"),
    Row("mlp_t2", "mlp", 2, "the MLP step, `--threads 2`", "<= 1.05x floor"),
    Row("cnn_t2", "cnn", 2, "the CNN step, `--threads 2`", "<= 1.1x torch"),
]  # fmt: skip
COLUMNS = [  # (column heading, key in bench_floors.measure's result)
    ("autogradcli / torch", "ours"),
    ("numpy floor / torch", "numpy"),
    ("GEMMs / torch", "gemm"),
    ("autogradcli / numpy floor", "ours_numpy"),
]
MEMORY = [  # (key in bench_memory.measure's result, row, unit, target)
    ("peak", "peak RSS of the MLP step loop (a fresh process)", "MiB", "<= 1.1x floor"),
    ("loop", "of which the step loop's own (peak minus RSS before the model)", "MiB", "-"),
    ("faults", "minor page faults per step after warm-up (median)", "", "0"),
    ("import", "RSS after `import autogradcli` (floor: `import numpy`)", "MiB", "< 40 MiB"),
]


def measure_once(quick: bool, threads_ok: bool) -> dict[str, dict[str, float]]:
    """One run of every row: its ratios by column key (a row needing threads is left out unless
    ``threads_ok``), and the memory rows: {"ours": MiB or count, "numpy": ...} by key."""
    if HERE not in sys.path:
        sys.path.insert(0, HERE)
    import bench_floors
    import bench_memory

    results: dict[str, dict[str, float]] = {}
    for row in WORKLOADS:
        if row.threads == 1 or threads_ok:
            results[row.key] = bench_floors.measure(row.kind, threads=row.threads, quick=quick)
    steps = 50 if quick else 200
    for key, (ours, floor) in bench_memory.measure(steps=steps).items():
        results[f"mem_{key}"] = {"ours": ours, "numpy": floor}
    return results


def cpu_name() -> str:
    """The CPU's model name (Linux), else the platform's processor string."""
    import platform

    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return " ".join(line.split(":", 1)[1].split())
    except OSError:
        pass
    return platform.processor() or "an unknown CPU"


def fmt_range(values: Sequence[float], unit: str = "x", digits: int = 2) -> str:
    """``0.87-0.93x`` (``0.90x`` when the runs agree to ``digits`` decimals; ``-`` for none)."""
    if not values:
        return "-"
    lo, hi = f"{min(values):.{digits}f}", f"{max(values):.{digits}f}"
    return f"{lo}{unit}" if lo == hi else f"{lo}-{hi}{unit}"


def table(
    runs: list[dict[str, dict[str, float]]], header: str, threads_note: str = ""
) -> list[str]:
    """The Markdown block (markers included) for ``runs`` (measure_once's results, one per run):
    the speed table, then the memory table; a ratio no run measured is ``-``."""
    heads = " | ".join(h for h, _ in COLUMNS)
    lines = [
        BEGIN,
        header,
        "",
        f"| workload | {heads} | target |",
        "|---" * (len(COLUMNS) + 2) + "|",
    ]
    for row in WORKLOADS:
        cells = [
            fmt_range([r[row.key][c] for r in runs if c in r.get(row.key, {})]) for _, c in COLUMNS
        ]
        lines.append(f"| {row.workload} | {' | '.join(cells)} | {row.target} |")
    if threads_note:
        lines += ["", threads_note]
    lines += ["", "| memory | autogradcli | numpy floor | autogradcli / floor | target |",
              "|---|---|---|---|---|"]  # fmt: skip
    for key, name, unit, target in MEMORY:
        values = [r[f"mem_{key}"] for r in runs if f"mem_{key}" in r]
        ours, floor = ([v[side] for v in values] for side in ("ours", "numpy"))
        digits = 1 if unit else 0
        ratio = fmt_range([a / b for a, b in zip(ours, floor)]) if unit and values else "-"
        cells = [
            fmt_range(ours, f" {unit}".rstrip(), digits),
            fmt_range(floor, f" {unit}".rstrip(), digits),
            ratio,
        ]
        lines.append(f"| {name} | {' | '.join(cells)} | {target} |")
    lines.append(END)
    return lines


def replace_block(text: str, block: list[str]) -> str:
    """``text`` with the lines from BEGIN to END (inclusive) replaced by ``block``."""
    lines = text.split("\n")
    try:
        start = next(i for i, line in enumerate(lines) if line.startswith(BEGIN[:24]))
        end = next(i for i in range(start, len(lines)) if lines[i] == END)
    except StopIteration:
        raise ValueError(f"README.md has no benchmark block ({BEGIN[:24]}... {END})") from None
    return "\n".join(lines[:start] + block + lines[end + 1 :])


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="full runs of every workload (ranges)")
    ap.add_argument("--quick", action="store_true", help="fewer repeats per run (a smoke run)")
    ap.add_argument("--print", action="store_true", help="print the table, leave README.md")
    ap.add_argument("--readme", default=README, help="the file to update (default: README.md)")
    args = ap.parse_args(argv)

    import numpy as np
    import torch

    if HERE not in sys.path:
        sys.path.insert(0, HERE)
    import bench_floors

    threads_ok = bench_floors.threads_supported()
    threads_note = "" if threads_ok else (
        "The `--threads 2` rows are `-`: this autogradcli has no `set_num_threads` (no thread "
        "setting), so there is no fair 2-thread comparison to make."
    )  # fmt: skip
    runs = []
    for r in range(args.runs):
        print(f"--- run {r + 1} of {args.runs}", file=sys.stderr)
        runs.append(measure_once(args.quick, threads_ok))
    flags = (f" --runs {args.runs}" if args.runs != 3 else "") + (" --quick" if args.quick else "")
    n_runs = f"{args.runs} runs" if args.runs != 1 else "1 run"
    header = (
        f"Lower is better; the range over {n_runs} of `python bench/report.py{flags}` on "
        f"{cpu_name()} ({os.cpu_count()} cores; torch {torch.__version__}, numpy "
        f"{np.__version__}), one thread each unless the row says otherwise:"
    )
    block = table(runs, header, threads_note)
    if args.print:
        print("\n".join(block))
        return
    with open(args.readme, encoding="utf-8") as f:
        text = f.read()
    with open(args.readme, "w", encoding="utf-8") as f:
        f.write(replace_block(text, block))
    print(f"updated the benchmark table in {args.readme}", file=sys.stderr)


if __name__ == "__main__":
    main()
