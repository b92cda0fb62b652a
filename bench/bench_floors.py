"""Every workload of the README's table beside its floors, timed in one rotation per round.

    python bench/bench_floors.py [--only mlp] [--threads 2] [--quick]

Per round each candidate runs once, in an order rotated every round (torch, autogradcli, the
hand-written numpy floor, the matrix products alone on arrays), so load on a shared machine
hits all alike; each ratio is the median over rounds of a candidate's time against another's in
the same round. Workloads: "chain" (per-op overhead) and "fit" (custom Function) from
bench_engine.py, floors in bench_numpy_engine.py; "mlp" (784-512-256-10, batch 128), "cnn" and
"wide" (MLP 4096-4096-4096-10, batch 256) training steps from bench_nn.py, floors in
bench_numpy_mlp.py and bench_numpy_cnn.py; "tiny" (MLP 8-8-8-4, batch 128: the step's Python
above the floor's, the arrays being negligible). ``--threads`` sets torch's intra-op threads, numpy's
BLAS pools (threadpoolctl) and ``autogradcli.set_num_threads``.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

WIDE_SIZES, WIDE_BATCH = (4096, 4096, 4096, 10), 256
MLPS = {  # the MLP workloads: (sizes, batch)
    "mlp": ((784, 512, 256, 10), 128),
    "wide": (WIDE_SIZES, WIDE_BATCH),
    "tiny": ((8, 8, 8, 4), 128),  # arrays so small that the step's Python is what is timed
}
KINDS = ("chain", "fit", "mlp", "cnn", "wide", "tiny")
Candidates = dict[str, Callable[[], Any]]


def threads_supported() -> bool:
    """Whether autogradcli has its own thread count to set (else only 1-thread rows are fair)."""
    import autogradcli

    return callable(getattr(autogradcli, "set_num_threads", None))


@contextmanager
def thread_count(threads: int) -> Iterator[str]:
    """Everyone on ``threads`` threads: torch intra-op, numpy's BLAS, autogradcli.set_num_threads."""
    import torch
    from threadpoolctl import threadpool_info, threadpool_limits

    import autogradcli

    ours = getattr(autogradcli, "set_num_threads", None)
    get_ours = getattr(autogradcli, "get_num_threads", lambda: None)
    if ours is None and threads != 1:
        raise RuntimeError("autogradcli has no set_num_threads: only --threads 1 is comparable")
    before = torch.get_num_threads(), get_ours()
    torch.set_num_threads(threads)
    if ours:
        ours(threads)
    try:
        with threadpool_limits(limits=threads):
            pools = ", ".join(f"{i['internal_api']}={i['num_threads']}" for i in threadpool_info())
            mine = (get_ours() or threads) if ours else "1 (no pool)"
            yield f"threads: torch {torch.get_num_threads()}, autogradcli {mine}, numpy [{pools}]"
    finally:
        torch.set_num_threads(before[0])
        if ours and before[1] is not None:
            ours(before[1])


def rotate(cands: Candidates, rounds: int, warmup: int) -> dict[str, list[float]]:
    """Seconds per call of each candidate, ``rounds`` rounds after ``warmup``, order rotated."""
    names = list(cands)
    times: dict[str, list[float]] = {name: [] for name in names}
    for r in range(warmup + rounds):
        k = r % len(names)
        for name in names[k:] + names[:k]:
            t0 = time.perf_counter()
            cands[name]()
            dt = time.perf_counter() - t0
            if r >= warmup:
                times[name].append(dt)
    return times


def paired(times: dict[str, list[float]], num: str, den: str) -> float:
    """The median over rounds of ``num``'s time / ``den``'s in the same round."""
    return statistics.median(a / b for a, b in zip(times[num], times[den]))


def _engine(kind: str, quick: bool) -> tuple[Candidates, int, int]:
    import bench_engine
    import bench_numpy_engine
    import torch

    import autogradcli

    if kind == "chain":
        reps = 20 if quick else 100
        run, floor = bench_engine.run_chain, bench_numpy_engine.run_numpy_chain
    else:
        reps = 100 if quick else 500
        run, floor = bench_engine.run_fit, bench_numpy_engine.run_numpy_fit
    cands = {
        "torch": lambda: run(torch, reps),
        "ours": lambda: run(autogradcli, reps),
        "numpy": lambda: floor(reps),
    }
    return cands, (3 if quick else 7), 1


