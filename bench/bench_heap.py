"""``agrad train``'s malloc thresholds (``backend/heap.py``) on the realistic steps: our step alone
in fresh processes with and without them, alternating, medians (issue 19).

    python bench/bench_heap.py                   # gpt_mini, lstm_lm, resnet; 2 pairs of runs
    python bench/bench_heap.py resnet --pairs 3  # one workload

Each process builds one workload of ``bench_models`` (one thread), runs 3 warm-up steps, then
times 15 and counts the minor page faults they cost (``getrusage``). No torch in the process:
with torch's steps interleaved, as in ``bench_models``, far fewer faults happen.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
_CHILD = """
import resource, sys, time
sys.path[:0] = [{bench!r}, {root!r}]
import autogradcli, bench_models
from autogradcli.backend.heap import keep_freed_blocks
autogradcli.set_num_threads(1)
if sys.argv[1] == "on":
    keep_freed_blocks()
step = bench_models.WORKLOADS[sys.argv[2]](autogradcli)
for _ in range(3):
    step()
f0, times = resource.getrusage(resource.RUSAGE_SELF).ru_minflt, []
for _ in range(15):
    t = time.perf_counter(); step(); times.append(time.perf_counter() - t)
faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0) / 15
print(sorted(times)[7] * 1e3, faults)
"""


def run(mode: str, name: str) -> tuple[float, float]:
    """(median ms, faults a step) of one fresh process."""
    code = _CHILD.format(bench=str(HERE), root=str(HERE.parent))
    out = subprocess.run([sys.executable, "-c", code, mode, name], capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(out.stderr)
    ms, faults = out.stdout.split()
    return float(ms), float(faults)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("names", nargs="*", default=["gpt_mini", "lstm_lm", "resnet"])
    ap.add_argument("--pairs", type=int, default=2, help="off/on process pairs per workload")
    args = ap.parse_args()
    print("| step | without: ms, faults a step | with: ms, faults a step | with / without |")
    print("|---|---|---|---|")
    for name in args.names:
        res: dict[str, list[tuple[float, float]]] = {"off": [], "on": []}
        for _ in range(args.pairs):
            for mode in ("off", "on"):
                res[mode].append(run(mode, name))
        med = {m: (statistics.median(r[0] for r in v), statistics.median(r[1] for r in v))
               for m, v in res.items()}  # fmt: skip
        ratio = med["on"][0] / med["off"][0]
        print(f"| {name} | {med['off'][0]:.1f}, {med['off'][1]:.0f} | "
              f"{med['on'][0]:.1f}, {med['on'][1]:.0f} | {ratio:.2f} |")  # fmt: skip


if __name__ == "__main__":
    main()
