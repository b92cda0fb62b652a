"""Engine overhead, side by side with PyTorch in one process (alternating runs, medians, ratio).

    python bench/bench_engine.py            # full run
    python bench/bench_engine.py --quick    # fewer repeats

(a) per-op overhead: a chain of 100 elementwise ops on a 16-element float32 tensor, forward +
backward, in microseconds per op; (b) the tutorial's custom-Function loop: fit sin(x) on 2000
points with a + b * P3(c + d * x), 500 SGD iterations. Threads are pinned to 1 for both.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

import autogradcli

N_OPS = 100


def chain(m: Any, x: Any, w: Any) -> Any:
    """100 elementwise ops: a repeating mix of scalar mul, add, tanh, sub, tensor mul, sin..."""
    y = x
    for i in range(N_OPS // 10):
        y = y * 0.9
        y = y + w
        y = y.tanh()
        y = y - 0.1
        y = y * w
        y = y.sin()
        y = y + 0.5
        y = y.sigmoid()
        y = y - w
        y = y * (1.0 + i * 1e-3)
    return y


def run_chain(m: Any, reps: int) -> float:
    """Seconds for ``reps`` forward+backward passes of the chain."""
    rng = np.random.default_rng(0)
    x = m.tensor(rng.standard_normal(16).astype(np.float32), requires_grad=True)
    w = m.tensor(rng.standard_normal(16).astype(np.float32), requires_grad=True)
    t0 = time.perf_counter()
    for _ in range(reps):
        chain(m, x, w).sum().backward()
    return time.perf_counter() - t0


def make_p3(m: Any) -> Any:
    class LegendrePolynomial3(m.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return 0.5 * (5 * input**3 - 3 * input)

        @staticmethod
        def backward(ctx, grad_output):
            (input,) = ctx.saved_tensors
            return grad_output * 1.5 * (5 * input**2 - 1)

    return LegendrePolynomial3


def run_fit(m: Any, iters: int) -> tuple[float, float, list[Any]]:
    """Seconds for the tutorial loop; the final loss; the parameters' and grads' dtypes."""
    P3 = make_p3(m).apply
    x = m.linspace(-math.pi, math.pi, 2000, dtype=m.float32)
    y = m.sin(x)
    params = [m.full((), v, dtype=m.float32, requires_grad=True) for v in (0.0, -1.0, 0.0, 0.3)]
    a, b, c, d = params
    dtypes: list[Any] = []
    t0 = time.perf_counter()
    for t in range(iters):
        loss = (a + b * P3(c + d * x) - y).pow(2).sum()
        loss.backward()
        if t == iters - 1:
            dtypes = [p.dtype for p in params] + [p.grad.dtype for p in params]
        with m.no_grad():
            for p in params:
                p -= 5e-6 * p.grad
                p.grad = None
    return time.perf_counter() - t0, float(loss.item()), dtypes


def side_by_side(
    name: str, fn: Callable[[Any], float], repeats: int, unit: float, label: str
) -> float:
    """Print and return the ratio of the medians (autogradcli / torch)."""
    ours, theirs = [], []
    for _ in range(repeats):  # alternate so both see the same machine state
        ours.append(fn(autogradcli))
        theirs.append(fn(torch))
    mo, mt = statistics.median(ours) * unit, statistics.median(theirs) * unit
    print(f"{name}: autogradcli {mo:9.2f} {label}  torch {mt:9.2f} {label}  ratio {mo / mt:5.2f}x")
    return mo / mt


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats (a smoke run)")
    args = parser.parse_args()
    measure(args.quick)


def measure(quick: bool = False) -> dict[str, float]:
    """Run (a) and (b), print them, return their ratios by name ("chain", "fit")."""
    repeats, chain_reps, iters = (3, 20, 100) if quick else (7, 100, 500)

    from bench_floors import thread_count

    with thread_count(1) as note:
        print(note)
        print(f"torch {torch.__version__}, numpy {np.__version__}, repeats {repeats}")
        run_chain(autogradcli, 2), run_chain(torch, 2)  # warm up
        chain_ratio = side_by_side(
            f"(a) per-op overhead, {N_OPS}-op chain fwd+bwd, 16 x float32",
            lambda m: run_chain(m, chain_reps), repeats, 1e6 / (chain_reps * N_OPS), "us/op",
        )  # fmt: skip
        fit_ratio = side_by_side(
            f"(b) custom-Function sin(x) fit, 2000 points, {iters} iterations",
            lambda m: run_fit(m, iters)[0], repeats, 1e3, "ms   ",
        )  # fmt: skip
        _, loss_ours, dtypes = run_fit(autogradcli, iters)
        _, loss_torch, _ = run_fit(torch, iters)
        ok = all(dt == autogradcli.float32 for dt in dtypes)
        print(f"(b) final loss autogradcli {loss_ours:.4f}  torch {loss_torch:.4f}")
        print(f"(b) parameters and grads float32: {'yes' if ok else 'NO: ' + str(dtypes)}")
    return {"chain": chain_ratio, "fit": fit_ratio}


if __name__ == "__main__":
    main()
