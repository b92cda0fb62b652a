"""Training-step benchmark of the newer layers against PyTorch, side by side in one process.

    python bench/bench_layers.py [--steps 30] [--warmup 5] [--threads 1] [--only lm|gan]

(a) lm: the PyTorch Transformer tutorial's model shrunk (Embedding 200x64, 2 post-norm
TransformerEncoderLayers, 2 heads, feed-forward 128, causal mask, Linear to 200), sequence 35,
batch 16, cross-entropy, Adam; (b) gan: a DCGAN-style generator (ConvTranspose2d 32->64 4x4,
BatchNorm, ReLU, ConvTranspose2d 64->32 s2, BatchNorm, ReLU, ConvTranspose2d 32->1 s2, Tanh)
from z (64, 32, 1, 1) to 16x16 images, mean-squared error, Adam. Dropout is 0 so both libraries
compute the same thing from identical weights; their steps alternate ABBA, and the medians,
their ratio and the median of the paired ratios are printed (see bench_nn.py).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_nn import time_pair, tune_malloc


def build(lib: Any, kind: str) -> Any:
    nn = lib.nn
    if kind == "lm":

        class LM(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.embedding = nn.Embedding(200, 64)
                layer = nn.TransformerEncoderLayer(64, 2, 128, dropout=0.0)
                self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
                self.linear = nn.Linear(64, 200)

            def forward(self, src: Any) -> Any:
                mask = nn.Transformer.generate_square_subsequent_mask(src.shape[0])
                return self.linear(self.encoder(self.embedding(src) * 8.0, mask))

        return LM()
    return nn.Sequential(
        nn.ConvTranspose2d(32, 64, 4, 1, 0, bias=False),
        nn.BatchNorm2d(64),
        nn.ReLU(),
        nn.ConvTranspose2d(64, 32, 4, 2, 1, bias=False),
        nn.BatchNorm2d(32),
        nn.ReLU(),
        nn.ConvTranspose2d(32, 1, 4, 2, 1, bias=False),
        nn.Tanh(),
    )


def make_step(lib: Any, model: Any, kind: str, x: Any, y: Any) -> Any:
    F = lib.nn.functional
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)

    def step() -> Any:
        opt.zero_grad()
        out = model(x)
        if kind == "lm":
            loss = F.cross_entropy(out.reshape(-1, 200), y.reshape(-1))
        else:
            loss = F.mse_loss(out, y)
        loss.backward()
        opt.step()
        return loss

    return step


def run(kind: str, steps: int, warmup: int) -> tuple[float, float, str]:
    import torch

    import autogradcli as ag

    rng = np.random.default_rng(0)
    if kind == "lm":
        xs = rng.integers(0, 200, (35, 16))
        ys = rng.integers(0, 200, (35, 16))
    else:
        xs = rng.standard_normal((64, 32, 1, 1)).astype("float32")
        ys = np.tanh(rng.standard_normal((64, 1, 16, 16))).astype("float32")
    torch.manual_seed(0)
    theirs = build(torch, kind)
    ours = build(ag, kind)
    ours.load_state_dict({k: ag.tensor(v.numpy().copy()) for k, v in theirs.state_dict().items()})
    t_step = make_step(torch, theirs, kind, torch.tensor(xs), torch.tensor(ys))
    a_step = make_step(ag, ours, kind, ag.tensor(xs), ag.tensor(ys))
    return time_pair(t_step, a_step, steps, warmup)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--only", choices=["lm", "gan"])
    args = ap.parse_args()
    tuned = tune_malloc()

    from bench_floors import thread_count

    with thread_count(args.threads) as note:
        print(f"{note}; mallopt thresholds raised: {tuned}")
        for kind in ("lm", "gan"):
            if args.only and kind != args.only:
                continue
            med_t, med_a, note = run(kind, args.steps, args.warmup)
            print(
                f"{kind.upper():4s} step: torch {med_t * 1e3:7.3f} ms   ours {med_a * 1e3:7.3f} ms"
                f"   ratio ours/torch {med_a / med_t:5.2f}x   ({note})"
            )


if __name__ == "__main__":
    main()
