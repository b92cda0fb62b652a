"""Realistic training steps, the same model code on autogradcli and PyTorch (issue 19).

    python bench/bench_models.py                     # every workload, one thread, 5 rounds
    python bench/bench_models.py gpt_mini --rounds 9 # one workload (gpt_mini, lstm_lm, resnet)
    python bench/bench_models.py resnet --threads 2  # torch, numpy's BLAS and ours on 2 threads
    python bench/bench_models.py lstm_lm --profile   # cProfile of our step, top functions
    python bench/bench_models.py --before /tmp/old   # also an older tree's package, paired
    python bench/bench_models.py --device cuda       # on the GPU beside torch CUDA (no floors)

Each workload is a function ``(lib) -> step`` in ``WORKLOADS``: it builds its model through the
PyTorch API of ``lib`` (``torch`` or ``autogradcli``) and returns a zero-argument training step.
Weights and data come from one numpy generator, so both libraries start identical; ``check``
runs 3 steps on each and compares the losses before anything is timed. Timing alternates the
libraries in one process (bench_floors.rotate) and reports medians and the paired ratio.
A workload in ``FLOORS`` also has its step's matrix products alone on numpy arrays (the GEMM
floor no numpy engine goes below), timed in the same rotation and reported against torch.
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
DEVICE = "cpu"  # where the workloads' models and data live (--device)


def _tensor(lib: Any, arr: np.ndarray, device: str = "cpu") -> Any:
    """A copy of ``arr`` as a tensor of ``lib`` on ``device``."""
    return lib.tensor(np.ascontiguousarray(arr), device=device)


def _data(lib: Any, arr: np.ndarray) -> Any:
    """A workload's input or target: ``arr`` on the benchmark's device."""
    return _tensor(lib, arr, DEVICE)


def _load_weights(lib: Any, model: Any, seed: int, scale: float = 0.02) -> None:
    """Fill every parameter from one numpy generator (same values on both libraries): biases 0,
    norm scales 1, the rest normal with standard deviation ``scale``."""
    rng = np.random.default_rng(seed)
    with lib.no_grad():
        for name, p in model.named_parameters():
            shape = tuple(p.shape)
            if name.endswith("bias"):
                arr = np.zeros(shape, np.float32)
            elif name.endswith("weight") and ("ln" in name or len(shape) == 1):  # norm scales
                arr = np.ones(shape, np.float32)
            else:
                arr = (rng.standard_normal(shape) * scale).astype(np.float32)
            p.copy_(_tensor(lib, arr))
    model.to(DEVICE)


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
            pos = lib.arange(0, T, dtype=lib.long, device=idx.device)
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
    idx = _data(lib, rng.integers(0, c["vocab"], (c["batch"], c["block"])).astype(np.int64))
    tgt = _data(lib, rng.integers(0, c["vocab"], (c["batch"], c["block"])).astype(np.int64))
    opt = lib.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.1)

    def step() -> float:
        opt.zero_grad(set_to_none=True)
        loss = model(idx, tgt)
        loss.backward()
        lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return float(loss.item())

    return step


# --------------------------------------------------------------------------- LSTM LM
LSTM = {"vocab": 1000, "emb": 64, "hidden": 256, "layers": 2, "seq": 35, "batch": 32}


def lstm_model(lib: Any, vocab: int, emb: int, hidden: int, layers: int) -> Any:
    """The word-language-model example's model on ``lib``: embedding, stacked LSTM, decoder."""
    nn = lib.nn

    class LM(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.emb = nn.Embedding(vocab, emb)
            self.rnn = nn.LSTM(emb, hidden, layers)
            self.dec = nn.Linear(hidden, vocab)

        def forward(self, x: Any) -> Any:
            out, _ = self.rnn(self.emb(x))
            return self.dec(out)

    return LM()


def lstm_lm(lib: Any) -> Step:
    """LSTM LM training step: Embedding 64, LSTM 2x256, vocab 1000, 35x32 tokens, cross-entropy,
    SGD (lr 0.1), clip_grad_norm_(0.25)."""
    c = LSTM
    model = lstm_model(lib, c["vocab"], c["emb"], c["hidden"], c["layers"])
    # at 0.02 the loss sits at ln(vocab) and moves 1e-4 a step (clip 0.25): too little to check
    _load_weights(lib, model, seed=0, scale=0.1)
    rng = np.random.default_rng(1)
    tokens = rng.integers(0, c["vocab"], (c["seq"] + 1, c["batch"])).astype(np.int64)
    x, y = _data(lib, tokens[:-1]), _data(lib, tokens[1:].reshape(-1))
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    F = lib.nn.functional

    def step() -> float:
        opt.zero_grad()
        loss = F.cross_entropy(model(x).reshape(-1, c["vocab"]), y)
        loss.backward()
        lib.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        opt.step()
        return float(loss.item())

    return step


def lstm_floor() -> Callable[[], None]:
    """The LSTM step's matrix products alone, on numpy float32 arrays: per layer the input
    projection, the 35 hidden products forward and backward, dx, dW_ih and dW_hh; the decoder's
    three."""
    c = LSTM
    rng = np.random.default_rng(0)
    rows, gates, hidden, batch = c["seq"] * c["batch"], 4 * c["hidden"], c["hidden"], c["batch"]

    def mk(*shape: int) -> np.ndarray:
        return rng.standard_normal(shape).astype(np.float32)

    pairs = []
    for inp in (c["emb"], hidden):
        w_ih, w_hh, x, d = mk(gates, inp), mk(gates, hidden), mk(rows, inp), mk(rows, gates)
        h, dg = mk(hidden, batch), mk(gates, batch)  # feature-major, as ops/recurrent_cells.py
        pairs += [(x, w_ih.T), (d, w_ih), (d.T, x), (d.T, mk(rows, hidden))]
        pairs += [(w_hh, h), (w_hh.T, dg)] * c["seq"]
    hid, w, dy = mk(rows, hidden), mk(c["vocab"], hidden), mk(rows, c["vocab"])
    pairs += [(hid, w.T), (dy, w), (dy.T, hid)]

    def run() -> None:
        for a, b in pairs:
            np.matmul(a, b)

    return run


# --------------------------------------------------------------------------- ResNet-ish
RESNET = {"width": 32, "size": 16, "batch": 64, "classes": 10, "blocks": 3}


def resnet_model(lib: Any, width: int, classes: int, blocks: int) -> Any:
    """Stem conv3x3(3->width)-BN-ReLU, residual blocks (conv3x3-BN-ReLU-conv3x3-BN, + identity,
    ReLU), global average pool, Linear(width->classes), on ``lib``."""
    nn = lib.nn

    class Block(nn.Module):
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
        def __init__(self) -> None:
            super().__init__()
            self.stem = nn.Conv2d(3, width, 3, padding=1, bias=False)
            self.bn = nn.BatchNorm2d(width)
            self.blocks = nn.Sequential(*[Block(width) for _ in range(blocks)])
            self.head = nn.Linear(width, classes)

        def forward(self, x: Any) -> Any:
            x = self.bn(self.stem(x)).relu()
            x = self.blocks(x)
            return self.head(x.mean((2, 3)))

    return Net()


def resnet(lib: Any) -> Step:
    """ResNet-ish training step: stem + 3 residual blocks, 32 channels, 16x16, batch 64,
    cross-entropy, SGD momentum 0.9."""
    c = RESNET
    model = resnet_model(lib, c["width"], c["classes"], c["blocks"])
    return _image_step(lib, model, c["batch"], c["size"], c["classes"])


def _image_step(lib: Any, model: Any, batch: int, size: int, classes: int) -> Step:
    """A classifier's training step on ``batch`` random RGB images of ``size``: its weights from
    seed 0, cross-entropy, SGD momentum 0.9."""
    _load_weights(lib, model, seed=0)
    rng = np.random.default_rng(1)
    xs = rng.standard_normal((batch, 3, size, size)).astype(np.float32)
    x, y = _data(lib, xs), _data(lib, rng.integers(0, classes, batch))
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    ce = lib.nn.functional.cross_entropy

    def step() -> float:
        opt.zero_grad()
        loss = ce(model(x), y)
        loss.backward()
        opt.step()
        return float(loss.item())

    return step


# --------------------------------------------------------------------------- CIFAR ResNet-20
RESNET20 = {"batch": 64, "size": 32, "classes": 10, "per_stage": 3}


def resnet20_model(lib: Any, classes: int, per_stage: int) -> Any:
    """He et al.'s CIFAR ResNet (6n+2 layers; n = ``per_stage``): conv3x3(3->16)-BN-ReLU, three
    stages of 16, 32 and 64 channels whose first block downsamples by a stride-2 conv with a
    1x1 stride-2 conv-BN shortcut, global average pool, Linear(64->classes), on ``lib``."""
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self, cin: int, cout: int, stride: int) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.short = nn.Sequential()
            if stride != 1 or cin != cout:
                self.short = nn.Sequential(
                    nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout)
                )

        def forward(self, x: Any) -> Any:
            out = self.bn1(self.conv1(x)).relu()
            out = self.bn2(self.conv2(out))
            return (out + self.short(x)).relu()

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.stem = nn.Conv2d(3, 16, 3, padding=1, bias=False)
            self.bn = nn.BatchNorm2d(16)
            blocks, cin = [], 16
            for cout, stride in ((16, 1), (32, 2), (64, 2)):
                for i in range(per_stage):
                    blocks.append(Block(cin, cout, stride if i == 0 else 1))
                    cin = cout
            self.blocks = nn.Sequential(*blocks)
            self.head = nn.Linear(64, classes)

        def forward(self, x: Any) -> Any:
            x = self.bn(self.stem(x)).relu()
            return self.head(self.blocks(x).mean((2, 3)))

    return Net()


