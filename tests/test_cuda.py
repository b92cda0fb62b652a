"""Real-GPU checks (cupy and a CUDA device): results and gradients match the CPU, a training step
learns, tensors move between devices. Skipped cleanly elsewhere; the strict stand-in
(``strict_xp.py``, used by ``oracle.check`` and ``test_backend.py``) covers the seam on CI."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import autogradcli as ag
from autogradcli.backend import registry


def _real_cuda() -> bool:
    if importlib.util.find_spec("cupy") is None:
        return False
    if registry._cuda is not None and getattr(registry._cuda, "__name__", "") != "cupy":
        return False  # a stand-in is installed
    return ag.cuda.is_available()


pytestmark = [
    pytest.mark.cuda,
    pytest.mark.skipif(not _real_cuda(), reason="needs cupy and a CUDA device"),
]

OPS = {
    "exp": lambda x, y: x.exp(),
    "tanh": lambda x, y: x.tanh(),
    "sigmoid": lambda x, y: x.sigmoid(),
    "relu": lambda x, y: x.relu(),
    "add_broadcast": lambda x, y: x + y[:, 0],
    "mul": lambda x, y: x * y.t(),
    "div": lambda x, y: x / (y.t().abs() + 0.5),
    "pow": lambda x, y: (x.abs() + 0.5) ** y.t(),
    "matmul": lambda x, y: x @ y,
    "sum_dim": lambda x, y: x.sum(1, keepdim=True),
    "mean": lambda x, y: x.mean(),
    "maximum": lambda x, y: ag.maximum(x, y.t()),
    "where": lambda x, y: ag.where(x > 0, x, y.t() * 0.1),
    "index": lambda x, y: x[ag.tensor([0, 2, 2], device=x.device), 1:],
    "mask": lambda x, y: x[x > 0],
    "reshape_permute": lambda x, y: x.reshape(2, 2, 3).permute(2, 0, 1),
    "clamp": lambda x, y: x.clamp(-0.5, 0.5),
}


def _run(fn, device, dtype):
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal(s).astype(dtype) for s in ((4, 3), (3, 4))]
    ins = [ag.tensor(a, device=device, requires_grad=True) for a in xs]
    out = fn(*ins)
    g = ag.tensor(rng.standard_normal(tuple(out.shape)).astype(dtype), device=device)
    grads = ag.autograd.grad(out, ins, g, allow_unused=True)
    return out, grads


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", list(OPS))
def test_forward_and_backward_match_cpu(name, dtype):
    tol = 1e-10 if dtype == "float64" else 1e-5
    cpu_out, cpu_grads = _run(OPS[name], "cpu", dtype)
    gpu_out, gpu_grads = _run(OPS[name], "cuda", dtype)
    assert gpu_out.is_cuda and gpu_out.dtype == cpu_out.dtype
    np.testing.assert_allclose(
        gpu_out.detach().cpu().numpy(), cpu_out.detach().numpy(), rtol=tol, atol=tol
    )
    for c, g in zip(cpu_grads, gpu_grads):
        assert (c is None) == (g is None)
        if c is not None:
            assert g.is_cuda
            np.testing.assert_allclose(g.cpu().numpy(), c.numpy(), rtol=tol, atol=tol)


def test_double_backward_on_gpu():
    x = ag.tensor([0.5, -1.0, 2.0], dtype=ag.float64, device="cuda", requires_grad=True)
    (g,) = ag.autograd.grad((x**3).sum(), x, create_graph=True)
    (gg,) = ag.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.cpu().numpy(), 6 * np.array([0.5, -1.0, 2.0]))


def test_device_moves_and_gradients_across_devices():
    x = ag.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.cuda()
    assert y.is_cuda and repr(y.device) == "device(type='cuda', index=0)"
    assert "device='cuda:0'" in repr(y)
    (y * y).cpu().sum().backward()
    assert x.grad.device.type == "cpu" and x.grad.tolist() == [2.0, 4.0, 6.0]
    w = ag.ones(2, device="cuda", requires_grad=True)
    (w.cpu() * 3.0).sum().backward()
    assert w.grad.is_cuda and w.grad.tolist() == [3.0, 3.0]
    with pytest.raises(RuntimeError, match="cuda:0"):
        _ = w + ag.ones(2)
    with pytest.raises(TypeError, match="can't convert cuda:0 device type tensor to numpy"):
        ag.ones(2, device="cuda").numpy()
    ag.cuda.synchronize()
    assert ag.cuda.device_count() >= 1


def test_manual_seed_makes_gpu_random_repeat():
    ag.manual_seed(5)
    a = ag.randn(8, device="cuda")
    ag.manual_seed(5)
    assert ag.randn(8, device="cuda").tolist() == a.tolist()
    p = ag.randperm(10, device="cuda")
    assert sorted(p.tolist()) == list(range(10))


def test_a_training_step_on_gpu():
    ag.manual_seed(0)
    x = ag.randn(64, 3, device="cuda")
    y = x @ ag.tensor([[1.0], [-2.0], [0.5]], device="cuda") + 0.3
    w = ag.zeros(3, 1, device="cuda", requires_grad=True)
    b = ag.zeros(1, device="cuda", requires_grad=True)
    first = None
    for _ in range(50):
        loss = ((x @ w + b - y) ** 2).mean()
        first = loss.item() if first is None else first
        w.grad = b.grad = None
        loss.backward()
        with ag.no_grad():
            w.sub_(w.grad * 0.2)
            b.sub_(b.grad * 0.2)
    assert loss.item() < first * 0.01
    np.testing.assert_allclose(w.cpu().detach().numpy().ravel(), [1.0, -2.0, 0.5], atol=0.05)


@pytest.mark.parametrize(
    "name,kw",
    [
        ("SGD", {"lr": 0.1}),
        ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.25, "weight_decay": 0.01}),
        ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "maximize": True}),
        ("Adam", {"lr": 0.01, "weight_decay": 0.05, "amsgrad": True}),
        ("Adam", {"lr": 0.01, "betas": (0.3, 0.99), "maximize": True}),
        ("AdamW", {"lr": 0.01}),
    ],
)
def test_fused_optimizer_kernels_match_the_cpu_in_place(name, kw):
    """The optimizers' cupy.fuse kernels: one kernel per parameter, updating the device array
    in place (same buffer), float32 kept, values as on the CPU (FMA contraction aside)."""
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((64, 33)).astype(np.float32)
    grads = [rng.standard_normal(w0.shape).astype(np.float32) for _ in range(4)]
    results = []
    for device in ("cpu", "cuda"):
        p = ag.tensor(w0.copy(), device=device, requires_grad=True)
        opt = getattr(ag.optim, name)([p], **kw)
        arr = p._data
        for g in grads:
            p.grad = ag.tensor(g, device=device)
            before = p.grad.cpu().numpy().copy()
            opt.step()
            np.testing.assert_array_equal(p.grad.cpu().numpy(), before)
        assert p._data is arr and p.dtype == ag.float32
        results.append(p.detach().cpu().numpy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["sigmoid", "sigmoid_backward", "tanh_backward"])
def test_fused_activation_kernels_match_the_cpu(name):
    from autogradcli.backend import kernels

    rng = np.random.default_rng(1)
    args = [rng.uniform(-1, 1, (128, 65)).astype(np.float32) for _ in range(name.count("_") + 1)]
    xp = registry.cuda_module()
    out = getattr(kernels, name)(*[xp.asarray(a) for a in args])
    assert isinstance(out, xp.ndarray) and out.dtype == np.float32
    np.testing.assert_allclose(xp.asnumpy(out), getattr(kernels, name)(*args), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize(
    "make, shape",
    [
        (lambda nn: nn.LSTM(3, 8, 2, bidirectional=True), (5, 4, 3)),  # fused step kernels
        (lambda nn: nn.LSTM(3, 8, proj_size=4), (5, 4, 3)),
        (lambda nn: nn.GRU(3, 8), (5, 4, 3)),
        (lambda nn: nn.LayerNorm(8), (4, 6, 8)),
        (lambda nn: nn.BatchNorm2d(32), (64, 32, 16, 16)),
        (lambda nn: nn.GroupNorm(4, 8), (2, 8, 5, 5)),
        (lambda nn: nn.Conv2d(32, 32, 3, padding=1), (64, 32, 16, 16)),  # the whole batch
    ],
)
def test_layers_match_the_cpu_values_and_gradients(make, shape):
    """The layers whose device path differs from the CPU's (fused kernels, sums of products,
    unblocked convolution) give the CPU's values and gradients, in float32."""
    cpu = make(ag.nn)
    dev = make(ag.nn)
    dev.load_state_dict(cpu.state_dict())
    dev.to("cuda")
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape).astype(np.float32)
    results, up = [], None
    for model, device in ((cpu, "cpu"), (dev, "cuda")):
        xt = ag.tensor(x, device=device, requires_grad=True)
        out = model(xt)
        out = out[0] if isinstance(out, tuple) else out
        # a random cotangent: with (out * out).sum() BatchNorm's bias gradient is a sum of 16384
        # terms cancelling to ~1e-4, float32 rounding noise that no two summation orders share
        up = rng.standard_normal(tuple(out.shape)).astype(np.float32) if up is None else up
        out.backward(ag.tensor(up, device=device))
        grads = [xt.grad] + [p.grad for p in model.parameters()]
        results.append([t.detach().cpu().numpy() for t in [out, *grads]])
    for a, b in zip(*results):
        np.testing.assert_allclose(b, a, rtol=2e-4, atol=2e-4)
