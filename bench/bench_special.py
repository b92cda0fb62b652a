"""Elementwise special functions on float32 arrays, one thread: torch beside autogradcli's
float32 path ("after") and the path it replaced ("before": scipy.special's float32 ufunc loop,
which the ops called until the float32 kernels), rotated round by round in one process.

    python bench/bench_special.py                  # every row, 1e6 values, 15 rounds
    python bench/bench_special.py --only erfinv,lgamma --n 100000 --rounds 5
    MALLOC_MMAP_THRESHOLD_=1048576 python bench/bench_special.py   # fresh pages (see below)
    python bench/bench_special.py --tune-malloc                     # warm heap (bench_nn's)

Prints a Markdown table: op, input range, torch ms, scipy's float32 loop ms, before ms, after
ms (medians over rounds), after/torch and before/after (medians of the per-round ratios).
"before" is the code this round replaced: scipy's loop for erfc, erfinv, lgamma, digamma and
polygamma; the same kernels unblocked for erf and GELU; the Tensor-op composition's passes for
erfinv's backward. xlogy and sinc are unchanged (their "after" is the current composition);
i0, i0e, i1, i1e, ndtr, ndtri and log_ndtr are new (no before).

glibc's malloc gives a 4 MB temporary either from its heap (warm pages) or as a fresh mapping
(1024 page faults) depending on the process's history (its mmap threshold moves); a kernel of
unblocked 1e6-value passes then costs 2-3x more. ``MALLOC_MMAP_THRESHOLD_=1048576`` pins the
fresh-page case (arrays over 1 MB are always mapped anew); ``--tune-malloc`` the warm one
(bench_nn's mallopt, as the training-step benches run); the plain run is glibc's default, which
meets either.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

Row = tuple[str, str, dict[str, Callable[[], Any]]]
COLUMNS = ("torch", "scipy", "before", "after")
SCIPY_BEFORE = {"erfc", "erfinv", "lgamma", "digamma", "polygamma(1)"}  # scipy's loop was the op
NEW = ("i0", "i0e", "i1", "i1e", "ndtr", "log_ndtr", "ndtri")  # new ops: no before


def _rows(n: int) -> list[Row]:
    """(op, range, {column: closure}) over fresh float32 inputs; "before" is left out where it
    is scipy's loop (the ops called it until the float32 kernels) and so the scipy column."""
    import scipy.special as sc
    import torch

    import autogradcli as ag
    from autogradcli.backend import special

    rng = np.random.default_rng(0)

    def uniform(lo: float, hi: float) -> Any:
        return rng.uniform(lo, hi, n).astype(np.float32)

    x4, p, g20 = uniform(-4, 4), uniform(-0.999, 0.999), uniform(0.01, 20)
    gx = rng.standard_normal(n).astype(np.float32)
    t4, tp, tg20, tg = (torch.from_numpy(a) for a in (x4, p, g20, gx))
    a4, ap, ag20 = (ag.tensor(a) for a in (x4, p, g20))
    y_erfinv = sc.erfinv(p)
    ty = torch.from_numpy(y_erfinv)
    half_pi = math.sqrt(math.pi) / 2.0
    cdf, gauss = special.ndtr32(x4)
    _, s_tanh = special.gelu_tanh_forward(x4)

    def erfinv_backward_before() -> Any:  # the Tensor-op composition's passes, on arrays
        return gx * np.exp(y_erfinv * y_erfinv) * np.float32(half_pi)

    def gelu_before() -> Any:  # the unblocked kernels
        c, _ = special._ndtr32(np, x4)
        return x4 * c

    def torch_gelu_backward(approximate: str) -> Callable[[], Any]:
        return lambda: torch.ops.aten.gelu_backward(tg, t4, approximate=approximate)

    return [
        ("erf", "[-4, 4]", {"torch": lambda: torch.erf(t4), "scipy": lambda: sc.erf(x4),
                            "before": lambda: special._erf32(np, x4), "after": lambda: ag.erf(a4)}),
        ("erfc", "[-4, 4]", {"torch": lambda: torch.erfc(t4), "scipy": lambda: sc.erfc(x4),
                             "after": lambda: ag.erfc(a4)}),
        ("erfinv", "(-0.999, 0.999)", {"torch": lambda: torch.erfinv(tp),
                                       "scipy": lambda: sc.erfinv(p),
                                       "after": lambda: ag.erfinv(ap)}),
        ("erfinv backward", "(-0.999, 0.999)", {
            "torch": lambda: tg * torch.exp(ty * ty) * half_pi,
            "before": erfinv_backward_before,
            "after": lambda: special.erfinv_backward(gx, y_erfinv)}),
        ("lgamma", "[0.01, 20]", {"torch": lambda: torch.lgamma(tg20),
                                  "scipy": lambda: sc.gammaln(g20),
                                  "after": lambda: ag.lgamma(ag20)}),
        ("digamma", "[0.01, 20]", {"torch": lambda: torch.digamma(tg20),
                                   "scipy": lambda: sc.psi(g20),
                                   "after": lambda: ag.digamma(ag20)}),
        ("polygamma(1)", "[0.01, 20]", {"torch": lambda: torch.polygamma(1, tg20),
                                        "scipy": lambda: sc.polygamma(1, g20),
                                        "after": lambda: ag.polygamma(1, ag20)}),
        ("gelu", "[-4, 4]", {"torch": lambda: torch.nn.functional.gelu(t4),
                             "before": gelu_before,
                             "after": lambda: special.gelu_forward(x4, None)}),
        ("gelu backward", "[-4, 4]", {
            "torch": torch_gelu_backward("none"),
            "before": lambda: special._gelu_backward(np, gx, x4, cdf, gauss),
            "after": lambda: special.gelu_backward(gx, x4, cdf, gauss)}),
        ("gelu tanh", "[-4, 4]", {
            "torch": lambda: torch.nn.functional.gelu(t4, approximate="tanh"),
            "before": lambda: special._gelu_tanh_forward(np, x4),
            "after": lambda: special.gelu_tanh_forward(x4)}),
        ("gelu tanh backward", "[-4, 4]", {
            "torch": torch_gelu_backward("tanh"),
            "before": lambda: special.gelu_tanh_backward(gx, x4, s_tanh, np),
            "after": lambda: special.gelu_tanh_backward(gx, x4, s_tanh)}),
        ("xlogy", "x [-4, 4], y [0.01, 20]", {"torch": lambda: torch.xlogy(t4, tg20),
                                              "scipy": lambda: sc.xlogy(x4, g20),
                                              "after": lambda: ag.xlogy(a4, ag20)}),
        ("sinc", "[-4, 4]", {"torch": lambda: torch.sinc(t4), "scipy": lambda: np.sinc(x4),
                             "after": lambda: ag.sinc(a4)}),
        *[(name, "[-4, 4]", {"torch": partial(getattr(torch.special, name), t4),
                             "scipy": partial(getattr(sc, name), x4),
                             "after": partial(getattr(ag.special, name), a4)})
          for name in NEW if name != "ndtri"],
        ("i0e", "[-20, 20] (80% past 4)", {
            "torch": lambda: torch.special.i0e(t4 * 5), "scipy": lambda: sc.i0e(x4 * 5),
            "after": lambda: ag.special.i0e(a4 * 5)}),
        ("ndtri", "(0.0005, 0.9995)", {"torch": lambda: torch.special.ndtri(tp * 0.5 + 0.5),
                                       "scipy": lambda: sc.ndtri(p * 0.5 + 0.5),
                                       "after": lambda: ag.special.ndtri(ap * 0.5 + 0.5)}),
    ]  # fmt: skip


