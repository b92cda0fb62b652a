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
from threadpoolctl import threadpool_limits

BATCH, LR, MOMENTUM = 128, 0.01, 0.9
SHAPES = ((512, 784), (256, 512), (10, 256))


def numpy_step_factory(
    rng: np.random.Generator,
    sizes: tuple[int, int, int, int] = (784, 512, 256, 10),
    batch: int = BATCH,
):
    """The step of an MLP ``sizes[0]``-...-``sizes[3]`` at ``batch`` (bench_nn's MLP by default)."""
    shapes = [(sizes[k + 1], sizes[k]) for k in range(len(sizes) - 1)]
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    y = rng.integers(0, sizes[-1], batch)
    weights = [rng.standard_normal(s).astype(np.float32) * 0.05 for s in shapes]
    biases = [np.zeros(s[0], np.float32) for s in shapes]
    params = weights + biases
    buffers = [np.zeros_like(p) for p in params]
    # one reused scratch for lr * buf: no fresh temporary per step (64 MiB, page faults, if wide)
    flat = np.empty(max(p.size for p in params), np.float32)
    scratch = [flat[: p.size].reshape(p.shape) for p in params]
    wgrads = [np.empty_like(w) for w in weights]  # reused: a fresh 64 MiB array faults its pages
    rows = np.arange(batch)

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
        p /= batch
        ga2 = (p @ w2) * (h2 > 0)
        ga1 = (ga2 @ w1) * (h1 > 0)
        for gw, g, a in zip(wgrads, (ga1, ga2, p), (x, a1, a2)):
            np.matmul(g.T, a, out=gw)
        grads = [*wgrads, ga1.sum(0), ga2.sum(0), p.sum(0)]
        for param, grad, buf, tmp in zip(params, grads, buffers, scratch):
            buf *= MOMENTUM
            buf += grad
            param -= np.multiply(buf, LR, out=tmp)

    return step, x, y


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=1)
    measure(threads=ap.parse_args().threads)


def measure(threads: int = 1) -> float:
    """Time the hand-written numpy step and torch's on ``threads`` threads (BLAS for numpy,
    intra-op for torch), print them, return the ratio numpy/torch."""
    import torch  # here, not at the top: the numpy floor itself is tested without torch

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
