"""Training-step benchmark of autogradcli against PyTorch, side by side in one process.

    python bench/bench_nn.py [--steps 60] [--warmup 10] [--threads 1] [--no-mallopt] [--only mlp|cnn]

(a) MLP 784-512-256-10, batch 128; (b) CNN conv(1->8, 3x3, pad 1)-ReLU-maxpool 2-conv(8->16)-
ReLU-maxpool 2-linear(784->10), batch 64 on 28x28. Each step: zero_grad, forward, cross-entropy,
backward, SGD with momentum 0.9. Both libraries start from identical weights and see the same
batches; their steps alternate, ABBA, so load on the machine hits both alike; the medians, their
ratio ours/torch and the median of the per-pair ratios (robust to load drift) are printed. Both
run on ``--threads`` threads (bench_floors.thread_count: torch.set_num_threads for torch,
autogradcli.set_num_threads and threadpoolctl for numpy's BLAS); the counts in effect are printed.

glibc returns big freed blocks to the OS (mmap/trim thresholds), so every step's temporaries
would page-fault anew; ``mallopt`` raises the thresholds for the process (both libraries gain).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def tune_malloc() -> bool:
    """Keep freed big blocks in the heap (no per-step page faults), as ``agrad train`` does
    (``backend/heap.py``); False where not glibc. The module is loaded from its file, not
    through the package, so that a torch-only process (bench_memory's children) stays so."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "autogradcli" / "backend" / "heap.py"
    spec = importlib.util.spec_from_file_location("_agrad_heap", path)
    heap = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(heap)
    return heap.keep_freed_blocks()


def as_installed() -> None:
    """Compile the package's bytecode and let child processes write theirs (drop
    PYTHONDONTWRITEBYTECODE), as an installed package has it: where that variable is set, every
    child compiled autogradcli's modules from source (0.1 s, ~1.4 MiB of RSS at import) while
    torch's install came precompiled."""
    import compileall
    import os

    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    compileall.compile_dir(str(Path(__file__).resolve().parents[1] / "autogradcli"), quiet=1)


def build(lib: Any, kind: str) -> Any:
    nn = lib.nn
    if kind == "mlp":
        return nn.Sequential(
            nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 10)
        )
    return nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(784, 10),
    )


def _cross_entropy(ag: Any, logits: Any, target: Any) -> Any:
    """Fallback while nn.functional.cross_entropy is missing: mean NLL of log_softmax."""
    logp = ag.nn.functional.log_softmax(logits, 1)
    return -(logp[ag.arange(logits.shape[0]), target]).mean()


class _SGD:
    """Fallback while optim.SGD is missing: torch's SGD with momentum (dampening 0)."""

    def __init__(self, params: Any, lr: float, momentum: float) -> None:
        self.params, self.lr, self.momentum, self.buf = list(params), lr, momentum, {}

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    def step(self) -> None:
        for p in self.params:
            g = p.grad._data
            b = self.buf.get(id(p))
            if b is None:
                b = self.buf[id(p)] = g.copy()
            else:
                b *= self.momentum
                b += g
            p._data -= self.lr * b


def make_step(lib: Any, model: Any, x: Any, y: Any) -> Any:
    F = lib.nn.functional
    ce = getattr(F, "cross_entropy", None) or (lambda o, t: _cross_entropy(lib, o, t))
    sgd = getattr(getattr(lib, "optim", None), "SGD", None)
    opt = (sgd or _SGD)(model.parameters(), lr=0.01, momentum=0.9)

    def step() -> float:
        opt.zero_grad()
        loss = ce(model(x), y)
        loss.backward()
        opt.step()
        return loss

    step.uses = f"{'F.cross_entropy' if hasattr(F, 'cross_entropy') else 'local CE'}, " + (
        "optim.SGD" if sgd else "local SGD"
    )
    return step


def step_for(lib: Any, kind: str) -> Any:
    """``lib``'s training step of ``kind`` on the batch and the weights every library gets (torch's
    initialisation under seed 0, copied)."""
    import torch

    batch, shape = (128, (784,)) if kind == "mlp" else (64, (1, 28, 28))
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((batch, *shape)).astype("float32")
    ys = rng.integers(0, 10, batch)
    torch.manual_seed(0)
    model = ref = build(torch, kind)
    if lib is not torch:
        model = build(lib, kind)
        for p, tp in zip(model.parameters(), ref.parameters()):
            p.data = lib.tensor(tp.detach().numpy().copy())
    return make_step(lib, model, lib.tensor(xs), lib.tensor(ys))


def run(kind: str, steps: int, warmup: int) -> tuple[float, float, str]:
    import torch

    import autogradcli as ag

    t_step, a_step = step_for(torch, kind), step_for(ag, kind)
    med_t, med_a, note = time_pair(t_step, a_step, steps, warmup)
    return med_t, med_a, f"{note}; {a_step.uses}"


def time_pair(t_step: Any, a_step: Any, steps: int, warmup: int) -> tuple[float, float, str]:
    """Median seconds of torch's and autogradcli's steps, alternating (bench_floors.rotate), and a
    note: the median of the per-round ratios and both final losses."""
    from bench_floors import paired, rotate

    losses: dict[str, Any] = {}

    def keeping(name: str, step: Any) -> Any:
        def call() -> None:
            losses[name] = step()

        return call

    times = rotate(
        {"torch": keeping("torch", t_step), "ours": keeping("ours", a_step)}, steps, warmup
    )
    note = (
        f"median of paired ratios {paired(times, 'ours', 'torch'):.2f}x; final loss torch "
        f"{float(losses['torch'].item()):.5f} ours {float(losses['ours'].item()):.5f}"
    )
    return statistics.median(times["torch"]), statistics.median(times["ours"]), note


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--no-mallopt", action="store_true")
    ap.add_argument("--only", choices=["mlp", "cnn"])
    args = ap.parse_args()
    kinds = [args.only] if args.only else ["mlp", "cnn"]
    measure(kinds, args.steps, args.warmup, args.threads, not args.no_mallopt)


def measure(
    kinds: list[str], steps: int = 60, warmup: int = 10, threads: int = 1, mallopt: bool = True
) -> dict[str, float]:
    """Time each of ``kinds`` ("mlp", "cnn"), print them, return ratios ours/torch by kind."""
    tuned = tune_malloc() if mallopt else False

    from bench_floors import thread_count

    ratios = {}
    with thread_count(threads) as note:
        print(f"{note}; mallopt thresholds raised: {tuned}")
        for kind in kinds:
            med_t, med_a, note = run(kind, steps, warmup)
            ratios[kind] = med_a / med_t
            print(
                f"{kind.upper():4s} step: torch {med_t * 1e3:7.3f} ms   ours {med_a * 1e3:7.3f} ms"
                f"   ratio ours/torch {med_a / med_t:5.2f}x   ({note})"
            )
    return ratios


if __name__ == "__main__":
    main()