def measure(n: int, rounds: int, only: set[str] | None) -> list[dict[str, Any]]:
    """Per row, each round runs its candidates in a rotated order; medians of times and of the
    per-round ratios."""
    results = []
    for op, span, cands in _rows(n):
        if only and op not in only:
            continue
        names = [k for k in COLUMNS if k in cands]
        times: dict[str, list[float]] = {k: [] for k in names}
        for k in names:  # warm-up (first-call imports, caches)
            cands[k]()
        for r in range(rounds):
            for k in names[r % len(names) :] + names[: r % len(names)]:
                t0 = time.perf_counter()
                cands[k]()
                times[k].append(time.perf_counter() - t0)
        before = "before" if "before" in times else ("scipy" if op in SCIPY_BEFORE else "")
        row: dict[str, Any] = {"op": op, "range": span, "before_is": before}
        row.update({k: statistics.median(v) * 1e3 for k, v in times.items()})
        row["after/torch"] = statistics.median(
            a / t for a, t in zip(times["after"], times["torch"])
        )
        if before in times:
            row["before/after"] = statistics.median(
                b / a for b, a in zip(times[before], times["after"])
            )
        results.append(row)
    return results


def table(rows: list[dict[str, Any]]) -> str:
    """The Markdown table of ``measure``'s rows."""
    lines = [
        "| op | float32 input | torch ms | scipy f->f ms | before ms | after ms | after/torch "
        "| before/after |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        scipy = f"{r['scipy']:.2f}" if "scipy" in r else "-"
        before = f"{r['before']:.2f}" if "before" in r else "-"
        before = "= scipy" if r["before_is"] == "scipy" else before
        gain = f"{r['before/after']:.1f}x" if "before/after" in r else "-"
        lines.append(
            f"| {r['op']} | {r['range']} | {r['torch']:.2f} | {scipy} | {before} | "
            f"{r['after']:.2f} | {r['after/torch']:.2f} | {gain} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--only", default="", help="comma-separated op names")
    parser.add_argument(
        "--tune-malloc", action="store_true", help="bench_nn's mallopt: freed blocks stay warm"
    )
    args = parser.parse_args(argv)
    if args.tune_malloc:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from bench_nn import tune_malloc

        print(f"mallopt thresholds raised: {tune_malloc()}")
    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(1)
    only = set(filter(None, args.only.split(","))) or None
    with threadpool_limits(1):
        print(table(measure(args.n, args.rounds, only)))


if __name__ == "__main__":
    main()
