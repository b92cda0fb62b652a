"""numpy's slow spots, beside torch: selections (``where`` and the ops on it), clamps to scalar
bounds and one-row products, forward + backward, one thread, in one rotation.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python bench/bench_select.py [--rounds 200]
    ... --before /tmp/old   # an older tree's package too (git archive), paired

The figures bench/README.md and the docstrings give for ``backend/select.py``, ``np.clip`` and
``backend/dots.matmul`` come from here: medians (us) and the paired ratios, then the array-level
forms alone (numpy's call against the helper's).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def cases(lib: Any) -> dict[str, Callable[[], Any]]:
    """Each case's call on ``lib`` (torch or an autogradcli), from the same numpy data."""
    rng = np.random.default_rng(0)
    act = rng.standard_normal((64, 32, 16, 16)).astype(np.float32)
    att = rng.standard_normal((16, 4, 64, 64)).astype(np.float32)
    big = rng.standard_normal(1_000_000).astype(np.float32)
    x = lib.tensor(act, requires_grad=True)
    g = lib.tensor(act)
    a = lib.tensor(att, requires_grad=True)
    ga = lib.tensor(att)
    causal = lib.tensor(~np.tril(np.ones((64, 64), bool)))
    v = lib.tensor(big)
    lin = lib.nn.Linear(185, 128)
    row = lib.tensor(rng.standard_normal((1, 185)).astype(np.float32))
    F = lib.nn.functional
    return {
        "leaky_relu fwd+bwd, 64x32x16x16": lambda: F.leaky_relu(x, 0.2).backward(g),
        "where(x > 0, x, x * 0.5) fwd+bwd": lambda: lib.where(x > 0, x, x * 0.5).backward(g),
        "causal masked_fill + softmax fwd+bwd, 16x4x64x64": lambda: (
            a.masked_fill(causal, float("-inf")).softmax(-1).backward(ga)
        ),
        "clamp(0, 1), 1e6 values": lambda: v.clamp(0, 1),
        "clamp(min=0), 1e6 values": lambda: v.clamp(min=0),
        "Linear(185, 128) fwd+bwd on one row": lambda: lin(row).sum().backward(),
    }


def array_cases() -> dict[str, Callable[[], Any]]:
    """numpy's call and the helper that replaces it, on the arrays the docstrings cite."""
    from autogradcli.backend import dots, select

    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((2, 524_288)).astype(np.float32)
    mask, halves = x > 0, np.arange(x.size) < x.size // 2
    col, row = rng.standard_normal((128, 1)), rng.standard_normal((1, 185))
    col, row = col.astype(np.float32), row.astype(np.float32)
    block = x[:65_536]
    return {
        "np.where, random mask, 524,288 float32": lambda: np.where(mask, x, y),
        "np.where, predictable mask": lambda: np.where(halves, x, y),
        "select.where, random mask": lambda: select.where(np, mask, x, y),
        "select.where, predictable mask": lambda: select.where(np, halves, x, y),
        "np.matmul (128 x 1) @ (1 x 185)": lambda: np.matmul(col, row),
        "dots.matmul, the same": lambda: dots.matmul(np, col, row),
        "np.minimum against a scalar, 65,536 float32": lambda: np.minimum(block, 4.0),
        "np.clip with both bounds, the same": lambda: np.clip(block, -4.0, 4.0),
    }


def side_by_side(
    make: Callable[[Any], dict[str, Callable[[], Any]]], rounds: int, before: str | None
) -> None:
    """Print the table of ``make(lib)``'s cases on torch, autogradcli and (``before``) an older
    tree, rotated in one process on one thread: medians (us) and the paired ratios."""
    import torch
    from bench_floors import paired, rotate, thread_count
    from bench_models import _before_package
    from bench_nn import tune_malloc

    import autogradcli

    tune_malloc()
    libs = {"autogradcli": autogradcli, "torch": torch}
    if before:
        libs["before"] = _before_package(before)
        libs["before"].set_num_threads(1)
    with thread_count(1) as note:
        print(note)
        built = {name: make(lib) for name, lib in libs.items()}
        head = "| case | torch us | autogradcli us | ours / torch |"
        print(head + (" before us | ours / before |" if before else ""))
        print("|---|---|---|---|" + ("---|---|" if before else ""))
        for case in built["torch"]:
            times = rotate({n: b[case] for n, b in built.items()}, rounds, warmup=10)
            med = {n: statistics.median(t) * 1e6 for n, t in times.items()}
            line = f"| {case} | {med['torch']:.1f} | {med['autogradcli']:.1f} | "
            line += f"{paired(times, 'autogradcli', 'torch'):.2f} |"
            if before:
                line += f" {med['before']:.1f} | {paired(times, 'autogradcli', 'before'):.2f} |"
            print(line, flush=True)


def table_args(doc: str, rounds: int) -> argparse.Namespace:
    """The options of a side_by_side script: ``--rounds`` and ``--before``."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=rounds)
    ap.add_argument("--before", help="an older tree (git archive): its package timed too")
    return ap.parse_args()


def main() -> None:
    args = table_args(__doc__, 200)
    side_by_side(cases, args.rounds, args.before)
    from bench_floors import rotate, thread_count

    with thread_count(1):
        times = rotate(array_cases(), args.rounds, warmup=10)
    print("\n| array-level call | us |\n|---|---|")
    for case, t in times.items():
        print(f"| {case} | {statistics.median(t) * 1e6:.1f} |")


if __name__ == "__main__":
    main()