def resnet20(lib: Any) -> Step:
    """CIFAR ResNet-20 training step: 32x32 RGB, batch 64, cross-entropy, SGD momentum 0.9."""
    c = RESNET20
    model = resnet20_model(lib, c["classes"], c["per_stage"])
    return _image_step(lib, model, c["batch"], c["size"], c["classes"])


def resnet_floor() -> Callable[[], None]:
    """The ResNet step's convolution matrix products alone (im2col shapes) on numpy float32
    arrays: forward, weight gradient and input gradient of each conv, the stem's input gradient
    excepted."""
    c = RESNET
    rng = np.random.default_rng(0)
    cols_n, width = c["batch"] * c["size"] * c["size"], c["width"]
    arrays = []
    for k, needs_x in [(3 * 9, False)] + [(width * 9, True)] * (2 * c["blocks"]):
        w = rng.standard_normal((width, k)).astype(np.float32)
        cols = rng.standard_normal((k, cols_n)).astype(np.float32)
        g = rng.standard_normal((width, cols_n)).astype(np.float32)
        arrays.append((w, cols, g, needs_x))

    def run() -> None:
        for w, cols, g, needs_x in arrays:
            np.matmul(w, cols)
            np.matmul(g, cols.T)
            if needs_x:
                np.matmul(w.T, g)

    return run