def mlp_gemms(sizes: tuple[int, ...], batch: int) -> Callable[[], None]:
    """An MLP step's products alone on arrays: each layer's forward and weight gradient, every
    layer's input gradient but the first's (the input needs none)."""
    rng = np.random.default_rng(1)
    ws = [rng.standard_normal((o, i)).astype(np.float32) for i, o in itertools.pairwise(sizes)]
    acts = [rng.standard_normal((batch, s)).astype(np.float32) for s in sizes]

    def gemms() -> None:
        for i, w in enumerate(ws):
            acts[i] @ w.T, acts[i + 1].T @ acts[i]
            if i:
                acts[i + 1] @ w

    return gemms


def _mlp(lib: Any, sizes: tuple[int, ...]) -> Any:
    nn, (a, b, c, d) = lib.nn, sizes
    return nn.Sequential(nn.Linear(a, b), nn.ReLU(), nn.Linear(b, c), nn.ReLU(), nn.Linear(c, d))


def _step(kind: str, quick: bool) -> tuple[Candidates, int, int]:
    import bench_nn
    import bench_numpy_cnn
    import bench_numpy_mlp
    import torch

    import autogradcli as ag

    rng = np.random.default_rng(0)
    if kind == "cnn":
        batch, shape, classes = bench_numpy_cnn.BATCH, (1, 28, 28), 10
        floor = bench_numpy_cnn.numpy_cnn_step_factory(rng)[0]
        gemms = bench_numpy_cnn.cnn_gemms(rng)
    else:
        sizes, batch = MLPS[kind]
        floor = bench_numpy_mlp.numpy_step_factory(rng, sizes=sizes, batch=batch)[0]
        gemms, shape, classes = mlp_gemms(sizes, batch), (sizes[0],), sizes[-1]
    xs = rng.standard_normal((batch, *shape)).astype("float32")
    ys = rng.integers(0, classes, batch)
    torch.manual_seed(0)
    if kind in ("mlp", "cnn"):
        theirs, ours = bench_nn.build(torch, kind), bench_nn.build(ag, kind)
    else:
        theirs, ours = _mlp(torch, sizes), _mlp(ag, sizes)
    for p, tp in zip(ours.parameters(), theirs.parameters()):
        p.data = ag.tensor(tp.detach().numpy().copy())
    cands = {
        "torch": bench_nn.make_step(torch, theirs, torch.tensor(xs), torch.tensor(ys)),
        "ours": bench_nn.make_step(ag, ours, ag.tensor(xs), ag.tensor(ys)),
        "numpy": floor,
        "gemm": gemms,
    }
    if kind == "wide":
        return cands, (3 if quick else 8), 1
    if kind == "tiny":
        return cands, (300 if quick else 2500), 100
    return cands, (20 if quick else 60), 10


def measure(kind: str, threads: int = 1, quick: bool = False) -> dict[str, float]:
    """Time ``kind`` with its floors, print a line, return ratios: "ours", "numpy", "gemm" (each
    against torch) and "ours_numpy" (autogradcli against the numpy floor); absent floors absent."""
    import bench_nn

    bench_nn.tune_malloc()
    cands, rounds, warmup = _engine(kind, quick) if kind in ("chain", "fit") else _step(kind, quick)
    with thread_count(threads) as note:
        times = rotate(cands, rounds, warmup)
    ratios = {name: paired(times, name, "torch") for name in cands if name != "torch"}
    ratios["ours_numpy"] = paired(times, "ours", "numpy")
    med = "  ".join(f"{n} {statistics.median(t) * 1e3:.3f} ms" for n, t in times.items())
    print(f"{kind} ({note}; {rounds} rounds): {med}")
    print("  " + "  ".join(f"{n}/torch {v:.3f}x" for n, v in ratios.items() if n != "ours_numpy"))
    print(f"  ours/numpy floor {ratios['ours_numpy']:.3f}x")
    return ratios


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", choices=KINDS)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    for kind in [args.only] if args.only else KINDS:
        measure(kind, args.threads, args.quick)


if __name__ == "__main__":
    main()
