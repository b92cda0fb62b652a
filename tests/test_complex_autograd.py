"""Gradients through complex ops with PyTorch's convention (for a real loss L of z = x + iy,
z.grad = dL/dx + i dL/dy): each against torch on identical data and against finite differences
of the real and imaginary parts; and the rotary-embedding pattern of LLM code, ported by the
import rename."""

from __future__ import annotations

import numpy as np
import pytest

import autogradcli as ag


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def _data(spec, dtype, rng):
    """A complex array for ``("c", shape)``, a real one for ``("r", shape)``."""
    kind, shape = spec
    real = rng.standard_normal(shape)
    if kind == "c":
        return (real + 1j * rng.standard_normal(shape)).astype(dtype)
    return real.astype(np.float64 if dtype == np.complex128 else np.float32)


def _loss(m, out, weights):
    """A real loss reading both parts of a complex output."""
    parts = m.view_as_real(out) if out.is_complex() else out
    return (parts * m.tensor(weights, dtype=parts.dtype, device=parts.device)).sum()


def _weights(out):
    shape = tuple(out.shape) + ((2,) if out.is_complex() else ())
    return np.random.default_rng(7).standard_normal(shape)


def _run(m, fn, arrays):
    inputs = [m.tensor(a, requires_grad=True) for a in arrays]
    out = fn(m, *inputs)
    _loss(m, out, _weights(out)).backward()
    return out, [t.grad for t in inputs]


def _numeric_grad(fn, arrays, k, weights, eps=1e-6):
    """dL/dx + i dL/dy of input ``k`` by central differences (complex128 / float64)."""
    base = arrays[k]
    grad = np.zeros(base.shape, dtype=base.dtype)
    steps = (1.0, 1j) if base.dtype.kind == "c" else (1.0,)
    for idx in np.ndindex(base.shape):
        for step in steps:
            values = []
            for sign in (1, -1):
                moved = [a.copy() for a in arrays]
                moved[k][idx] += sign * eps * step
                out = fn(ag, *[ag.tensor(a) for a in moved])
                values.append(_loss(ag, out, weights).item())
            grad[idx] += (values[0] - values[1]) / (2 * eps) * step
    return grad


