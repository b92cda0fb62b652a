"""Baseline for bench_nn.py's MLP step: the same step written by hand in numpy (no autograd),
against PyTorch, alternating, on ``--threads`` threads (numpy's BLAS through threadpoolctl,
torch.set_num_threads; numpy's elementwise passes stay on one thread). It shows what any
numpy-based engine can reach on this machine: the matrix products dominate, so numpy's BLAS
against PyTorch's sets the floor.

    python bench/bench_numpy_mlp.py [--threads 1]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from threadpoolctl import threadpool_limits

BATCH, LR, MOMENTUM = 128, 0.01, 0.9
SHAPES = ((512, 784), (256, 512), (10, 256))


def numpy_step_factory(rng: np.random.Generator):
    x = rng.standard_normal((BATCH, 784)).astype(np.float32)
    y = rng.integers(0, 10, BATCH)
    weights = [rng.standard_normal(s).astype(np.float32) * 0.05 for s in SHAPES]
    biases = [np.zeros(s[0], np.float32) for s in SHAPES]
    params = weights + biases
    buffers = [np.zeros_like(p) for p in params]
    rows = np.arange(BATCH)

    def step() -> None:
        w0, w1, w2 = weights
        b0, b1, b2 = biases
        h1 = x @ w0.T + b0
        a1 = np.maximum(h1, 0)
        h2 = a1 @ w1.T + b1
        a2 = np.maximum(h2, 0)
        z = a2 @ w2.T + b2
        z -= z.max(1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(1, keepdims=True)
        p[rows, y] -= 1  # softmax cross-entropy gradient
        p /= BATCH
        ga2 = (p @ w2) * (h2 > 0)
        ga1 = (ga2 @ w1) * (h1 > 0)
        grads = [ga1.T @ x, ga2.T @ a1, p.T @ a2, ga1.sum(0), ga2.sum(0), p.sum(0)]
        for param, grad, buf in zip(params, grads, buffers):
            buf *= MOMENTUM
            buf += grad
            param -= LR * buf

    return step, x, y


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=1)
    measure(threads=ap.parse_args().threads)


def measure(threads: int = 1) -> float:
    """Time the hand-written numpy step and torch's on ``threads`` threads (BLAS for numpy,
    intra-op for torch), print them, return the ratio numpy/torch."""
    torch.set_num_threads(threads)
    step_np, x, y = numpy_step_factory(np.random.default_rng(0))
    model = torch.nn.Sequential(
        torch.nn.Linear(784, 512), torch.nn.ReLU(), torch.nn.Linear(512, 256), torch.nn.ReLU(),
        torch.nn.Linear(256, 10),
    )  # fmt: skip
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)

    def step_torch() -> None:
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(xt), yt).backward()
        opt.step()

    times: dict[str, list[float]] = {"numpy": [], "torch": []}
    with threadpool_limits(threads):
        for _ in range(40):
            for name, fn in (("numpy", step_np), ("torch", step_torch)):
                start = time.perf_counter()
                for _ in range(5):
                    fn()
                times[name].append((time.perf_counter() - start) / 5 * 1e3)
    a, t = np.median(times["numpy"]), np.median(times["torch"])
    print(
        f"MLP step ({threads} thread{'s' if threads > 1 else ''}), hand-written numpy {a:.2f} ms  "
        f"torch {t:.2f} ms  ratio {a / t:.2f}x"
    )
    return float(a / t)


if __name__ == "__main__":
    main()
