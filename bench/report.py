"""Write the README's benchmark table from a measurement, so it cannot go stale by hand.

    python bench/report.py             # run every workload 3 times, rewrite the table in README.md
    python bench/report.py --print     # print the Markdown table instead of writing it
    python bench/report.py --runs 5    # more runs: the ranges get wider and more honest
    python bench/report.py --quick     # fewer repeats per run (a smoke run)

Each run calls the workloads' own ``measure()`` (``bench_engine.py``, ``bench_nn.py``,
``bench_numpy_mlp.py``: autogradcli and PyTorch side by side in one process, alternating, one
thread); the table gives each ratio's range over the runs. The rows between the two marker
comments in README.md are replaced; everything else in the file is left as it is.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

HERE = os.path.dirname(os.path.abspath(__file__))
README = os.path.join(os.path.dirname(HERE), "README.md")
BEGIN = "<!-- bench-table:begin (written by `python bench/report.py`; do not edit) -->"
END = "<!-- bench-table:end -->"

# (key, workload, target): key is what the bench modules' measure() return
WORKLOADS = [
    (
        "chain",
        "per-op overhead: 100 elementwise ops on 16 float32 values, forward + backward",
        "<= 1.0",
    ),
    (
        "fit",
        "custom Function: fit sin(x) with a + b*P3(c + d*x), 2000 points, 500 iterations",
        "<= 1.0",
    ),
    ("mlp", "MLP 784-512-256-10 training step, batch 128, cross-entropy, SGD momentum", "<= 0.85"),
    ("cnn", "CNN (conv 1-8-16, pooling, linear) training step, batch 64, 28x28", "<= 1.0"),
    (
        "numpy_mlp",
        "the same MLP step hand-written in numpy, no autograd (`bench_numpy_mlp.py`): the floor",
        "-",
    ),
]


def measure_once(quick: bool) -> dict[str, float]:
    """One run of every workload: ratio (ours or numpy) / torch by key."""
    sys.path.insert(0, HERE)
    import bench_engine
    import bench_nn
    import bench_numpy_mlp

    ratios = dict(bench_engine.measure(quick))
    ratios.update(bench_nn.measure(["mlp", "cnn"], steps=20 if quick else 60))
    ratios["numpy_mlp"] = bench_numpy_mlp.measure()
    return ratios


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


def fmt_range(values: Sequence[float]) -> str:
    """``0.87-0.93x`` (``0.90x`` when the runs agree to two decimals)."""
    lo, hi = f"{min(values):.2f}", f"{max(values):.2f}"
    return f"{lo}x" if lo == hi else f"{lo}-{hi}x"


def table(ratios: dict[str, list[float]], header: str) -> list[str]:
    """The Markdown block (markers included) for ``ratios`` (several runs per key)."""
    lines = [BEGIN, header, "", "| workload | ratio | target |", "| --- | --- | --- |"]
    for key, workload, target in WORKLOADS:
        lines.append(f"| {workload} | {fmt_range(ratios[key])} | {target} |")
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

    runs: dict[str, list[float]] = {key: [] for key, _, _ in WORKLOADS}
    for r in range(args.runs):
        print(f"--- run {r + 1} of {args.runs}", file=sys.stderr)
        for key, value in measure_once(args.quick).items():
            runs[key].append(value)
    flags = (f" --runs {args.runs}" if args.runs != 3 else "") + (" --quick" if args.quick else "")
    n_runs = f"{args.runs} runs" if args.runs != 1 else "1 run"
    header = (
        f"Ratio autogradcli/torch (lower is better), the range over {n_runs} of "
        f"`python bench/report.py{flags}` on {cpu_name()} ({os.cpu_count()} cores; torch "
        f"{torch.__version__}, numpy {np.__version__}):"
    )
    block = table(runs, header)
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
