"""Memory of the MLP benchmark step loop: autogradcli against the hand-written numpy step.

    python bench/bench_memory.py [--steps 200] [--warmup 20] [--no-mallopt]

Each side runs in a fresh subprocess with one BLAS thread and no torch loaded: the imports
(``import autogradcli`` or ``import numpy``), then bench_nn.py's MLP step (784-512-256-10, batch
128, cross-entropy, SGD momentum; bench_numpy_mlp.py's step for numpy) ``--warmup`` times and
``--steps`` more. Reported: the RSS after the imports, the peak RSS of the process (VmHWM: a
child's ru_maxrss keeps the high-water mark of the process it was forked from, VmHWM is its own),
the peak above the RSS before the model is built (what the step loop itself holds: measured
after numpy's first seeded generator, whose SeedSequence imports ``secrets`` and with it hashlib
and OpenSSL, 3.6 MiB, in both) and the minor page faults per step after the warm-up. bench_nn's mallopt (big freed blocks stay in the heap) is applied in
both, as in the timed benchmarks.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
MIB = 1024 * 1024

CHILD = """
import json, resource, statistics, sys
def status(field):
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) * 1024 for l in f if l.startswith(field + ":"))
def rss():
    return status("VmRSS")
sys.path[:0] = [BENCH, REPO]  # this checkout's autogradcli, as bench_nn.py imports it
import numpy as np
if SIDE == "ours":
    import autogradcli as ag
after_import = rss()
rng = np.random.default_rng(0)  # numpy's first SeedSequence imports secrets, hashlib, OpenSSL
import bench_nn
tuned = bench_nn.tune_malloc() if MALLOPT else False
before_loop = rss()
if SIDE == "ours":
    model = bench_nn.build(ag, "mlp")
    x = ag.tensor(rng.standard_normal((128, 784)).astype("float32"))
    step = bench_nn.make_step(ag, model, x, ag.tensor(rng.integers(0, 10, 128)))
else:  # the floor's module imports torch and threadpoolctl for its measure(), never called here
    import types
    sys.modules["torch"] = types.ModuleType("torch (stub: not loaded)")
    sys.modules["threadpoolctl"] = stub = types.ModuleType("threadpoolctl (stub: not loaded)")
    stub.threadpool_limits = None
    import bench_numpy_mlp
    del sys.modules["torch"], sys.modules["threadpoolctl"]
    step = bench_numpy_mlp.numpy_step_factory(rng)[0]
for _ in range(WARMUP):
    step()
faults = []
for _ in range(STEPS):
    f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    step()
    faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
peak = status("VmHWM")
loaded = sorted({m.split(".")[0] for m in sys.modules} & {"torch", "threadpoolctl"})
print(json.dumps({"after_import": after_import, "before_loop": before_loop, "peak": peak, "rss_end": rss(), "mallopt": tuned,
    "faults_median": statistics.median(faults), "faults_mean": sum(faults) / len(faults),
    "loaded": loaded}))
"""


def child(side: str, steps: int, warmup: int, mallopt: bool) -> dict:
    """Run the step loop of ``side`` ("ours" or "numpy") in a fresh process; its measurements."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    preamble = (
        f"SIDE, STEPS, WARMUP, MALLOPT = {side!r}, {steps}, {warmup}, {mallopt}\n"
        f"BENCH, REPO = {str(HERE)!r}, {str(HERE.parent)!r}\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", preamble + CHILD], env=env, capture_output=True, text=True
    )
    if out.returncode:
        raise RuntimeError(f"the {side} memory child failed:\n{out.stderr}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    if result["loaded"]:
        raise RuntimeError(f"the {side} child loaded {result['loaded']}: its RSS is not comparable")
    return result


def measure(steps: int = 200, warmup: int = 20, mallopt: bool = True) -> dict[str, tuple]:
    """Print and return (autogradcli, numpy floor) by key: "peak" and "loop" (MiB: the peak RSS
    and the peak above the RSS before the model is built), "faults" (median minor page faults
    per step after warm-up), "import" (MiB after ``import autogradcli`` / ``import numpy``)."""
    ours, floor = (child(side, steps, warmup, mallopt) for side in ("ours", "numpy"))
    rows = {
        "peak": (ours["peak"] / MIB, floor["peak"] / MIB),
        "loop": ((ours["peak"] - ours["before_loop"]) / MIB,
                 (floor["peak"] - floor["before_loop"]) / MIB),
        "faults": (ours["faults_median"], floor["faults_median"]),
        "import": (ours["after_import"] / MIB, floor["after_import"] / MIB),
    }  # fmt: skip
    print(f"MLP step loop memory ({steps} steps after {warmup}; mallopt {ours['mallopt']}):")
    print(
        f"  RSS after imports   autogradcli {rows['import'][0]:6.1f} MiB   numpy {rows['import'][1]:6.1f} MiB"
    )
    for key, name in (("peak", "peak RSS"), ("loop", "step loop's own")):
        a, b = rows[key]
        print(f"  {name:19s} autogradcli {a:6.1f} MiB   numpy {b:6.1f} MiB   ratio {a / b:.2f}x")
    print(
        f"  page faults/step    autogradcli median {ours['faults_median']:g} mean "
        f"{ours['faults_mean']:.2f}   numpy median {floor['faults_median']:g} mean "
        f"{floor['faults_mean']:.2f}"
    )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--no-mallopt", action="store_true")
    args = ap.parse_args()
    measure(args.steps, args.warmup, not args.no_mallopt)


if __name__ == "__main__":
    main()