C, R = "c", "r"
CASES = {
    "add": (lambda m, a, b: a + b, [(C, (2, 3)), (C, (3,))]),
    "sub_real": (lambda m, a, b: a - b, [(C, (2, 3)), (R, (2, 1))]),
    "mul": (lambda m, a, b: a * b, [(C, (2, 3)), (C, (2, 3))]),
    "mul_real": (lambda m, a, b: b * a, [(C, (2, 3)), (R, (3,))]),
    "mul_scalar": (lambda m, a: (1.5 - 2j) * a * 2.0, [(C, (2, 3))]),
    "real_times_complex_scalar": (lambda m, a: a * (0.5 + 1j), [(R, (2, 3))]),
    "div": (lambda m, a, b: a / b, [(C, (2, 3)), (C, (2, 3))]),
    "div_real": (lambda m, a, b: b / a, [(C, (2, 3)), (R, (2, 3))]),
    "div_scalar": (lambda m, a: a / (2 - 1j), [(C, (2, 3))]),
    "matmul": (lambda m, a, b: a @ b, [(C, (2, 3)), (C, (3, 2))]),
    "matmul_vec": (lambda m, a, b: a @ b, [(C, (2, 3)), (C, (3,))]),
    "sum_mean": (lambda m, a: a.sum(0) + a.mean(), [(C, (2, 3))]),
    "var_std_norm": (
        lambda m, a: a.var(0) + a.std() + a.norm() + m.linalg.vector_norm(a, 1, dim=1)[0],
        [(C, (2, 3))],
    ),
    "cfloat": (lambda m, a, b: a.cfloat() * b.cdouble(), [(R, (2, 3)), (R, (3,))]),
    "exp": (lambda m, a: m.exp(a), [(C, (2, 3))]),
    "trig": (lambda m, a: m.sin(a) + m.cos(a) * m.tanh(a) + m.sigmoid(a), [(C, (2, 3))]),
    "log_sqrt": (lambda m, a: m.log(a) + m.sqrt(a) * m.rsqrt(a * a) + m.log1p(a), [(C, (2, 3))]),
    "expm1_pow": (lambda m, a, b: m.expm1(a) + a**2 + a**-1 + b**3, [(C, (2, 3)), (C, (3,))]),
    "abs": (lambda m, a: a.abs(), [(C, (2, 3))]),
    "angle": (lambda m, a: m.angle(a), [(C, (2, 3))]),
    "real_imag": (lambda m, a: a.real * 2.0 + a.imag * a.imag, [(C, (2, 3))]),
    "conj": (lambda m, a: m.conj(a) * a[0], [(C, (2, 3))]),
    "adjoints": (lambda m, a: a.mH @ a + a.H @ a.adjoint().t(), [(C, (2, 3))]),
    "complex": (lambda m, a, b: m.complex(a, b), [(R, (2, 3)), (R, (3,))]),
    "polar": (lambda m, a, b: m.polar(a.exp(), b), [(R, (2, 3)), (R, (2, 3))]),
    "view_as_real": (lambda m, a: m.view_as_real(a) * m.view_as_real(a), [(C, (2, 3))]),
    "view_as_complex": (lambda m, a: m.view_as_complex(a) ** 2, [(R, (3, 2))]),
    "shape_ops": (
        lambda m, a, b: m.cat([a.reshape(3, 2), b.flatten()[None].t()[:3]], 1)[1:, 1:],
        [(C, (2, 3)), (C, (2, 2))],
    ),
    "index": (lambda m, a: a[:, m.tensor([2, 0, 2])] * a[0, 1], [(C, (2, 3))]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_equal_torchs(torch, name):
    fn, specs = CASES[name]
    arrays = [_data(s, np.complex64, np.random.default_rng(0)) for s in specs]
    ours, our_grads = _run(ag, fn, arrays)
    theirs, their_grads = _run(torch, fn, arrays)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), 1e-5, 1e-5)
    for g, h in zip(our_grads, their_grads):
        assert g.dtype.name == str(h.dtype).split(".")[-1] and g.shape == h.shape
        np.testing.assert_allclose(g.numpy(), h.numpy(), 1e-4, 1e-5)


@pytest.mark.parametrize("name", ["mul", "div", "matmul", "trig", "abs", "angle", "polar"])
def test_gradients_equal_finite_differences(name):
    fn, specs = CASES[name]
    rng = np.random.default_rng(1)
    arrays = [_data(s, np.complex128, rng) for s in specs]
    out, grads = _run(ag, fn, arrays)
    weights = _weights(out)
    for k, g in enumerate(grads):
        np.testing.assert_allclose(g.numpy(), _numeric_grad(fn, arrays, k, weights), 1e-6, 1e-6)


def _rotary(m, x, freqs):
    """The rotary position embedding as lit-llama and the annotated implementations write it."""
    freqs_cis = m.polar(m.ones_like(freqs), freqs)
    x_ = m.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    return m.view_as_real(x_ * freqs_cis).flatten(3).type_as(x)


def test_rotary_embedding_ported_by_rename_equals_torch(torch):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 4, 6)).astype(np.float32)  # (batch, seq, heads, head_dim)
    freqs = np.outer(np.arange(3), 1.0 / 10000 ** (np.arange(0, 6, 2) / 6))[:, None, :]
    results = []
    for m in (ag, torch):
        xt = m.tensor(x, requires_grad=True)
        ft = m.tensor(freqs.astype(np.float32), requires_grad=True)
        out = _rotary(m, xt, ft)
        (out * out.detach() + out).sum().backward()
        results.append((out, xt.grad, ft.grad))
    for ours, theirs in zip(*results):
        assert ours.dtype.name == "float32" and ours.shape == theirs.shape
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), 1e-5, 1e-5)


def test_complex_gradient_for_a_real_leaf_is_its_real_part():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    (x * (2 + 3j)).real.sum().backward()
    assert x.grad.dtype is ag.float32 and x.grad.tolist() == [2.0, 2.0]


