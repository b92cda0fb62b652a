"""Where the MLP training step's time goes (bench_nn.py's MLP, one BLAS thread).

    python bench/profile_mlp.py [--steps 200]

Part 1 times, alternating in one process (medians per step): the eight matrix products of the
step alone on arrays (the GEMM floor), bench_numpy_mlp.py's hand-written numpy step (GEMMs plus
its elementwise passes) and autogradcli's step, with the page faults per step. Part 2 is a
cProfile of autogradcli's step as a per-op table: the time spent inside each Function's forward
and backward, the optimizer and the engine, in ms per step (cProfile adds its own overhead to
every Python call, so the Python rows read high; compare rows with each other).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import resource
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=200)
    args = ap.parse_args()
    from bench_floors import mlp_gemms
    from bench_nn import build, tune_malloc
    from bench_numpy_mlp import numpy_step_factory
    from threadpoolctl import threadpool_limits

    import autogradcli as ag

    tune_malloc()
    ag.set_num_threads(1)
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((128, 784)).astype("float32")
    x, y = ag.tensor(xs), ag.tensor(rng.integers(0, 10, 128))
    model = build(ag, "mlp")
    opt = ag.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    ce = ag.nn.functional.cross_entropy
    np_step, *_ = numpy_step_factory(np.random.default_rng(0))
    gemms = mlp_gemms((784, 512, 256, 10), 128)  # 3 forward, 2 input grads, 3 weight grads

    def ours() -> None:
        opt.zero_grad()
        ce(model(x), y).backward()
        opt.step()

    steps = {"GEMMs alone": gemms, "numpy step": np_step, "autogradcli step": ours}
    with threadpool_limits(limits=1):
        times: dict[str, list[float]] = {k: [] for k in steps}
        faults: dict[str, list[int]] = {k: [] for k in steps}
        for i in range(args.steps + 20):
            for name, fn in steps.items() if i % 2 else reversed(steps.items()):
                f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
                t0 = time.perf_counter()
                fn()
                dt = time.perf_counter() - t0
                if i >= 20:
                    times[name].append(dt)
                    faults[name].append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
        med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
        for name in steps:
            print(
                f"{name:18s} {med[name]:7.3f} ms/step   page faults/step "
                f"{statistics.median(faults[name]):.0f}"
            )
        print(
            f"numpy step beyond its GEMMs {med['numpy step'] - med['GEMMs alone']:.3f} ms; "
            f"autogradcli beyond the numpy step {med['autogradcli step'] - med['numpy step']:.3f} ms"
        )
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(args.steps):
            ours()
        prof.disable()
    _per_op_table(pstats.Stats(prof), args.steps)


def _per_op_table(stats: pstats.Stats, steps: int) -> None:
    """The cumulative time of each op's forward/backward, the optimizer and the engine."""
    rows = []
    for (path, _line, func), (_cc, _nc, tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        if "autogradcli" not in path:
            continue
        short = path.split("autogradcli/")[-1]
        if func in ("forward", "backward", "_backward_arrays", "step", "run_backward"):
            rows.append((ct, tt, f"{short}:{_line} {func}"))
    rows.sort(reverse=True)
    print(f"\nper-op table (cProfile, ms per step; {steps} steps)\n{'cum':>7s} {'own':>7s}  where")
    for ct, tt, name in rows[:14]:
        print(f"{ct / steps * 1e3:7.3f} {tt / steps * 1e3:7.3f}  {name}")


if __name__ == "__main__":
    main()
