"""The optimizer step alone over the MLP's 535k parameters: an older autogradcli, this one and
PyTorch side by side in one process, one thread, rotating order per round, medians of ratios.

    git archive <commit> autogradcli | tar -x -C /tmp/before
    python bench/bench_optim.py /tmp/before [--rounds 200]

Without ``before`` only this tree and torch are timed. The gradients are fixed arrays set once,
so a round is exactly one ``opt.step()`` per library (zero_grad and backward are not timed).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

SHAPES = [(512, 784), (512,), (256, 512), (256,), (10, 256), (10,)]  # the MLP 784-512-256-10
CASES = {
    "SGD momentum 0.9": ("SGD", {"lr": 0.01, "momentum": 0.9}),
    "SGD nesterov + wd": (
        "SGD",
        {"lr": 0.01, "momentum": 0.9, "nesterov": True, "weight_decay": 1e-4},
    ),
    "Adam": ("Adam", {"lr": 1e-3}),
    "AdamW amsgrad": ("AdamW", {"lr": 1e-3, "amsgrad": True}),
}


def _step(lib: Any, name: str, kw: dict[str, Any]) -> Any:
    rng = np.random.default_rng(0)
    params = []
    for shape in SHAPES:
        p = lib.tensor(rng.standard_normal(shape).astype("float32") * 0.05, requires_grad=True)
        p.grad = lib.tensor(rng.standard_normal(shape).astype("float32") * 1e-3)
        params.append(p)
    opt = getattr(lib.optim, name)(params, **kw)
    return opt.step


def _compare(label: str, fns: dict[str, Any], rounds: int) -> None:
    from bench_floors import paired, rotate

    times = rotate(fns, rounds, warmup=10)
    med = " ".join(f"{k} {statistics.median(v) * 1e3:7.3f} ms" for k, v in times.items())
    pairs = [("after", "torch")] + ([("after", "before")] if "before" in fns else [])
    ratios = "  ".join(f"{a}/{b} {paired(times, a, b):.3f}" for a, b in pairs)
    print(f"{label:20s} {med} | paired: {ratios}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("before", nargs="?", help="an export of the older tree (optional)")
    ap.add_argument("--rounds", type=int, default=200)
    args = ap.parse_args()
    import torch
    from threadpoolctl import threadpool_limits

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    import autogradcli

    libs: dict[str, Any] = {"after": autogradcli, "torch": torch}
    tmp = None
    if args.before:
        tmp = Path(tempfile.mkdtemp())
        shutil.copytree(Path(args.before) / "autogradcli", tmp / "autogradcli_before")
        sys.path.insert(0, str(tmp))
        import autogradcli_before

        libs = {"before": autogradcli_before, **libs}
    torch.set_num_threads(1)
    print(f"{sum(int(np.prod(s)) for s in SHAPES)} parameters in {len(SHAPES)} tensors, float32")
    with threadpool_limits(limits=1):
        for label, (name, kw) in CASES.items():
            _compare(label, {k: _step(v, name, kw) for k, v in libs.items()}, args.rounds)
    if tmp is not None:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
