"""An older autogradcli, this one and PyTorch side by side in one process, per workload.

    git archive <commit> | tar -x -C /tmp/before
    python bench/compare_versions.py /tmp/before [--rounds 200]

The older tree's ``autogradcli`` package is copied into a temporary folder as
``autogradcli_before`` (the package uses relative imports only, so both load together); each round
runs before, after and torch once in a rotating order, and the medians of the per-round ratios are
printed (robust to load that drifts over the run). Workloads: bench_nn.py's MLP and CNN steps, one
pass of bench_engine.py's 100-op chain, 20 iterations of its custom-Function fit; one thread.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("before", help="a checkout or export of the older tree")
    ap.add_argument("--rounds", type=int, default=200)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp())
    shutil.copytree(Path(args.before) / "autogradcli", tmp / "autogradcli_before")
    sys.path.insert(0, str(tmp))
    import autogradcli_before
    import torch
    from bench_engine import run_chain, run_fit
    from bench_nn import step_for, tune_malloc
    from threadpoolctl import threadpool_limits

    import autogradcli

    tune_malloc()
    torch.set_num_threads(1)
    libs = {"before": autogradcli_before, "after": autogradcli, "torch": torch}
    # one BLAS thread each, where it has set_num_threads
    for lib in (autogradcli_before, autogradcli):
        if hasattr(lib, "set_num_threads"):
            lib.set_num_threads(1)
    work = {
        "MLP step": {k: step_for(v, "mlp") for k, v in libs.items()},
        "CNN step": {k: step_for(v, "cnn") for k, v in libs.items()},
        "per-op chain (100 ops)": {k: (lambda v=v: run_chain(v, 1)) for k, v in libs.items()},
        "custom Function fit (20 it)": {k: (lambda v=v: run_fit(v, 20)) for k, v in libs.items()},
    }
    with threadpool_limits(limits=1):
        for wname, fns in work.items():
            _compare(wname, fns, args.rounds)
    shutil.rmtree(tmp, ignore_errors=True)


def _compare(wname: str, fns: dict[str, Any], rounds: int) -> None:
    from bench_floors import paired, rotate

    times = rotate(fns, rounds, warmup=10)
    med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
    print(
        f"{wname:28s} before {med['before']:8.3f} ms  after {med['after']:8.3f} ms  torch "
        f"{med['torch']:8.3f} ms | paired: before/torch {paired(times, 'before', 'torch'):.3f}  "
        f"after/torch {paired(times, 'after', 'torch'):.3f}  "
        f"after/before {paired(times, 'after', 'before'):.3f}",
        flush=True,
    )


if __name__ == "__main__":
    main()
