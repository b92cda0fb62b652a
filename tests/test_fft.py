"""``autogradcli.fft`` against ``torch.fft`` on identical data: values, dtypes and gradients for
each transform, ``n``/``s``/``dim`` and the three ``norm`` modes; frequencies and shifts; errors;
and the transforms on the strict cupy stand-in."""

from __future__ import annotations

import numpy as np
import pytest

import autogradcli as ag


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


RNG = np.random.default_rng(0)
REAL = RNG.standard_normal((3, 8)).astype(np.float32)
CPLX = (RNG.standard_normal((3, 5)) + 1j * RNG.standard_normal((3, 5))).astype(np.complex64)

# name -> (fn(m, x, norm), input)
CASES = {
    "fft": (lambda m, x, nm: m.fft.fft(x, norm=nm), CPLX),
    "fft_real_padded": (lambda m, x, nm: m.fft.fft(x, n=10, norm=nm), REAL),
    "fft_trimmed_dim0": (lambda m, x, nm: m.fft.fft(x, n=2, dim=0, norm=nm), CPLX),
    "ifft": (lambda m, x, nm: m.fft.ifft(x, n=7, norm=nm), CPLX),
    "rfft": (lambda m, x, nm: m.fft.rfft(x, norm=nm), REAL),
    "rfft_odd_n": (lambda m, x, nm: m.fft.rfft(x, n=5, norm=nm), REAL),
    "irfft": (lambda m, x, nm: m.fft.irfft(x, norm=nm), CPLX),
    "irfft_odd_n": (lambda m, x, nm: m.fft.irfft(x, n=9, norm=nm), CPLX),
    "irfft_short_n": (lambda m, x, nm: m.fft.irfft(x, n=4, norm=nm), CPLX),
    "fft2": (lambda m, x, nm: m.fft.fft2(x, norm=nm), CPLX),
    "ifft2_s": (lambda m, x, nm: m.fft.ifft2(x, s=(4, 4), norm=nm), CPLX),
    "fftn_dim": (lambda m, x, nm: m.fft.fftn(x, dim=(0,), norm=nm), REAL),
    "ifftn": (lambda m, x, nm: m.fft.ifftn(x, norm=nm), CPLX),
    "rfft2": (lambda m, x, nm: m.fft.rfft2(x, norm=nm), REAL),
    "rfftn_s": (lambda m, x, nm: m.fft.rfftn(x, s=(2, 6), norm=nm), REAL),
    "hfft": (lambda m, x, nm: m.fft.hfft(x, n=7, norm=nm), CPLX),
    "ihfft": (lambda m, x, nm: m.fft.ihfft(x, norm=nm).resolve_conj(), REAL),
    "irfft2": (lambda m, x, nm: m.fft.irfft2(x, norm=nm), CPLX),
    "irfftn_s": (lambda m, x, nm: m.fft.irfftn(x, s=(4, 7), norm=nm), CPLX),
}


def _run(m, fn, data, norm):
    x = m.tensor(data, requires_grad=True)
    out = fn(m, x, norm)
    parts = m.view_as_real(out) if out.is_complex() else out
    w = np.random.default_rng(3).standard_normal(tuple(parts.shape)).astype(np.float32)
    (parts * m.tensor(w)).sum().backward()
    return out, x.grad


@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_transform_values_and_gradients_equal_torchs(torch, name, norm):
    fn, data = CASES[name]
    ours, our_grad = _run(ag, fn, data, norm)
    theirs, their_grad = _run(torch, fn, data, norm)
    assert ours.dtype.name == str(theirs.dtype).split(".")[-1]
    assert our_grad.dtype.name == str(their_grad.dtype).split(".")[-1]
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), 1e-5, 1e-5)
    np.testing.assert_allclose(our_grad.numpy(), their_grad.numpy(), 1e-5, 1e-5)


def test_float64_and_integer_inputs_give_torchs_dtypes(torch):
    for fn in (
        lambda m: m.fft.fft(m.arange(4)),
        lambda m: m.fft.rfft(m.arange(4, dtype=m.float64)),
        lambda m: m.fft.irfft(m.ones(3, dtype=m.complex128)),
        lambda m: m.fft.irfft(m.ones(3)),
    ):
        ours, theirs = fn(ag), fn(torch)
        assert ours.dtype.name == str(theirs.dtype).split(".")[-1]
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), 1e-6, 1e-6)


def test_second_order_gradient_equals_torchs(torch):
    grads = []
    for m in (ag, torch):
        x = m.tensor(REAL[0], requires_grad=True)
        y = m.fft.rfft(x * x).abs().sum()
        (g,) = m.autograd.grad(y, x, create_graph=True)
        (g * g).sum().backward()
        grads.append((g.detach().numpy(), x.grad.numpy()))
    for ours, theirs in zip(*grads):
        np.testing.assert_allclose(ours, theirs, 1e-4, 1e-4)


def test_frequencies_and_shifts_equal_torchs(torch):
    for fn in (
        lambda m: m.fft.fftfreq(5),
        lambda m: m.fft.fftfreq(4, d=0.1, dtype=m.float64),
        lambda m: m.fft.rfftfreq(6, 0.5),
        lambda m: m.fft.rfftfreq(7),
        lambda m: m.fft.fftshift(m.arange(5)),
        lambda m: m.fft.ifftshift(m.arange(12).reshape(3, 4)),
        lambda m: m.fft.fftshift(m.arange(12).reshape(3, 4), dim=1),
        lambda m: m.fft.ifftshift(m.fft.fftshift(m.arange(7))),
    ):
        ours, theirs = fn(ag), fn(torch)
        assert ours.dtype.name == str(theirs.dtype).split(".")[-1]
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), 1e-6)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.fft.fft(m.ones(4), norm="bad"),
        lambda m: m.fft.fft(m.ones(4), n=0),
        lambda m: m.fft.irfft(m.ones(3), n=0),
        lambda m: m.fft.rfft(m.ones(4) + 0j),
        lambda m: m.fft.fft(m.ones(4), dim=2),
    ],
)
def test_errors_equal_torchs(torch, fn):
    with pytest.raises(Exception) as theirs:
        fn(torch)
    with pytest.raises(type(theirs.value)) as ours:
        fn(ag)
    assert str(ours.value).splitlines()[0] == str(theirs.value).splitlines()[0]


def test_n_of_one_is_the_smallest_transform(torch):
    ours, theirs = ag.fft.fft(ag.tensor(REAL), n=1), torch.fft.fft(torch.tensor(REAL), n=1)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy())


def _chain(device):
    x = ag.tensor(REAL, device=device, requires_grad=True)
    spec = ag.fft.rfft(x, norm="ortho")
    z = ag.view_as_complex(ag.view_as_real(spec) * 2.0)
    back = ag.fft.irfft(z * ag.polar(ag.ones_like(z.real), z.imag), n=8)
    out = ag.fft.fftshift(ag.fft.ifft2(back * 1j + ag.complex(back, back)).abs(), dim=0)
    out.sum().backward()
    return out, x.grad


def test_transforms_and_complex_ops_run_on_the_strict_device(strict_cuda):
    out, grad = _chain("cuda")
    assert out.device.type == "cuda" and grad.device.type == "cuda"
    assert out.dtype is ag.float32 and grad.dtype is ag.float32
    expected, expected_grad = _chain("cpu")
    np.testing.assert_allclose(
        ag.backend.to_numpy(out.detach()._data), expected.detach().numpy(), 1e-6
    )
    np.testing.assert_allclose(ag.backend.to_numpy(grad._data), expected_grad.numpy(), 1e-5)