# One entry per workload: name -> (lib) -> step; and its GEMM floor where it has one.
WORKLOADS: dict[str, Callable[[Any], Step]] = {
    "gpt_mini": gpt_mini,
    "lstm_lm": lstm_lm,
    "resnet": resnet,
    "resnet20": resnet20,
}
FLOORS: dict[str, Callable[[], Callable[[], None]]] = {
    "lstm_lm": lstm_floor,
    "resnet": resnet_floor,
}


def check(name: str, libs: dict[str, Any], steps: int = 3, rtol: float = 2e-4) -> None:
    """Run ``steps`` steps of a workload on fresh models of each library; the losses must agree."""
    losses: dict[str, list[float]] = {}
    for k, lib in libs.items():
        step = WORKLOADS[name](lib)
        losses[k] = [step() for _ in range(steps)]
    ref = losses["torch"]
    for k, got in losses.items():
        # the losses, and each step's change of the loss (the gradient's effect, which is small
        # beside the loss itself), must agree
        same = np.allclose(got, ref, rtol=rtol, atol=1e-5)
        if not same or not np.allclose(np.diff(got), np.diff(ref), rtol=0.02, atol=2e-5):
            raise AssertionError(f"{name}: {k} losses {got} != torch {ref}")
    print(f"{name}: losses after {steps} steps agree: {ref}", flush=True)


def _profile(name: str, lib: Any, steps: int) -> None:
    """cProfile of ``steps`` of our step: the top functions by own time, then a table of each
    Function's forward/backward and the optimizer's calls, cumulative ms per step and share."""
    import cProfile
    import pstats
    import time

    step = WORKLOADS[name](lib)
    for _ in range(2):
        step()
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.enable()
    for _ in range(steps):
        step()
    prof.disable()
    total = (time.perf_counter() - t0) / steps
    stats = pstats.Stats(prof)
    stats.sort_stats("tottime").print_stats(25)
    names = ("forward", "backward", "_backward_arrays", "clip_grad_norm_", "step", "zero_grad")
    rows = []
    for (path, line, func), (_, _, _, cum, _) in stats.stats.items():  # type: ignore[attr-defined]
        if "autogradcli" in path and func in names and "autograd/" not in path:
            rows.append((cum / steps, f"{path.split('autogradcli/')[-1]}:{line} {func}"))
    print(f"| {name} step: {total * 1e3:.1f} ms (under cProfile) | ms/step | share |")
    print("|---|---|---|")
    for ms, where in sorted(rows, reverse=True)[:16]:
        print(f"| `{where}` | {ms * 1e3:.1f} | {ms / total:.0%} |")


