"""bench_engine.py's two workloads written by hand in numpy, no autograd: their floors.

(a) the 100-op chain on 16 float32 values, forward keeping what the backward needs, then the
gradients of its sum with respect to x and w by hand; (b) the custom-Function fit of sin(x)
with a + b * P3(c + d * x), gradients by hand. What is left between these and an engine is the
engine's bookkeeping per op (recording, the graph walk, Python dispatch).

    python bench/bench_numpy_engine.py    # each floor's gradients/loss against torch's
"""

from __future__ import annotations

import math
import time

import numpy as np

N_OPS = 100  # bench_engine.chain's length: 10 blocks of 10 ops


def chain_grads(x: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """d sum(chain(x, w)) / dx and / dw: bench_engine.chain's blocks forward, then backward."""
    saved = []
    y = x
    for i in range(N_OPS // 10):
        y = y * 0.9
        y = y + w
        t = np.tanh(y)
        y = t - 0.1
        u = y
        y = y * w
        s = y
        y = np.sin(y)
        y = y + 0.5
        sig = 1 / (1 + np.exp(-y))
        y = sig - w
        y = y * (1.0 + i * 1e-3)
        saved.append((t, u, s, sig))
    g = np.ones_like(y)
    gw = np.zeros_like(w)
    for i in reversed(range(N_OPS // 10)):
        t, u, s, sig = saved[i]
        g = g * (1.0 + i * 1e-3)
        gw -= g
        g = g * (sig * (1 - sig))
        g = g * np.cos(s)
        gw += g * u
        g = g * w
        g = g * (1 - t * t)
        gw += g
        g = g * 0.9
    return g, gw


def run_numpy_chain(reps: int) -> float:
    """Seconds for ``reps`` forward+backward passes of the chain (bench_engine.run_chain's)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal(16).astype(np.float32)
    w = rng.standard_normal(16).astype(np.float32)
    t0 = time.perf_counter()
    for _ in range(reps):
        chain_grads(x, w)
    return time.perf_counter() - t0


def run_numpy_fit(iters: int) -> tuple[float, float]:
    """Seconds for bench_engine.run_fit's loop by hand, and its final loss."""
    x = np.linspace(-math.pi, math.pi, 2000, dtype=np.float32)
    y = np.sin(x)
    params = [np.float32(v) for v in (0.0, -1.0, 0.0, 0.3)]
    lr = np.float32(5e-6)
    loss = 0.0
    t0 = time.perf_counter()
    for _ in range(iters):
        a, b, c, d = params
        u = c + d * x
        p3 = 0.5 * (5 * u * u * u - 3 * u)  # u**3 is powf: 100x slower
        r = a + b * p3 - y
        loss = (r * r).sum()
        gr = 2 * r
        gu = gr * b * 1.5 * (5 * u * u - 1)
        grads = (gr.sum(), (gr * p3).sum(), gu.sum(), (gu * x).sum())
        params = [p - lr * g for p, g in zip(params, grads)]
    return time.perf_counter() - t0, float(loss)


def main() -> None:
    import bench_engine
    import torch

    rng = np.random.default_rng(0)
    x = rng.standard_normal(16).astype(np.float32)
    w = rng.standard_normal(16).astype(np.float32)
    gx, gw = chain_grads(x, w)
    tx, tw = (torch.tensor(v, requires_grad=True) for v in (x, w))
    bench_engine.chain(torch, tx, tw).sum().backward()
    print(f"chain: max |dx - torch| {np.abs(gx - tx.grad.numpy()).max():.2e}", end="  ")
    print(f"max |dw - torch| {np.abs(gw - tw.grad.numpy()).max():.2e}")
    _, loss = run_numpy_fit(500)
    print(f"fit: final loss numpy {loss:.4f}  torch {bench_engine.run_fit(torch, 500)[1]:.4f}")


if __name__ == "__main__":
    main()