@pytest.mark.parametrize("name", ["mul", "div", "matmul", "abs", "angle", "view_as_complex"])
def test_gradients_on_the_strict_device_equal_the_cpu_ones(strict_cuda, name):
    fn, specs = CASES[name]
    arrays = [_data(s, np.complex64, np.random.default_rng(4)) for s in specs]
    expected, expected_grads = _run(ag, fn, arrays)
    inputs = [ag.tensor(a, device="cuda", requires_grad=True) for a in arrays]
    out = fn(ag, *inputs)
    _loss(ag, out, _weights(out)).backward()
    assert out.device.type == "cuda"
    np.testing.assert_allclose(ag.backend.to_numpy(out.detach()._data), expected.detach().numpy())
    for t, g in zip(inputs, expected_grads):
        np.testing.assert_allclose(ag.backend.to_numpy(t.grad._data), g.numpy(), 1e-6, 1e-6)


def test_view_as_complex_checks_the_offset_on_the_strict_device(strict_cuda):
    base = ag.arange(6.0, device="cuda")
    with pytest.raises(RuntimeError, match="storage_offset divisible by 2"):
        ag.view_as_complex(base[1:5].reshape(2, 2))
    assert ag.view_as_complex(base[2:6].reshape(2, 2)).tolist() == [2 + 3j, 4 + 5j]


def test_grad_fn_names_equal_torchs(torch):
    ops = [
        lambda m, x, z: m.view_as_real(z),
        lambda m, x, z: m.view_as_complex(x),
        lambda m, x, z: z.real,
        lambda m, x, z: z.imag,
        lambda m, x, z: m.polar(x, x),
        lambda m, x, z: m.complex(x, x),
        lambda m, x, z: m.angle(z),
        lambda m, x, z: m.fft.ifft(z),
        lambda m, x, z: m.fft.fft(x),
        lambda m, x, z: m.fft.rfft(x),
        lambda m, x, z: m.fft.irfft(z),
    ]
    names = []
    for m in (ag, torch):
        x = m.ones(3, 2, requires_grad=True)
        z = m.ones(3, 2, dtype=m.complex64, requires_grad=True)
        names.append([type(op(m, x, z).grad_fn).__name__ for op in ops])
    assert names[0] == names[1]


@pytest.mark.parametrize(
    "name, kwargs", [("Adam", {}), ("AdamW", {"weight_decay": 0.1}), ("SGD", {"momentum": 0.9})]
)
def test_complex_parameters_train_as_torchs(torch, name, kwargs):
    """A complex parameter (Fourier-layer weights) is updated as pairs of reals, as in torch."""
    start = np.array([[1 + 2j, -0.5 + 0.3j], [0.1 - 1j, 2j]], np.complex64)
    results = []
    for m in (ag, torch):
        p = m.tensor(start, requires_grad=True)
        opt = getattr(m.optim, name)([p], lr=0.1, **kwargs)
        for _ in range(3):
            opt.zero_grad()
            (m.view_as_real(p) ** 3).sum().backward()
            opt.step()
        results.append(p.detach().numpy())
    assert results[0].dtype == np.complex64
    np.testing.assert_allclose(results[0], results[1], 1e-6, 1e-6)


def test_angle_gradient_at_zero_is_zero_without_warnings(torch):
    grads = []
    for m in (ag, torch):
        z = m.tensor([0j, 1 + 1j, -2.0], requires_grad=True)
        m.angle(z).sum().backward()
        grads.append(z.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], 1e-6)


class _ForgetsConjugate(ag.autograd.Function):
    """z * z with the holomorphic derivative but without PyTorch's conjugate: wrong."""

    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        return z * z

    @staticmethod
    def backward(ctx, g):
        (z,) = ctx.saved_tensors
        return g * 2 * z.detach()


def test_gradcheck_checks_complex_functions_through_real_pairs():
    z = ag.tensor([1 + 2j, 0.5 - 1j], dtype=ag.complex128, requires_grad=True)
    x = ag.tensor([1.0, 2.0, 3.0], dtype=ag.float64, requires_grad=True)
    assert ag.autograd.gradcheck(lambda z: z * z * z.abs(), (z,))
    assert ag.autograd.gradcheck(lambda x, z: ag.fft.rfft(x)[:2] * z, (x, z))
    assert ag.autograd.gradcheck(lambda x: ag.fft.irfft(x * (1 + 1j)), (x,))
    assert not ag.autograd.gradcheck(_ForgetsConjugate.apply, (z,), raise_exception=False)
