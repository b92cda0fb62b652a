"""The fused elementwise kernels of ``backend/kernels.py``: against PyTorch, against the unfused
formula they replaced (bit for bit), in place, float32 kept, no temporaries on numpy, and run
through ``fuse`` on the strict cupy stand-in (device arrays only, ufuncs only)."""

from __future__ import annotations

import itertools
import tracemalloc
from typing import Any

import numpy as np
import pytest
from strict_xp import StrictArray, strict_cupy

from autogradcli.backend import kernels
from autogradcli.backend.kernels import adam_kernel, sgd_kernel, sigmoid_backward, tanh_backward

SHAPE = (6, 5)
LR, WD = 0.1, 0.01


def _data(seed: int, n: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(SHAPE).astype(np.float32) for _ in range(n)]


class _Work:
    """A CPU workspace like the optimizers': one buffer per slot, reused."""

    def __init__(self, like: np.ndarray) -> None:
        self.like, self.bufs = like, {}

    def __call__(self, slot: int) -> np.ndarray:
        if slot not in self.bufs:
            self.bufs[slot] = np.empty_like(self.like)
        return self.bufs[slot]


# ------------------------------------------------------------------ SGD
SGD_CASES = [
    (mx, wd, mom, damp, nest)
    for mx, wd, mom, damp, nest in itertools.product(
        [False, True], [0.0, WD], [0.0, 0.9], [0.0, 0.25], [False, True]
    )
    if not (nest and (mom == 0 or damp != 0)) and not (mom == 0 and damp != 0)
]


def _sgd_unfused(w, grad, buf, mx, wd, mom, damp, nest, first):
    """The pre-kernel SGD arithmetic, op for op, with temporaries."""
    g = -grad if mx else grad
    if wd:
        g = g + w * wd
    if mom:
        if first:
            buf = g.copy()
        else:
            buf = buf * mom
            buf = buf + (g * (1 - damp) if damp else g)
        g = g + buf * mom if nest else buf
    return w + g * -LR, buf


def _sgd_steps(xp_wrap, case, grads, w0):
    """Three steps of the kernel; returns the final (w, buf) as numpy."""
    mx, wd, mom, damp, nest = case
    w = xp_wrap(w0.copy())
    buf = xp_wrap(np.empty_like(w0)) if mom else None
    for i, grad in enumerate(grads):
        mode = "none" if not mom else ("first" if i == 0 else "next")
        k = sgd_kernel(mx, wd != 0, mode, damp != 0, nest)
        scratch = _Work(w0) if type(w) is np.ndarray else None
        k.run(scratch, w, xp_wrap(grad), buf, wd, mom, 1 - damp, -LR)
    unwrap = (lambda a: a) if type(w) is np.ndarray else (lambda a: a._a)
    return unwrap(w), (None if buf is None else unwrap(buf))


@pytest.mark.parametrize("case", SGD_CASES, ids=str)
def test_sgd_kernel_equals_unfused_formula_bit_for_bit_and_keeps_float32(case: Any) -> None:
    w0, *grads = _data(1, 4)
    w, buf = _sgd_steps(lambda a: a, case, grads, w0)
    rw, rbuf = w0, None
    for i, grad in enumerate(grads):
        rw, rbuf = _sgd_unfused(rw, grad, rbuf, *case, first=i == 0)
    assert w.dtype == np.float32 and rw.dtype == np.float32
    assert np.array_equal(w, rw)
    if buf is not None:
        assert buf.dtype == np.float32 and np.array_equal(buf, rbuf)


