"""bench_nn.py's CNN step written by hand in numpy, no autograd: the floor for the CNN row.

conv(1->8, 3x3, pad 1)-ReLU-maxpool 2-conv(8->16, 3x3, pad 1)-ReLU-maxpool 2-linear(784->10),
batch 64 on 28x28, softmax cross-entropy, SGD momentum 0.9. Convolutions are im2col plus one
matrix product, kept channel-major (C, N, H, W) between layers so no transpose is needed
around the products; ``cnn_gemms`` times those products alone (the GEMM floor).

    python bench/bench_numpy_cnn.py    # one step's loss against torch's on the same weights
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

BATCH, LR, MOMENTUM = 64, 0.01, 0.9
CONVS = ((8, 1), (16, 8))  # (out, in) channels of the two 3x3 convolutions


BLOCK = 8192  # columns per product when the inner size is small (BLAS runs ~2x faster on them)


def w_cols(w: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """``w @ cols`` (w (O, K), cols (K, L)), in column blocks when K is small."""
    if cols.shape[0] > 32 or cols.shape[1] < 2 * BLOCK:
        return w @ cols
    out = np.empty((w.shape[0], cols.shape[1]), np.float32)
    for s in range(0, cols.shape[1], BLOCK):
        np.matmul(w, cols[:, s : s + BLOCK], out=out[:, s : s + BLOCK])
    return out


def g_cols(g: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """``g @ cols.T`` (g (O, L), cols (K, L)): the column blocks' products summed when K is small."""
    if cols.shape[0] > 32 or cols.shape[1] < 2 * BLOCK:
        return g @ cols.T
    acc = g[:, :BLOCK] @ cols[:, :BLOCK].T
    for s in range(BLOCK, cols.shape[1], BLOCK):
        acc += g[:, s : s + BLOCK] @ cols[:, s : s + BLOCK].T
    return acc


def im2col3(a: np.ndarray) -> np.ndarray:
    """Channel-major (C, N, H, W) -> 3x3 pad-1 columns (C*9, N*H*W), rows (c, i, j)."""
    c, n, h, w = a.shape
    pad = np.zeros((c, n, h + 2, w + 2), a.dtype)
    pad[:, :, 1:-1, 1:-1] = a
    cols = np.empty((c, 3, 3, n, h, w), a.dtype)
    for i in range(3):
        for j in range(3):
            cols[:, i, j] = pad[:, :, i : i + h, j : j + w]
    return cols.reshape(c * 9, n * h * w)


def col2im3(cols: np.ndarray, shape: tuple[int, int, int, int]) -> np.ndarray:
    """The adjoint of im2col3: (C*9, N*H*W) columns summed back into (C, N, H, W)."""
    c, n, h, w = shape
    c6 = cols.reshape(c, 3, 3, n, h, w)
    pad = np.zeros((c, n, h + 2, w + 2), cols.dtype)
    for i in range(3):
        for j in range(3):
            pad[:, :, i : i + h, j : j + w] += c6[:, i, j]
    return pad[:, :, 1:-1, 1:-1]


def _quarters(a: np.ndarray) -> list[np.ndarray]:
    """The four strided (C, N, H/2, W/2) views of the 2x2 windows' corners."""
    return [a[:, :, i::2, j::2] for i in (0, 1) for j in (0, 1)]


def pool2(a: np.ndarray) -> np.ndarray:
    """2x2 max pooling of (C, N, H, W): the maximum of the windows' four corners."""
    q = _quarters(a)
    out = np.maximum(q[0], q[1])
    np.maximum(out, q[2], out=out)
    return np.maximum(out, q[3], out=out)


def unpool2(g: np.ndarray, a: np.ndarray, out: np.ndarray) -> np.ndarray:
    """The gradient of pool2(a) == out: ``g`` routed to the maxima (ties all get it: after a ReLU
    they are zeros, whose gradient the ReLU mask drops anyway)."""
    grad = np.empty_like(a)
    for dst, src in zip(_quarters(grad), _quarters(a)):
        np.multiply(g, src == out, out=dst)
    return grad


def init_params(rng: np.random.Generator) -> list[np.ndarray]:
    """Weights and biases in torch's shapes: conv1 w, b, conv2 w, b, linear w, b."""
    params = []
    for o, i in CONVS:
        params += [rng.standard_normal((o, i, 3, 3)).astype(np.float32) * 0.2, np.zeros(o, "f")]
    return params + [rng.standard_normal((10, 784)).astype(np.float32) * 0.05, np.zeros(10, "f")]


