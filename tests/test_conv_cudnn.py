"""conv2d through cuDNN on a device (ops/convolution_cudnn.py), proven on the strict stand-in
with a fake cuDNN computed by our CPU convolution (tests/strict_xp.fake_cudnn): the device path
must give the CPU's values and gradients and take cuDNN exactly where it applies."""

import numpy as np
import pytest
from strict_xp import fake_cudnn

import autogradcli as ag
import autogradcli.nn.functional as F


def _run(x, w, b, device, **kw):
    xt = ag.tensor(x, device=device, requires_grad=True)
    wt = ag.tensor(w, device=device, requires_grad=True)
    bt = None if b is None else ag.tensor(b, device=device, requires_grad=True)
    out = F.conv2d(xt, wt, bt, **kw)
    up = np.random.default_rng(1).standard_normal(tuple(out.shape)).astype(x.dtype)
    out.backward(ag.tensor(up, device=device))
    ts = [out, xt.grad, wt.grad] + ([] if bt is None else [bt.grad])
    return [ag.backend.to_numpy(t.detach()._data) for t in ts]


@pytest.mark.parametrize(
    "kw, groups, bias",
    [
        ({"padding": 1}, 1, True),
        ({"stride": 2, "padding": 2, "dilation": 2}, 1, False),
        ({"padding": "same"}, 2, True),
        ({}, 1, True),
    ],
)
def test_device_convolution_through_cudnn_matches_the_cpu(strict_cuda, kw, groups, bias):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 4, 7, 6)).astype(np.float32)
    w = rng.standard_normal((6, 4 // groups, 3, 3)).astype(np.float32)
    b = rng.standard_normal(6).astype(np.float32) if bias else None
    cpu = _run(x, w, b, "cpu", groups=groups, **kw)
    with fake_cudnn() as cudnn:
        dev = _run(x, w, b, "cuda", groups=groups, **kw)
    assert cudnn.calls == ["forward", "backward_data", "backward_filter"]
    for got, want in zip(dev, cpu):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_cudnn_is_skipped_where_it_does_not_apply(strict_cuda):
    """Uneven padding ('same' with an even kernel), backends.cudnn.enabled = False and the CPU
    take the im2col path."""
    x = np.ones((1, 2, 5, 5), np.float32)
    with fake_cudnn() as cudnn:
        _run(x, np.ones((3, 2, 2, 2), np.float32), None, "cuda", padding="same")
        _run(x, np.ones((3, 2, 3, 3), np.float32), None, "cpu", padding=1)
        ag.backends.cudnn.enabled = False
        try:
            _run(x, np.ones((3, 2, 3, 3), np.float32), None, "cuda", padding=1)
        finally:
            ag.backends.cudnn.enabled = True
    assert cudnn.calls == []


def test_grad_of_grad_keeps_the_function_built_backward(strict_cuda):
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((1, 2, 5, 5)), rng.standard_normal((3, 2, 3, 3))
    results = []
    for device in ("cpu", "cuda"):
        with fake_cudnn():
            xt = ag.tensor(x, device=device, requires_grad=True)
            wt = ag.tensor(w, device=device, requires_grad=True)
            (gx,) = ag.autograd.grad(
                (F.conv2d(xt, wt, padding=1) ** 2).sum(), xt, create_graph=True
            )
            (gw,) = ag.autograd.grad(gx.sum(), wt)
            results.append(ag.backend.to_numpy(gw.detach()._data))
    np.testing.assert_allclose(results[1], results[0], rtol=1e-9, atol=1e-9)


def test_backends_cudnn_reports_no_cudnn_without_cupy():
    """Without cupy there is no cuDNN: is_available() False and version() None, as torch's CPU
    build reports (with cupy, it is whether cupy loads cuDNN: tests/test_cuda.py's machine)."""
    import importlib.util

    if importlib.util.find_spec("cupy") is not None:
        pytest.skip("cupy is installed here")
    assert ag.backends.cudnn.is_available() is False
    assert ag.backends.cudnn.version() is None