@pytest.mark.parametrize("case", SGD_CASES, ids=str)
def test_sgd_kernel_matches_torch(case: Any) -> None:
    torch = pytest.importorskip("torch")
    mx, wd, mom, damp, nest = case
    w0, *grads = _data(2, 4)
    w, _ = _sgd_steps(lambda a: a, case, grads, w0)
    p = torch.tensor(w0.copy(), requires_grad=True)
    opt = torch.optim.SGD(
        [p], lr=LR, momentum=mom, dampening=damp, weight_decay=wd, nesterov=nest, maximize=mx
    )
    for grad in grads:
        p.grad = torch.tensor(grad)
        opt.step()
    np.testing.assert_allclose(w, p.detach().numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("case", SGD_CASES, ids=str)
def test_sgd_kernel_on_the_strict_device_equals_the_cpu(case: Any, strict_cuda: Any) -> None:
    w0, *grads = _data(3, 4)
    cpu = _sgd_steps(lambda a: a, case, grads, w0)
    dev = _sgd_steps(StrictArray, case, grads, w0)
    assert np.array_equal(dev[0], cpu[0]) and dev[0].dtype == np.float32
    if cpu[1] is not None:
        assert np.array_equal(dev[1], cpu[1])


def test_sgd_updates_in_place_and_leaves_grad_untouched() -> None:
    w, grad, buf = _data(4, 3)
    w_before, grad_before, buf_before = w.copy(), grad.copy(), buf.copy()
    k = sgd_kernel(True, True, "next", True, False)
    assert k.run(_Work(w), w, grad, buf, WD, 0.9, 0.75, -LR) is None
    assert np.array_equal(grad, grad_before)  # the gradient is read, never written
    assert not np.array_equal(w, w_before) and not np.array_equal(buf, buf_before)
    ref_w, ref_buf = _sgd_unfused(w_before, grad, buf_before, True, WD, 0.9, 0.25, False, False)
    assert np.array_equal(w, ref_w) and np.array_equal(buf, ref_buf)


# ------------------------------------------------------------------ Adam / AdamW
ADAM_CASES = list(
    itertools.product([False, True], [0.0, 0.05], [False, True], [0.9, 0.3], [False, True])
)  # maximize, weight decay, decoupled (AdamW), beta1 (either lerp side), amsgrad
B2, EPS = 0.99, 1e-8


def _adam_args(step: int, wd: float, b1: float) -> tuple[Any, ...]:
    weight = 1 - b1
    coef = weight if abs(weight) < 0.5 else 1 - weight
    bc2 = 1 - B2**step
    return (wd, 1 - LR * wd, coef, B2, 1 - B2, bc2**0.5, EPS, -LR / (1 - b1**step))


def _adam_steps(xp_wrap, case, grads, w0):
    mx, wd, dec, b1, ams = case
    w = xp_wrap(w0.copy())
    m, v = xp_wrap(np.zeros_like(w0)), xp_wrap(np.zeros_like(w0))
    vmax = xp_wrap(np.zeros_like(w0)) if ams else None
    k = adam_kernel(mx, wd != 0 and not dec, wd != 0 and dec, abs(1 - b1) >= 0.5, ams)
    for step, grad in enumerate(grads, 1):
        scratch = _Work(w0) if type(w) is np.ndarray else None
        k.run(scratch, w, xp_wrap(grad), m, v, vmax, *_adam_args(step, wd, b1))
    arrays = [w, m, v] + ([vmax] if ams else [])
    return [a if type(a) is np.ndarray else a._a for a in arrays]


def _adam_unfused(case, grads, w0):
    mx, wd, dec, b1, ams = case
    w, m, v = w0, np.zeros_like(w0), np.zeros_like(w0)
    vmax = np.zeros_like(w0)
    for step, grad in enumerate(grads, 1):
        g = -grad if mx else grad
        if wd and not dec:
            g = g + w * wd
        if wd and dec:
            w = w * (1 - LR * wd)
        weight = 1 - b1
        d = g - m
        m = m + d * weight if abs(weight) < 0.5 else g - d * (1 - weight)
        v = v * B2 + (g * (1 - B2)) * g
        vv = v
        if ams:
            vmax = vv = np.maximum(vmax, v)
        denom = np.sqrt(vv) / (1 - B2**step) ** 0.5 + EPS
        w = w + (m * (-LR / (1 - b1**step))) / denom
    return [w, m, v] + ([vmax] if ams else [])


@pytest.mark.parametrize("case", ADAM_CASES, ids=str)
def test_adam_kernel_equals_unfused_formula_bit_for_bit_and_keeps_float32(case: Any) -> None:
    w0, *grads = _data(5, 4)
    got = _adam_steps(lambda a: a, case, grads, w0)
    for a, r in zip(got, _adam_unfused(case, grads, w0), strict=True):
        assert a.dtype == np.float32 and r.dtype == np.float32
        assert np.array_equal(a, r)


@pytest.mark.parametrize("case", ADAM_CASES, ids=str)
def test_adam_kernel_matches_torch(case: Any) -> None:
    torch = pytest.importorskip("torch")
    mx, wd, dec, b1, ams = case
    w0, *grads = _data(6, 4)
    w = _adam_steps(lambda a: a, case, grads, w0)[0]
    p = torch.tensor(w0.copy(), requires_grad=True)
    cls = torch.optim.AdamW if dec else torch.optim.Adam
    opt = cls([p], lr=LR, betas=(b1, B2), eps=EPS, weight_decay=wd, amsgrad=ams, maximize=mx)
    for grad in grads:
        p.grad = torch.tensor(grad)
        opt.step()
    np.testing.assert_allclose(w, p.detach().numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("case", ADAM_CASES, ids=str)
def test_adam_kernel_on_the_strict_device_equals_the_cpu(case: Any, strict_cuda: Any) -> None:
    w0, *grads = _data(7, 4)
    cpu = _adam_steps(lambda a: a, case, grads, w0)
    dev = _adam_steps(StrictArray, case, grads, w0)
    for d, c in zip(dev, cpu, strict=True):
        assert d.dtype == np.float32 and np.array_equal(d, c)


# ------------------------------------------------------------------ activation backwards
ACTIVATIONS = [
    ("sigmoid", sigmoid_backward, lambda g, y: (g * y) * (1.0 - y)),
    ("tanh", tanh_backward, lambda g, y: g * (1.0 - y * y)),
]


@pytest.mark.parametrize("name,kernel,unfused", ACTIVATIONS, ids=["sigmoid", "tanh"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_activation_backward_kernels(name: str, kernel: Any, unfused: Any, dtype: Any) -> None:
    torch = pytest.importorskip("torch")
    x, g = (a.astype(dtype) for a in _data(8, 2))
    y = (np.tanh(x * 0.5) * 0.5 + 0.5 if name == "sigmoid" else np.tanh(x)).astype(dtype)
    y_before, g_before = y.copy(), g.copy()
    out = kernel(g, y)
    assert out.dtype == dtype and out is not g and out is not y
    assert np.array_equal(y, y_before) and np.array_equal(g, g_before)
    assert np.array_equal(out, unfused(g, y))
    ref = getattr(torch.ops.aten, f"{name}_backward")(torch.tensor(g), torch.tensor(y))
    tol = 1e-6 if dtype == np.float32 else 1e-14
    np.testing.assert_allclose(out, ref.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sigmoid_kernel(dtype: Any) -> None:
    torch = pytest.importorskip("torch")
    x = _data(14, 1)[0].astype(dtype) * 30  # far enough out that exp(-x) overflows float32
    x_before = x.copy()
    out = kernels.sigmoid(x)
    assert out.dtype == dtype and np.array_equal(x, x_before)
    assert np.array_equal(out, np.tanh(x * 0.5) * 0.5 + 0.5)  # the unfused formula
    tol = 1e-6 if dtype == np.float32 else 1e-14
    np.testing.assert_allclose(out, torch.sigmoid(torch.tensor(x)).numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("fn", ["sigmoid", "tanh"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_zero_dim_activations_and_their_gradients_match_torch(fn: str, dtype: str) -> None:
    """0-d arrays give numpy scalars, which have no ``out=``: the kernels take the other path."""
    torch = pytest.importorskip("torch")
    import autogradcli as ag

    for v in (-3.0, 0.5):
        x = ag.tensor(v, dtype=getattr(ag, dtype), requires_grad=True)
        tx = torch.tensor(v, dtype=getattr(torch, dtype), requires_grad=True)
        y, ty = getattr(x, fn)(), getattr(tx, fn)()
        (g,) = ag.autograd.grad(y, x, create_graph=True)
        (tg,) = torch.autograd.grad(ty, tx, create_graph=True)
        (gg,) = ag.autograd.grad(g, x)
        (tgg,) = torch.autograd.grad(tg, tx)
        for a, t in ((y, ty), (g, tg), (gg, tgg)):
            assert a.shape == () and a.dtype == getattr(ag, dtype)
            np.testing.assert_allclose(a.item(), t.item(), rtol=1e-6, atol=1e-7)


def test_tanh_backward_promotes_like_numpy_when_dtypes_differ() -> None:
    """A float64 upstream gradient over a float32 output is not squeezed into float32."""
    g, y = _data(9, 2)
    out = tanh_backward(g.astype(np.float64), np.tanh(y))
    assert out.dtype == np.float64
    assert np.array_equal(out, g.astype(np.float64) * (1.0 - np.tanh(y) * np.tanh(y)))


@pytest.mark.parametrize("name,kernel,unfused", ACTIVATIONS, ids=["sigmoid", "tanh"])
def test_activation_backward_on_the_strict_device(
    name: str, kernel: Any, unfused: Any, strict_cuda: Any
) -> None:
    g, y = _data(10, 2)
    out = kernel(StrictArray(g), StrictArray(y))
    assert type(out) is StrictArray and out.dtype == np.float32
    assert np.array_equal(out._a, kernel(g, y))


# ------------------------------------------------------------------ the seam and the stand-in
def test_sigmoid_on_the_strict_device(strict_cuda: Any) -> None:
    x = _data(15, 1)[0]
    out = kernels.sigmoid(StrictArray(x))
    assert type(out) is StrictArray and out.dtype == np.float32
    assert np.array_equal(out._a, kernels.sigmoid(x))


def test_a_host_array_given_to_a_device_kernel_is_refused(strict_cuda: Any) -> None:
    g, y = _data(11, 2)
    with pytest.raises(TypeError, match="Invalid argument type for 'tanh_backward'"):
        tanh_backward(StrictArray(g), y)


def test_kernels_are_cached_per_flag_set_and_fused_once_per_module(strict_cuda: Any) -> None:
    assert sgd_kernel(False, False, "next", False, True) is sgd_kernel(
        False, False, "next", False, True
    )
    assert adam_kernel(False, False, True, False, False) is not adam_kernel(
        False, False, False, False, False
    )
    g, y = _data(12, 2)
    sigmoid_backward(StrictArray(g), StrictArray(y))
    fused = kernels._SIGMOID_BACKWARD.on[strict_cupy]
    sigmoid_backward(StrictArray(g), StrictArray(y))
    assert kernels._SIGMOID_BACKWARD.on[strict_cupy] is fused


@pytest.mark.parametrize(
    "body,what",
    [
        (lambda x: x.sum(), "ndarray.sum"),
        (lambda x: x[0], "indexing"),
        (lambda x: x * 2 if x else x, "truth test"),
        (lambda x: strict_cupy.matmul(x, x), "matmul"),
        (lambda x: strict_cupy.concatenate([x, x]), "concatenate"),
    ],
)
def test_the_stand_in_refuses_what_cupy_fuse_cannot_fuse(body: Any, what: str) -> None:
    fused = strict_cupy.fuse(kernel_name="k")(body)
    x = StrictArray(np.ones((1, 1), np.float32))
    with pytest.raises(TypeError, match=f"{what}.*cannot be fused: cupy.fuse kernel 'k'"):
        fused(x)
    body(x)  # the same body runs outside a fused function


def test_the_stand_in_fuse_runs_ufuncs_in_place_and_needs_a_device_array() -> None:
    def axpy(a, x, y):
        strict_cupy.add(y, strict_cupy.multiply(x, a), out=y)

    fused = strict_cupy.fuse(axpy)
    x, y = StrictArray(np.ones(3, np.float32)), StrictArray(np.zeros(3, np.float32))
    assert fused(0.5, x, y) is None and y._a.tolist() == [0.5] * 3 and y.dtype == np.float32
    with pytest.raises(TypeError, match="no device array"):
        fused(0.5, 1.0, 2.0)


# ------------------------------------------------------------------ no temporaries on numpy
def _peak_extra_bytes(fn: Any) -> int:
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        fn()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("kind", ["sgd", "adam"])
def test_numpy_updates_allocate_nothing_beyond_the_workspace(kind: str) -> None:
    """One parameter of 1 MiB: with the workspace warm a step allocates (almost) nothing; the
    same kernel without a workspace allocates at least one 1 MiB temporary."""
    rng = np.random.default_rng(13)
    w, grad, a, b, c = (rng.standard_normal((512, 512)).astype(np.float32) for _ in range(5))
    b = np.abs(b)
    if kind == "sgd":
        k = sgd_kernel(True, True, "next", True, True)
        args = (w, grad, a, WD, 0.9, 0.75, -LR)
    else:
        k = adam_kernel(True, True, False, False, True)
        args = (w, grad, a, b, c, *_adam_args(3, WD, 0.9))
    work = _Work(w)
    k.run(work, *args)  # warm the workspace
    assert _peak_extra_bytes(lambda: k.run(work, *args)) < 64 * 1024
    assert _peak_extra_bytes(lambda: k(*args)) >= w.nbytes