def numpy_cnn_step_factory(
    rng: np.random.Generator, params: list[np.ndarray] | None = None
) -> tuple[Callable[[], float], np.ndarray, np.ndarray, list[np.ndarray]]:
    """The step (returns the loss), its batch x (N, 1, 28, 28), labels y and the parameters."""
    x = rng.standard_normal((BATCH, 1, 28, 28)).astype(np.float32)
    y = rng.integers(0, 10, BATCH)
    params = init_params(rng) if params is None else params
    buffers = [np.zeros_like(p) for p in params]
    rows = np.arange(BATCH)
    n = BATCH

    def step() -> float:
        w1, b1, w2, b2, wl, bl = params
        cols1 = im2col3(x.reshape(1, n, 28, 28))  # one input channel: (N, 1) is (1, N)
        h1 = w_cols(w1.reshape(8, 9), cols1).reshape(8, n, 28, 28)
        h1 += b1[:, None, None, None]
        m1 = pool2(h1)  # max pooling commutes with ReLU: the ReLU runs on the pooled quarter
        p1 = np.maximum(m1, 0)
        cols2 = im2col3(p1)
        h2 = w_cols(w2.reshape(16, 72), cols2).reshape(16, n, 14, 14)
        h2 += b2[:, None, None, None]
        m2 = pool2(h2)
        f = np.maximum(m2, 0).transpose(1, 0, 2, 3).reshape(n, 784)
        z = f @ wl.T + bl
        z -= z.max(1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(1, keepdims=True)
        loss = -float(np.log(p[rows, y]).mean())
        p[rows, y] -= 1  # softmax cross-entropy gradient
        p /= n
        gp2 = (p @ wl).reshape(n, 16, 7, 7).transpose(1, 0, 2, 3) * (m2 > 0)
        g2 = unpool2(gp2, h2, m2).reshape(16, n * 196)
        gp1 = col2im3(w2.reshape(16, 72).T @ g2, (8, n, 14, 14))
        gp1 *= m1 > 0
        g1 = unpool2(gp1, h1, m1).reshape(8, n * 784)
        grads = [
            g_cols(g1, cols1).reshape(w1.shape), g1.sum(1),
            g_cols(g2, cols2).reshape(w2.shape), g2.sum(1),
            p.T @ f, p.sum(0),
        ]  # fmt: skip
        for param, grad, buf in zip(params, grads, buffers):
            buf *= MOMENTUM
            buf += grad
            param -= LR * buf
        return loss

    return step, x, y, params


def cnn_gemms(rng: np.random.Generator) -> Callable[[], None]:
    """The step's matrix products alone on arrays of their shapes: each convolution's forward
    product and weight gradient (in column blocks, as the step computes them), the second's
    input gradient, the linear layer's three."""
    f32 = np.float32
    cols1, cols2 = (
        rng.standard_normal(s).astype(f32) for s in ((9, BATCH * 784), (72, BATCH * 196))
    )
    g1, g2 = (rng.standard_normal(s).astype(f32) for s in ((8, BATCH * 784), (16, BATCH * 196)))
    w1, w2, wl = (rng.standard_normal(s).astype(f32) for s in ((8, 9), (16, 72), (10, 784)))
    f, p = (
        rng.standard_normal((BATCH, 784)).astype(f32),
        rng.standard_normal((BATCH, 10)).astype(f32),
    )

    def gemms() -> None:
        w_cols(w1, cols1), g_cols(g1, cols1)
        w_cols(w2, cols2), g_cols(g2, cols2), w2.T @ g2
        f @ wl.T, p.T @ f, p @ wl

    return gemms


def main() -> None:
    import bench_nn
    import torch

    step, x, y, params = numpy_cnn_step_factory(np.random.default_rng(0))
    model = bench_nn.build(torch, "cnn")
    with torch.no_grad():
        for tp, p in zip(model.parameters(), params):
            tp.copy_(torch.from_numpy(p))
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    for i in range(3):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(xt), yt)
        loss.backward()
        opt.step()
        print(f"step {i}: numpy loss {step():.6f}  torch loss {loss.item():.6f}")


if __name__ == "__main__":
    main()