def _time(name: str, libs: dict[str, Any], rounds: int) -> dict[str, list[float]]:
    """The loss check, then each library's step (and the workload's GEMM floor, as "floor")
    timed in one rotation: seconds per round by name."""
    check(name, libs)
    cands: dict[str, Callable[[], Any]] = {k: WORKLOADS[name](lib) for k, lib in libs.items()}
    if name in FLOORS and DEVICE == "cpu":  # numpy floors: for the CPU only
        cands["floor"] = FLOORS[name]()
    from bench_floors import rotate

    return rotate(cands, rounds, warmup=2)


def _summary(name: str, times: dict[str, list[float]]) -> dict[str, float]:
    """Medians (ms) by name and the paired ratios: "ratio" ours/torch, and where the workload
    has a floor "floor" (floor/torch) and "ours_floor" (ours/floor); one line printed."""
    from bench_floors import paired

    out = {k: statistics.median(v) * 1e3 for k, v in times.items()}
    out["ratio"] = paired(times, "autogradcli", "torch")
    line = "  ".join(f"{k} {v:.1f} ms" for k, v in out.items() if k != "ratio")
    line += f"  | paired ours/torch {out['ratio']:.3f}"
    if "floor" in times:
        out["floor_ratio"] = paired(times, "floor", "torch")
        out["ours_floor"] = paired(times, "autogradcli", "floor")
        line += f"  floor/torch {out['floor_ratio']:.3f}  ours/floor {out['ours_floor']:.3f}"
    if "before" in times:
        line += f"  before/torch {paired(times, 'before', 'torch'):.3f}"
        line += f"  ours/before {paired(times, 'autogradcli', 'before'):.3f}"
    print(f"{name}: {line}", flush=True)
    return out


def measure(name: str, threads: int = 1, rounds: int = 5) -> dict[str, float]:
    """One workload's medians (ms) and paired ratios after the loss check, for report.py:
    ``{"autogradcli": ms, "torch": ms, "ratio": ours/torch}``, plus ``"floor"`` (ms),
    ``"floor_ratio"`` (floor/torch) and ``"ours_floor"`` where the workload has a GEMM floor."""
    import torch
    from bench_floors import thread_count
    from bench_nn import tune_malloc

    import autogradcli

    tune_malloc()  # freed big blocks stay in the heap, as bench_nn's steps run
    with thread_count(threads) as note:
        print(f"{name} ({note}; {rounds} rounds)", flush=True)
        times = _time(name, {"autogradcli": autogradcli, "torch": torch}, rounds)
    return _summary(name, times)


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
    ap.add_argument("names", nargs="*", default=list(WORKLOADS), help=", ".join(WORKLOADS))
    ap.add_argument("--rounds", type=int, default=5, help="timed rounds (profile: steps)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--profile", action="store_true", help="cProfile our step instead")
    ap.add_argument("--before", help="an older tree (git archive): its package timed too")
    ap.add_argument("--device", default="cpu", help="cpu or cuda (torch CUDA with TF32 off)")
    args = ap.parse_args()
    unknown = [n for n in args.names if n not in WORKLOADS]
    if unknown:
        ap.error(f"unknown workload(s) {unknown}; choose from {list(WORKLOADS)}")
    import torch
    from bench_floors import thread_count
    from bench_nn import tune_malloc

    import autogradcli

    tune_malloc()  # freed big blocks stay in the heap, as bench_nn's steps run
    global DEVICE
    DEVICE = args.device
    if DEVICE != "cpu":  # both engines in full float32: cupy's products don't use TF32
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    libs = {"autogradcli": autogradcli, "torch": torch}
    if args.before:
        libs["before"] = _before_package(args.before)
        libs["before"].set_num_threads(args.threads)
    with thread_count(args.threads) as note:
        print(note, flush=True)
        for name in args.names:
            if args.profile:
                _profile(name, autogradcli, args.rounds)
            else:
                _summary(name, _time(name, libs, args.rounds))


if __name__ == "__main__":
    main()
