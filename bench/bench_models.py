"""Realistic training steps, the same model code on autogradcli and PyTorch (issue 19).

    python bench/bench_models.py                     # every workload, one thread, 5 rounds
    python bench/bench_models.py gpt_mini --rounds 9 # one workload
    python bench/bench_models.py gpt_mini --profile  # cProfile of our step, top functions
    python bench/bench_models.py --before /tmp/old   # also an older tree's package, paired

Each workload is a function ``(lib) -> step`` in ``WORKLOADS``: it builds its model through the
PyTorch API of ``lib`` (``torch`` or ``autogradcli``) and returns a zero-argument training step.
Weights and data come from one numpy generator, so both libraries start identical; ``check``
runs 3 steps on each and compares the losses before anything is timed. Timing alternates the
libraries in one process (bench_floors.rotate) and reports medians and the paired ratio.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

Step = Callable[[], float]


def _tensor(lib: Any, arr: np.ndarray) -> Any:
    """A copy of ``arr`` as a tensor of ``lib``."""
    return lib.tensor(np.ascontiguousarray(arr))


def _load_weights(lib: Any, model: Any, seed: int) -> None:
    """Fill every parameter from one numpy generator (same values on both libraries)."""
    rng = np.random.default_rng(seed)
    with lib.no_grad():
        for name, p in model.named_parameters():
            shape = tuple(p.shape)
            if name.endswith("bias"):
                arr = np.zeros(shape, np.float32)
            elif "ln" in name and name.endswith("weight"):
                arr = np.ones(shape, np.float32)
            else:
                arr = (rng.standard_normal(shape) * 0.02).astype(np.float32)
            p.copy_(_tensor(lib, arr))


# --------------------------------------------------------------------------- GPT-mini
GPT = {"vocab": 65, "block": 64, "width": 128, "heads": 4, "layers": 4, "batch": 16}


def gpt_model(lib: Any, vocab: int, block: int, width: int, heads: int, layers: int) -> Any:
    """nanoGPT's model on ``lib``: pre-LN blocks, causal masked_fill attention, GELU MLP, tied
    head."""
    nn, F = lib.nn, lib.nn.functional

    class Attention(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.c_attn = nn.Linear(width, 3 * width)
            self.c_proj = nn.Linear(width, width)
            mask = lib.tril(lib.ones(block, block)).view(1, 1, block, block)
            self.register_buffer("bias", mask)

        def forward(self, x: Any) -> Any:
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(width, dim=2)
            q = q.view(B, T, heads, C // heads).transpose(1, 2)
            k = k.view(B, T, heads, C // heads).transpose(1, 2)
            v = v.view(B, T, heads, C // heads).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / (k.size(-1) ** 0.5))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            y = att @ v
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            return self.c_proj(y)

    class MLP(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.c_fc = nn.Linear(width, 4 * width)
            self.gelu = nn.GELU()
            self.c_proj = nn.Linear(4 * width, width)

        def forward(self, x: Any) -> Any:
            return self.c_proj(self.gelu(self.c_fc(x)))

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln_1 = nn.LayerNorm(width)
            self.attn = Attention()
            self.ln_2 = nn.LayerNorm(width)
            self.mlp = MLP()

        def forward(self, x: Any) -> Any:
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPTMini(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.wte = nn.Embedding(vocab, width)
            self.wpe = nn.Embedding(block, width)
            self.h = nn.ModuleList([Block() for _ in range(layers)])
            self.ln_f = nn.LayerNorm(width)
            self.lm_head = nn.Linear(width, vocab, bias=False)
            self.wte.weight = self.lm_head.weight  # tied

        def forward(self, idx: Any, targets: Any) -> Any:
            T = idx.size(1)
            pos = lib.arange(0, T, dtype=lib.long)
            x = self.wte(idx) + self.wpe(pos)
            for blk in self.h:
                x = blk(x)
            logits = self.lm_head(self.ln_f(x))
            return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))

    return GPTMini()


def gpt_mini(lib: Any) -> Step:
    """GPT-mini training step: 4 layers, 4 heads, 128 wide, 16x64 chars, AdamW, clip 1.0."""
    c = GPT
    model = gpt_model(lib, c["vocab"], c["block"], c["width"], c["heads"], c["layers"])
    _load_weights(lib, model, seed=0)
    rng = np.random.default_rng(1)
    idx = _tensor(lib, rng.integers(0, c["vocab"], (c["batch"], c["block"])).astype(np.int64))
    tgt = _tensor(lib, rng.integers(0, c["vocab"], (c["batch"], c["block"])).astype(np.int64))
    opt = lib.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.1)

    def step() -> float:
        opt.zero_grad(set_to_none=True)
        loss = model(idx, tgt)
        loss.backward()
        lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return float(loss.item())

    return step


# Each engineer adds one entry: name -> (lib) -> step.
WORKLOADS: dict[str, Callable[[Any], Step]] = {"gpt_mini": gpt_mini}


def check(name: str, libs: dict[str, Any], steps: int = 3, rtol: float = 2e-4) -> None:
    """Run ``steps`` steps of a workload on fresh models of each library; the losses must agree."""
    losses: dict[str, list[float]] = {}
    for k, lib in libs.items():
        step = WORKLOADS[name](lib)
        losses[k] = [step() for _ in range(steps)]
    ref = losses["torch"]
    for k, got in losses.items():
        if not np.allclose(got, ref, rtol=rtol, atol=1e-5):
            raise AssertionError(f"{name}: {k} losses {got} != torch {ref}")
    print(f"{name}: losses after {steps} steps agree: {ref}", flush=True)


def _profile(name: str, lib: Any, steps: int) -> None:
    import cProfile
    import pstats

    step = WORKLOADS[name](lib)
    for _ in range(2):
        step()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(steps):
        step()
    prof.disable()
    pstats.Stats(prof).sort_stats("tottime").print_stats(25)


def measure(name: str, threads: int = 1, rounds: int = 5) -> dict[str, float]:
    """One workload's medians (ms) and paired ratio ``ours/torch`` after the loss check, for
    report.py: ``{"autogradcli": ms, "torch": ms, "ratio": ours/torch}``."""
    import torch
    from bench_floors import paired, rotate
    from bench_nn import tune_malloc
    from threadpoolctl import threadpool_limits

    import autogradcli

    tune_malloc()
    torch.set_num_threads(threads)
    autogradcli.set_num_threads(threads)
    libs = {"autogradcli": autogradcli, "torch": torch}
    with threadpool_limits(limits=threads):
        check(name, libs)
        times = rotate({k: WORKLOADS[name](lib) for k, lib in libs.items()}, rounds, warmup=2)
    out = {k: statistics.median(v) * 1e3 for k, v in times.items()}
    out["ratio"] = paired(times, "autogradcli", "torch")
    return out


def _before_package(tree: str) -> Any:
    """An older tree's ``autogradcli`` imported as ``autogradcli_before`` (relative imports)."""
    import shutil
    import tempfile

    tmp = Path(tempfile.mkdtemp())
    shutil.copytree(Path(tree) / "autogradcli", tmp / "autogradcli_before")
    sys.path.insert(0, str(tmp))
    import autogradcli_before

    return autogradcli_before


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("names", nargs="*", default=list(WORKLOADS))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--profile", action="store_true", help="cProfile our step instead")
    ap.add_argument("--before", help="an older tree (git archive): its package timed too")
    args = ap.parse_args()
    import torch
    from bench_floors import paired, rotate
    from bench_nn import tune_malloc
    from threadpoolctl import threadpool_limits

    import autogradcli

    tune_malloc()  # freed big blocks stay in the heap, as bench_nn's steps run
    torch.set_num_threads(args.threads)
    autogradcli.set_num_threads(args.threads)
    libs = {"autogradcli": autogradcli, "torch": torch}
    if args.before:
        libs["before"] = _before_package(args.before)
        libs["before"].set_num_threads(args.threads)
    with threadpool_limits(limits=args.threads):
        for name in args.names:
            if args.profile:
                _profile(name, autogradcli, args.rounds)
                continue
            check(name, libs)
            fns = {k: WORKLOADS[name](lib) for k, lib in libs.items()}
            times = rotate(fns, args.rounds, warmup=2)
            med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
            line = "  ".join(f"{k} {v:.1f} ms" for k, v in med.items())
            line += f"  | paired ours/torch {paired(times, 'autogradcli', 'torch'):.3f}"
            if args.before:
                line += f"  before/torch {paired(times, 'before', 'torch'):.3f}"
                line += f"  ours/before {paired(times, 'autogradcli', 'before'):.3f}"
            print(f"{name}: {line}", flush=True)


if __name__ == "__main__":
    main()
