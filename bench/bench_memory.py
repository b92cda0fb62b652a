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
both, as in the timed benchmarks, and autogradcli's bytecode is compiled first, as an installed
package has it (``bench_nn.as_installed``).

    python bench/bench_memory.py --models [gpt_mini lstm_lm resnet] [--steps 20] [--warmup 0]

measures instead issue 19's realistic steps (bench_models.WORKLOADS) against torch: one fresh
process per workload and library, only that library imported (bench_models fills the weights
from numpy, so neither side loads the other; the child checks), one thread. Reported per side:
the RSS after the imports, after the model, data and optimizer are built, the peak (VmHWM) over
``--warmup`` + ``--steps`` steps, and the step loop's own peak (VmHWM minus the RSS just before
the first step) and the steady step's own (after 2 steps, VmHWM reset through
/proc/self/clear_refs: the peak of the later steps above the RSS after step 2, i.e. the pages
the later steps touch beyond what stayed resident; it depends on the allocator keeping freed
blocks, so no ratio); ratios autogradcli / torch of the peak and the loop's own. The first 3
losses of both sides are compared (the same model on both).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_nn import as_installed  # noqa: E402

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
    preamble = f"SIDE, STEPS, WARMUP, MALLOPT = {side!r}, {steps}, {warmup}, {mallopt}\n"
    return _run_child(preamble, CHILD, 1, f"the {side}")


