"""Write the README's benchmark tables from a measurement, so they cannot go stale by hand.

    python bench/report.py             # run every workload 3 times, rewrite the tables in README.md
    python bench/report.py --print     # print the Markdown tables instead of writing them
    python bench/report.py --runs 5    # more runs: the ranges get wider and more honest
    python bench/report.py --quick     # fewer repeats per run (a smoke run)
    python bench/report.py --only models  # only these sections' rows (floors, models, memory)

Run it as ``env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python bench/report.py`` where those are
set, so OpenBLAS picks its own kernels for the CPU; the header names the kernels threadpoolctl
reports (and any OPENBLAS_CORETYPE still set).

Each run calls ``bench_floors.measure()`` for every "floors" row (autogradcli, PyTorch, the
hand-written numpy floor and the matrix products alone, rotated round by round in one process),
``bench_models.measure()`` for every "models" row (issue 19's realistic steps beside torch, with
the step's GEMMs alone where the workload has them) and ``bench_memory.measure()`` (fresh
processes: peak RSS, page faults, RSS after import); the tables give each ratio's range over the
runs. The rows between the two marker comments in README.md are replaced; everything else in the
file is left as it is. With ``--only``, the rows of the sections not run keep the README's
numbers, and a line under the header says which rows the ``--only`` run measured.
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
    kind: str  # the workload of bench_floors.measure ("floors") or bench_models.measure ("models")
    threads: int
    workload: str
    target: str  # issue 13's target ("floors"), issue 19's ("models"); "-" for none
    section: str = "floors"  # the module that measures it, and report.py's --only name


SECTIONS = ("floors", "models", "memory")
ONLY_NOTE = "Rows of `--only "  # the header's note line of an --only run begins so


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
    Row("gpt_mini", "gpt_mini", 1,
        "GPT-mini training step: nanoGPT's block (pre-LN, causal masked_fill attention, GELU MLP, "
        "tied head), 4 layers, 4 heads, 128 wide, 16x64 tokens, AdamW, clip", "<= 1.0x torch",
        "models"),
    Row("lstm_lm", "lstm_lm", 1,
        "LSTM LM training step: Embedding 64, LSTM 2x256, vocab 1000, 35x32 tokens, SGD, clip",
        "<= 1.0x torch", "models"),
    Row("resnet", "resnet", 1,
        "ResNet-ish training step: stem + 3 residual blocks of conv3x3-BN-ReLU, 32 channels, "
        "16x16, batch 64, SGD momentum", "<= 1.2x torch", "models"),
    Row("resnet20", "resnet20", 1,
        "CIFAR ResNet-20 training step: 3 stages of 16-32-64 channels, stride-2 downsampling with "
        "1x1 conv shortcuts, 32x32, batch 64, SGD momentum", "-", "models"),
    Row("gpt_mini_t2", "gpt_mini", 2, "the GPT-mini step, `--threads 2`", "-", "models"),
    Row("lstm_lm_t2", "lstm_lm", 2, "the LSTM LM step, `--threads 2`", "-", "models"),
    Row("resnet_t2", "resnet", 2, "the ResNet-ish step, `--threads 2`", "-", "models"),
]  # fmt: skip
MODELS_COLUMNS = {"ours": "ratio", "gemm": "floor_ratio"}  # column key -> bench_models' key
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


def measure_once(
    quick: bool, threads_ok: bool, sections: Sequence[str] = SECTIONS
) -> dict[str, dict[str, float]]:
    """One run of every row of ``sections``: its ratios by column key (a row needing threads is
    left out unless ``threads_ok``), and the memory rows: {"ours": MiB or count, "numpy": ...}
    by key."""
    if HERE not in sys.path:
        sys.path.insert(0, HERE)
    results: dict[str, dict[str, float]] = {}
    for row in WORKLOADS:
        if row.section not in sections or (row.threads != 1 and not threads_ok):
            continue
        if row.section == "models":
            import bench_models

            got = bench_models.measure(row.kind, threads=row.threads, rounds=3 if quick else 9)
            results[row.key] = {c: got[k] for c, k in MODELS_COLUMNS.items() if k in got}
        else:
            import bench_floors

            results[row.key] = bench_floors.measure(row.kind, threads=row.threads, quick=quick)
    if "memory" in sections:
        import bench_memory

        steps = 50 if quick else 200
        for key, (ours, floor) in bench_memory.measure(steps=steps).items():
            results[f"mem_{key}"] = {"ours": ours, "numpy": floor}
    return results


def blas_info() -> str:
    """numpy's BLAS as threadpoolctl reports it (internal_api, version, architecture), and any
    OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE set in the environment (they choose the kernels)."""
    import numpy  # noqa: F401  (loads the BLAS threadpoolctl reports)
    from threadpoolctl import threadpool_info

    libs = []
    for info in threadpool_info():
        if info.get("user_api") == "blas":
            text = f"{info['internal_api']} {info.get('version')} ({info.get('architecture')})"
            if text not in libs:
                libs.append(text)
    out = "BLAS " + (", ".join(libs) or "not reported by threadpoolctl")
    env = [
        f"{k}={os.environ[k]}" for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if k in os.environ
    ]
    return out + (f", {' '.join(env)} set" if env else "")


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


def keep_unmeasured(block: list[str], old: list[str], sections: Sequence[str]) -> list[str]:
    """``block`` (an ``--only sections`` run's table) with the rows of the other sections taken
    from ``old`` (the README's block), and ``old``'s header: its first line, then its ``--only``
    notes of other sections, then ``block``'s header line (the new note)."""
    kept = {line.split(" | ")[0]: line for line in old if line.startswith("| ")}
    others = {f"| {r.workload}" for r in WORKLOADS if r.section not in sections}
    if "memory" not in sections:
        others |= {f"| {name}" for _, name, _, _ in MEMORY}
    rows = [kept.get(line.split(" | ")[0], line) if line.split(" | ")[0] in others else line
            for line in block]  # fmt: skip
    note = block[1]
    key = note.split("`", 2)[1] if note.startswith(ONLY_NOTE) else None
    old_notes = [line for line in old[2:] if line.startswith(ONLY_NOTE)]
    notes = [line for line in old_notes if line.split("`", 2)[1] != key] + [note]
    first = old[1] if len(old) > 1 and not old[1].startswith(ONLY_NOTE) else block[1]
    head = [first] + [n for n in notes if n != first]
    body = rows[2:]
    return [rows[0], *head, *body]


def readme_block(text: str) -> list[str]:
    """The README's benchmark block (BEGIN to END), or [] where it has none."""
    lines = text.split("\n")
    try:
        start = next(i for i, line in enumerate(lines) if line.startswith(BEGIN[:24]))
        return lines[start : lines.index(END, start) + 1]
    except (StopIteration, ValueError):
        return []


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
    ap.add_argument(
        "--only", nargs="+", choices=SECTIONS, metavar="SECTION",
        help=f"run only these sections' rows ({', '.join(SECTIONS)}); the others keep the "
        "README's numbers",
    )  # fmt: skip
    args = ap.parse_args(argv)
    sections = [s for s in SECTIONS if s in (args.only or SECTIONS)]

    import numpy as np
    import torch

    if HERE not in sys.path:
        sys.path.insert(0, HERE)
    import bench_floors

    blas = blas_info()
    print(f"numpy {np.__version__}, {blas}; torch {torch.__version__}", file=sys.stderr)
    threads_ok = bench_floors.threads_supported()
    threads_note = "" if threads_ok else (
        "The `--threads 2` rows are `-`: this autogradcli has no `set_num_threads` (no thread "
        "setting), so there is no fair 2-thread comparison to make."
    )  # fmt: skip
    runs = []
    for r in range(args.runs):
        print(f"--- run {r + 1} of {args.runs}", file=sys.stderr)
        runs.append(measure_once(args.quick, threads_ok, sections))
    only = sections != list(SECTIONS)
    flags = (f" --runs {args.runs}" if args.runs != 3 else "") + (" --quick" if args.quick else "")
    flags += f" --only {' '.join(sections)}" if only else ""
    n_runs = f"{args.runs} runs" if args.runs != 1 else "1 run"
    where = (
        f"{cpu_name()} ({os.cpu_count()} cores; torch {torch.__version__}, numpy "
        f"{np.__version__}, {blas})"
    )
    if only:
        header = (
            f"{ONLY_NOTE}{' '.join(sections)}`: the range over {n_runs} of "
            f"`python bench/report.py{flags}` on {where}."
        )
    else:
        header = (
            f"Lower is better; the range over {n_runs} of `python bench/report.py{flags}` on "
            f"{where}, one thread each unless the row says otherwise:"
        )
    block = table(runs, header, threads_note)
    text = ""
    if os.path.exists(args.readme):
        with open(args.readme, encoding="utf-8") as f:
            text = f.read()
    if only:
        block = keep_unmeasured(block, readme_block(text), sections)
    if args.print:
        print("\n".join(block))
        return
    with open(args.readme, "w", encoding="utf-8") as f:
        f.write(replace_block(text, block))
    print(f"updated the benchmark table in {args.readme}", file=sys.stderr)


if __name__ == "__main__":
    main()
