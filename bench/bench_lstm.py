"""LSTM language-model training step, autogradcli beside PyTorch in one process.

    python bench/bench_lstm.py [--steps 30] [--warmup 5] [--threads 1] [--profile]

The word-language-model example's shape: Embedding(1000, 64), LSTM 64->256 with 2 layers,
Linear(256, 1000); 35 time steps x batch 32 tokens, cross-entropy, SGD (lr 0.1) and
``clip_grad_norm_(0.25)``. The same code (``lstm_step``, taking the library module) runs on both
engines from identical weights copied through numpy; three steps' losses are checked equal before
timing, then the steps alternate (bench_floors.rotate) with the step's matrix products alone on
numpy arrays (``gemm_floor``), and the medians and their ratios print.
``--profile`` prints cProfile's top functions of autogradcli's step instead.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

VOCAB, EMB, HIDDEN, LAYERS, SEQ, BATCH = 1000, 64, 256, 2, 35, 32


def build(lib: Any) -> Any:
    """The model: embedding, stacked LSTM, decoder."""
    nn = lib.nn

    class LM(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.emb = nn.Embedding(VOCAB, EMB)
            self.rnn = nn.LSTM(EMB, HIDDEN, LAYERS)
            self.dec = nn.Linear(HIDDEN, VOCAB)

        def forward(self, x: Any) -> Any:
            out, _ = self.rnn(self.emb(x))
            return self.dec(out)

    return LM()


def lstm_step(lib: Any, seed: int = 0) -> Any:
    """``lib``'s training step on torch's initial weights (seed ``seed``) and fixed tokens."""
    import torch

    rng = np.random.default_rng(seed)
    tokens = rng.integers(0, VOCAB, (SEQ + 1, BATCH))
    torch.manual_seed(seed)
    model = ref = build(torch)
    if lib is not torch:
        model = build(lib)
        for p, tp in zip(model.parameters(), ref.parameters()):
            p.data = lib.tensor(tp.detach().numpy().copy())
    x, y = lib.tensor(tokens[:-1]), lib.tensor(tokens[1:].reshape(-1))
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    F = lib.nn.functional

    def step() -> Any:
        opt.zero_grad()
        loss = F.cross_entropy(model(x).reshape(-1, VOCAB), y)
        loss.backward()
        lib.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        opt.step()
        return loss

    return step


def gemm_floor() -> Any:
    """The step's matrix products alone, on numpy arrays (float32): per layer the input
    projection, the 35 hidden products forward and backward, dx, dW_ih and dW_hh; the decoder's
    three. What no numpy engine can go below."""
    rng = np.random.default_rng(0)
    LN, G = SEQ * BATCH, 4 * HIDDEN

    def mk(*shape: int) -> Any:
        return rng.standard_normal(shape).astype("float32")

    pairs = []
    for inp in (EMB, HIDDEN):
        w_ih, w_hh, x, d = mk(G, inp), mk(G, HIDDEN), mk(LN, inp), mk(LN, G)
        h, dg = mk(HIDDEN, BATCH), mk(G, BATCH)  # feature-major, as ops/recurrent_cells.py
        pairs += [(x, w_ih.T), (d, w_ih), (d.T, x), (d.T, mk(LN, HIDDEN))]
        pairs += [(w_hh, h), (w_hh.T, dg)] * SEQ
    hid, w, dy = mk(LN, HIDDEN), mk(VOCAB, HIDDEN), mk(LN, VOCAB)
    pairs += [(hid, w.T), (dy, w), (dy.T, hid)]

    def run() -> None:
        for a, b in pairs:
            np.matmul(a, b)

    return run


def check_losses(steps: int = 3) -> list[tuple[float, float]]:
    """Both engines' losses over ``steps`` steps from the same start; raises if they differ."""
    import torch

    import autogradcli as ag

    t, a = lstm_step(torch), lstm_step(ag)
    pairs = [(float(t().item()), float(a().item())) for _ in range(steps)]
    for lt, la in pairs:
        if abs(lt - la) > 1e-4 * max(1.0, abs(lt)):
            raise AssertionError(f"losses differ: {pairs}")
    return pairs


def measure(steps: int = 30, warmup: int = 5, threads: int = 1) -> float:
    """Print and return the median ratio ours/torch of the step."""
    import torch
    from bench_floors import paired, rotate, thread_count
    from bench_nn import tune_malloc

    import autogradcli as ag

    tune_malloc()
    with thread_count(threads) as note:
        print(note)
        print("losses (torch, ours) over 3 steps:", check_losses())
        fns = {"torch": lstm_step(torch), "ours": lstm_step(ag), "floor": gemm_floor()}
        times = rotate(fns, steps, warmup)
    med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
    print(
        f"LSTM LM step: torch {med['torch']:7.2f} ms   ours {med['ours']:7.2f} ms   "
        f"GEMM floor {med['floor']:7.2f} ms   ratio ours/torch {med['ours'] / med['torch']:5.2f}x "
        f"(median of paired {paired(times, 'ours', 'torch'):.2f}x; ours/floor "
        f"{paired(times, 'ours', 'floor'):.2f}x, floor/torch {paired(times, 'floor', 'torch'):.2f}x)"
    )
    med_t, med_a = med["torch"], med["ours"]
    return med_a / med_t


def profile(steps: int = 10) -> None:
    """cProfile of autogradcli's step as a table: each Function's forward/backward and the
    optimizer calls, cumulative ms per step and share of the step (one thread)."""
    import cProfile
    import pstats
    import time

    from bench_floors import thread_count

    import autogradcli as ag

    with thread_count(1):
        step = lstm_step(ag)
        step()
        pr = cProfile.Profile()
        t0 = time.perf_counter()
        pr.enable()
        for _ in range(steps):
            step()
        pr.disable()
        total = (time.perf_counter() - t0) / steps
    names = ("forward", "backward", "_backward_arrays", "clip_grad_norm_", "step", "zero_grad")
    rows = []
    for (path, line, func), (_, _, _, cum, _) in pstats.Stats(pr).stats.items():  # type: ignore[attr-defined]
        if "autogradcli" in path and func in names and "autograd/" not in path:
            where = path.split("autogradcli/")[-1]
            rows.append((cum / steps, f"{where}:{line} {func}"))
    print(f"| autogradcli step: {total * 1e3:.1f} ms (under cProfile) | ms/step | share |")
    print("|---|---|---|")
    for ms, name in sorted(rows, reverse=True)[:16]:
        print(f"| `{name}` | {ms * 1e3:.1f} | {ms / total:.0%} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    if args.profile:
        profile()
    else:
        measure(args.steps, args.warmup, args.threads)


if __name__ == "__main__":
    main()
