"""ResNet-ish training step of autogradcli against PyTorch, side by side in one process.

    python bench/bench_resnet.py [--steps 30] [--warmup 5] [--threads 1] [--profile] [--floor]

Stem conv3x3(3->32)-BN-ReLU, then 3 residual blocks (conv3x3-BN-ReLU-conv3x3-BN, + identity,
ReLU), 32 channels on 16x16, global average pool, Linear(32->10); batch 64, cross-entropy,
SGD momentum 0.9. The same code builds both models through the PyTorch API; autogradcli gets
torch's initial weights copied through numpy, and the losses must agree after 3 steps before
timing. Steps alternate (bench_floors.rotate); medians and the median of paired ratios printed.
``--floor`` adds a third contender: the step's convolution GEMMs alone on numpy (forward,
weight gradient and input gradient of each conv, the stem's input gradient excepted), the floor
of an im2col convolution on numpy's BLAS.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

WIDTH, SIZE, BATCH, CLASSES, BLOCKS = 32, 16, 64, 10, 3


def build(lib: Any) -> Any:
    """The ResNet-ish model written against ``lib``'s torch API."""
    nn = lib.nn

    class Block(nn.Module):
        """conv-BN-ReLU-conv-BN plus the identity, then ReLU."""

        def __init__(self, c: int) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(c)
            self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(c)

        def forward(self, x: Any) -> Any:
            out = self.bn1(self.conv1(x)).relu()
            out = self.bn2(self.conv2(out))
            return (out + x).relu()

    class Net(nn.Module):
        """Stem, residual blocks, global average pool, linear head."""

        def __init__(self) -> None:
            super().__init__()
            self.stem = nn.Conv2d(3, WIDTH, 3, padding=1, bias=False)
            self.bn = nn.BatchNorm2d(WIDTH)
            self.blocks = nn.Sequential(*[Block(WIDTH) for _ in range(BLOCKS)])
            self.head = nn.Linear(WIDTH, CLASSES)

        def forward(self, x: Any) -> Any:
            x = self.bn(self.stem(x)).relu()
            x = self.blocks(x)
            return self.head(x.mean((2, 3)))

    return Net()


def step_for(lib: Any) -> Any:
    """``lib``'s training step on the shared batch, from torch's seed-0 weights."""
    import torch

    rng = np.random.default_rng(0)
    xs = rng.standard_normal((BATCH, 3, SIZE, SIZE)).astype("float32")
    ys = rng.integers(0, CLASSES, BATCH)
    torch.manual_seed(0)
    model = ref = build(torch)
    if lib is not torch:
        model = build(lib)
        for p, tp in zip(model.parameters(), ref.parameters()):
            p.data = lib.tensor(tp.detach().numpy().copy())
    x, y = lib.tensor(xs), lib.tensor(ys)
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    ce = lib.nn.functional.cross_entropy

    def step() -> Any:
        opt.zero_grad()
        loss = ce(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return step


def gemm_floor() -> Any:
    """The step's convolution matrix products alone, on numpy arrays of the step's shapes."""
    rng = np.random.default_rng(0)
    cols_n = BATCH * SIZE * SIZE
    shapes = [(3 * 9, False)] + [(WIDTH * 9, True)] * (2 * BLOCKS)
    arrays = []
    for k, needs_x in shapes:
        w = rng.standard_normal((WIDTH, k)).astype("float32")
        cols = rng.standard_normal((k, cols_n)).astype("float32")
        g = rng.standard_normal((WIDTH, cols_n)).astype("float32")
        arrays.append((w, cols, g, needs_x))

    def step() -> None:
        for w, cols, g, needs_x in arrays:
            np.matmul(w, cols)
            np.matmul(g, cols.T)
            if needs_x:
                np.matmul(w.T, g)

    return step


def check_losses(t_step: Any, a_step: Any, steps: int = 3) -> float:
    """Run ``steps`` steps of each; raise unless the losses agree; return the last one."""
    for _ in range(steps):
        lt, la = float(t_step().item()), float(a_step().item())
        if abs(lt - la) > 1e-4 * max(1.0, abs(lt)):
            raise AssertionError(f"losses differ: torch {lt} ours {la}")
    return la


def profile(steps: int) -> None:
    """cProfile of autogradcli's step, the top functions by own time."""
    import cProfile
    import pstats

    import autogradcli as ag

    step = step_for(ag)
    for _ in range(3):
        step()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(steps):
        step()
    prof.disable()
    pstats.Stats(prof).sort_stats("tottime").print_stats(25)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--floor", action="store_true", help="also time the GEMMs alone")
    args = ap.parse_args()
    from bench_floors import thread_count
    from bench_nn import time_pair, tune_malloc

    tuned = tune_malloc()
    with thread_count(args.threads) as note:
        if args.profile:
            profile(args.steps)
            return
        import torch

        import autogradcli as ag

        t_step, a_step = step_for(torch), step_for(ag)
        loss = check_losses(t_step, a_step)
        print(f"{note}; mallopt {tuned}; losses equal after 3 steps ({loss:.5f})")
        if args.floor:
            report_floor(t_step, a_step, args.steps, args.warmup)
            return
        med_t, med_a, pair = time_pair(t_step, a_step, args.steps, args.warmup)
        print(
            f"RESNET step: torch {med_t * 1e3:7.3f} ms   ours {med_a * 1e3:7.3f} ms   "
            f"ratio {med_a / med_t:5.2f}x   ({pair})"
        )


def report_floor(t_step: Any, a_step: Any, steps: int, warmup: int) -> None:
    """torch's step, ours and the GEMM floor in rotation; medians and paired ratios."""
    import statistics

    from bench_floors import paired, rotate

    times = rotate({"torch": t_step, "ours": a_step, "floor": gemm_floor()}, steps, warmup)
    med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
    print(
        f"RESNET step: torch {med['torch']:.1f} ms, ours {med['ours']:.1f} ms, conv GEMMs alone "
        f"{med['floor']:.1f} ms; paired: ours/torch {paired(times, 'ours', 'torch'):.2f}, "
        f"floor/torch {paired(times, 'floor', 'torch'):.2f}, "
        f"ours/floor {paired(times, 'ours', 'floor'):.2f}"
    )


if __name__ == "__main__":
    main()
