"""What autogradcli's intra-op pool pays: the same step with the pool on N threads and on one,
beside torch on N threads (and, for the MLP, the hand-written numpy step), BLAS on N threads for
all, in rotating order in one process; medians, medians of the paired ratios, and the best
times (on a shared machine, the best of many rounds shows what an idle core gives).

    python bench/bench_threads.py [--threads 2] [--rounds 100] [--only mlp|cnn] [--ops]

``--ops`` times the ops the pool splits (ReLU and its backward, max pooling and its backward,
im2col and col2im of the CNN's layers) alone, pool on N threads against one, BLAS on one.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def _rotate(fns: dict[str, Callable[[], Any]], rounds: int, warmup: int = 10) -> dict[str, list]:
    times: dict[str, list[float]] = {k: [] for k in fns}
    names = list(fns)
    for i in range(rounds + warmup):
        for k in names[i % len(names) :] + names[: i % len(names)]:
            t0 = time.perf_counter()
            fns[k]()
            if i >= warmup:
                times[k].append(time.perf_counter() - t0)
    return times


def _paired(times: dict[str, list[float]], a: str, b: str) -> float:
    return statistics.median(x / y for x, y in zip(times[a], times[b]))


def steps(kind: str, n: int, rounds: int) -> None:
    import torch
    from bench_nn import build, make_step
    from bench_numpy_mlp import numpy_step_factory

    import autogradcli as ag
    from autogradcli.backend import threads

    batch, shape = (128, (784,)) if kind == "mlp" else (64, (1, 28, 28))
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((batch, *shape)).astype("float32")
    ys = rng.integers(0, 10, batch)
    torch.manual_seed(0)
    theirs, ours = build(torch, kind), build(ag, kind)
    for p, tp in zip(ours.parameters(), theirs.parameters()):
        p.data = ag.tensor(tp.detach().numpy().copy())
    step = make_step(ag, ours, ag.tensor(xs), ag.tensor(ys))

    def pool(k: int) -> Callable[[], Any]:
        def run() -> Any:
            threads._num_threads = k  # the pool alone: BLAS stays on n threads
            return step()

        return run

    fns = {"torch": make_step(torch, theirs, torch.tensor(xs), torch.tensor(ys))}
    fns.update({f"pool {n}": pool(n), "pool 1": pool(1)})
    if kind == "mlp":
        fns["numpy"] = numpy_step_factory(np.random.default_rng(0))[0]
    times = _rotate(fns, rounds)
    threads._num_threads = n
    med = "  ".join(
        f"{k} {statistics.median(v) * 1e3:.3f} ms (best {min(v) * 1e3:.3f})"
        for k, v in times.items()
    )
    ratios = [f"pool {n}/torch {_paired(times, f'pool {n}', 'torch'):.3f}"]
    ratios.append(f"pool {n}/pool 1 {_paired(times, f'pool {n}', 'pool 1'):.3f}")
    if kind == "mlp":
        ratios.append(f"pool {n}/numpy {_paired(times, f'pool {n}', 'numpy'):.3f}")
        ratios.append(f"numpy/torch {_paired(times, 'numpy', 'torch'):.3f}")
    print(f"{kind.upper()} step, {n} threads: {med} | paired: {', '.join(ratios)}", flush=True)


def ops(n: int, rounds: int) -> None:
    from threadpoolctl import threadpool_limits

    import autogradcli as ag
    from autogradcli.backend import threads
    from autogradcli.ops import convolution as conv
    from autogradcli.ops import pooling, unary

    class Ctx:  # what the forwards here read and write
        needs_input_grad = (True, False)

        def save_for_backward(self, *_: Any) -> None:
            pass

    rng = np.random.default_rng(0)
    a1 = ag.tensor(rng.standard_normal((64, 8, 28, 28)).astype("float32"))
    x1 = rng.standard_normal((64, 1, 28, 28)).astype("float32")
    x2 = rng.standard_normal((64, 8, 14, 14)).astype("float32")
    geo = pooling.pool_geometry(tuple(a1.shape), 2, None, 0, 1, False)
    k3, s1, p1, d1 = (3, 3), (1, 1), (1, 1, 1, 1), (1, 1)
    cols2 = ag.tensor(conv.im2col(x2, k3, s1, p1, d1))
    pooled = Ctx()
    pooling.MaxPool2d.forward(pooled, a1, geo, False)
    g = ag.tensor(rng.standard_normal((64, 8, 14, 14)).astype("float32"))
    work = {
        "relu forward (64,8,28,28)": lambda: unary.Relu.forward(Ctx(), a1),
        "relu backward": lambda: unary.ThresholdBackward.forward(Ctx(), a1, a1),
        "max_pool2d forward": lambda: pooling.MaxPool2d.forward(Ctx(), a1, geo, False),
        "max_pool2d backward": lambda: pooling._MaxScatter.forward(Ctx(), g, pooled.argmax, geo),
        "im2col conv1 (1->8)": lambda: conv.im2col(x1, k3, s1, p1, d1),
        "im2col conv2 (8->16)": lambda: conv.im2col(x2, k3, s1, p1, d1),
        "col2im conv2": lambda: conv.Col2Im.forward(Ctx(), cols2, x2.shape, k3, s1, p1, d1),
    }
    with threadpool_limits(limits=1):
        for name, fn in work.items():

            def on(k: int, fn: Callable[[], Any] = fn) -> Callable[[], Any]:
                def run() -> Any:
                    threads._num_threads = k
                    return fn()

                return run

            times = _rotate({"1": on(1), str(n): on(n)}, rounds)
            m1, mn = (statistics.median(times[k]) * 1e6 for k in ("1", str(n)))
            b1, bn = (min(times[k]) * 1e6 for k in ("1", str(n)))
            print(
                f"{name:28s} 1 thread {m1:7.1f} us (best {b1:6.1f})  {n} threads {mn:7.1f} us "
                f"(best {bn:6.1f})  paired {_paired(times, str(n), '1'):.2f}",
                flush=True,
            )
    threads._num_threads = n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--only", choices=["mlp", "cnn"])
    ap.add_argument("--ops", action="store_true")
    args = ap.parse_args()

    import torch
    from bench_nn import tune_malloc

    import autogradcli as ag

    tune_malloc()
    torch.set_num_threads(args.threads)
    ag.set_num_threads(args.threads)
    if hasattr(os, "getloadavg"):  # the machine's load: 2-thread timings need idle cores
        print(f"1-minute load average before: {os.getloadavg()[0]:.2f}")
    if args.ops:
        ops(args.threads, args.rounds)
        return
    for kind in [args.only] if args.only else ["cnn", "mlp"]:
        steps(kind, args.threads, args.rounds)


if __name__ == "__main__":
    main()