def _run_child(preamble: str, program: str, threads: int, what: str) -> dict:
    """Run ``program`` (after ``preamble`` and the bench/repo paths) in a fresh interpreter on
    ``threads`` threads; the JSON of its last line, refused if it loaded the other library."""
    n = str(threads)
    env = dict(os.environ, OMP_NUM_THREADS=n, OPENBLAS_NUM_THREADS=n, MKL_NUM_THREADS=n)
    preamble += f"BENCH, REPO = {str(HERE)!r}, {str(HERE.parent)!r}\n"
    out = subprocess.run(
        [sys.executable, "-c", preamble + program], env=env, capture_output=True, text=True
    )
    if out.returncode:
        raise RuntimeError(f"{what} memory child failed:\n{out.stderr}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    if result["loaded"]:
        raise RuntimeError(
            f"{what} child loaded another library ({result['loaded']}): not comparable"
        )
    return result


def measure(steps: int = 200, warmup: int = 20, mallopt: bool = True) -> dict[str, tuple]:
    """Print and return (autogradcli, numpy floor) by key: "peak" and "loop" (MiB: the peak RSS
    and the peak above the RSS before the model is built), "faults" (median minor page faults
    per step after warm-up), "import" (MiB after ``import autogradcli`` / ``import numpy``)."""
    as_installed()  # the package's bytecode, as installed (not compiled at import)
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


MODEL_CHILD = """
import json, sys
def status(field):
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) * 1024 for l in f if l.startswith(field + ":"))
sys.path[:0] = [BENCH, REPO]
import numpy as np
if SIDE == "torch":
    import torch as lib
else:
    import autogradcli as lib
lib.set_num_threads(THREADS)
after_import = status("VmRSS")
np.random.default_rng(0)  # numpy's first SeedSequence imports secrets, hashlib, OpenSSL
import bench_models, bench_nn
tuned = bench_nn.tune_malloc() if MALLOPT else False
before_build = status("VmRSS")
step = bench_models.WORKLOADS[NAME](lib)
before_loop = status("VmRSS")
losses = [step() for _ in range(SETTLE)]  # gradients, optimizer state, lazy one-time setup
first_peak = status("VmHWM")
with open("/proc/self/clear_refs", "w") as f:  # VmHWM := VmRSS (Linux >= 4.0)
    f.write("5")
settled = status("VmRSS")
losses += [step() for _ in range(WARMUP + STEPS - SETTLE)]
steady_peak = status("VmHWM")
other = "autogradcli" if SIDE == "torch" else "torch"
print(json.dumps({"after_import": after_import, "before_build": before_build,
    "before_loop": before_loop, "peak": max(first_peak, steady_peak), "settled": settled,
    "steady_peak": steady_peak, "rss_end": status("VmRSS"),
    "mallopt": tuned, "losses": losses[:3], "loaded": other in sys.modules}))
"""


SETTLE = 2  # steps before the steady-state window (its VmHWM reset through clear_refs)


def model_child(
    name: str, side: str, steps: int, warmup: int, mallopt: bool, threads: int = 1
) -> dict:
    """One workload of bench_models on ``side`` ("ours" or "torch") in a fresh process, alone,
    on ``threads`` threads (the library's intra-op threads and numpy's BLAS)."""
    if warmup + steps <= SETTLE:
        raise ValueError(f"--warmup + --steps must be over {SETTLE}")
    preamble = (
        f"THREADS = {threads}\n"
        f"NAME, SIDE, STEPS, WARMUP, MALLOPT = {name!r}, {side!r}, {steps}, {warmup}, {mallopt}\n"
        f"SETTLE = {SETTLE}\n"
    )
    return _run_child(preamble, MODEL_CHILD, threads, f"the {name} {side}")


def measure_models(
    names: list[str] | None = None,
    steps: int = 20,
    warmup: int = 0,
    mallopt: bool = True,
    threads: int = 1,
) -> dict[str, dict[str, tuple]]:
    """Print and return, by workload, (autogradcli, torch) by key: "import", "built", "peak",
    "loop", "steady" (MiB: RSS after the imports, after the build, VmHWM, VmHWM minus the RSS
    before the first step, and the peak above the RSS after ``SETTLE`` steps over the steps after
    them) and "ratio" (the peak and loop ratios ours/torch)."""
    import numpy as np
    from bench_models import WORKLOADS

    as_installed()
    out = {}
    print(f"Peak memory of the realistic steps ({warmup} + {steps} steps, {threads} thread(s), "
          f"fresh process per library; mallopt {mallopt}):")  # fmt: skip
    for name in names or list(WORKLOADS):
        ours, ref = (
            model_child(name, side, steps, warmup, mallopt, threads) for side in ("ours", "torch")
        )
        if not np.allclose(ours["losses"], ref["losses"], rtol=2e-4, atol=1e-5):
            raise AssertionError(f"{name}: losses {ours['losses']} != torch {ref['losses']}")
        rows = {
            "import": (ours["after_import"] / MIB, ref["after_import"] / MIB),
            "built": (ours["before_loop"] / MIB, ref["before_loop"] / MIB),
            "peak": (ours["peak"] / MIB, ref["peak"] / MIB),
            "loop": ((ours["peak"] - ours["before_loop"]) / MIB,
                     (ref["peak"] - ref["before_loop"]) / MIB),
            "steady": ((ours["steady_peak"] - ours["settled"]) / MIB,
                       (ref["steady_peak"] - ref["settled"]) / MIB),
        }  # fmt: skip
        rows["ratio"] = tuple(rows[k][0] / rows[k][1] for k in ("peak", "loop"))
        out[name] = rows
        print(f"  {name}:")
        for key, label in (("import", "RSS after imports"), ("built", "RSS after build")):
            a, b = rows[key]
            print(f"    {label:19s} autogradcli {a:7.1f} MiB   torch {b:7.1f} MiB")
        for i, (key, label) in enumerate((("peak", "peak RSS"), ("loop", "step loop's own"))):
            a, b = rows[key]
            print(f"    {label:19s} autogradcli {a:7.1f} MiB   torch {b:7.1f} MiB   "
                  f"ratio {rows['ratio'][i]:.2f}x")  # fmt: skip
        a, b = rows["steady"]  # what stays resident between steps decides it: no ratio
        print(f"    {'growth after step ' + str(SETTLE):19s} autogradcli {a:7.1f} MiB   "
              f"torch {b:7.1f} MiB")  # fmt: skip
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, help="default 200 (MLP), 20 (--models)")
    ap.add_argument("--warmup", type=int, help="default 20 (MLP), 0 (--models)")
    ap.add_argument("--no-mallopt", action="store_true")
    ap.add_argument("--threads", type=int, default=1, help="--models only: threads per side")
    ap.add_argument(
        "--models", nargs="*", help="issue 19's workloads against torch instead (default: all)"
    )
    args = ap.parse_args()
    models = args.models is not None
    steps = args.steps if args.steps is not None else (20 if models else 200)
    warmup = args.warmup if args.warmup is not None else (0 if models else 20)
    if models:
        measure_models(args.models, steps, warmup, not args.no_mallopt, args.threads)
    else:
        measure(steps, warmup, not args.no_mallopt)


if __name__ == "__main__":
    main()
