"""The array-backend seam: devices, CUDA without cupy, device moves on the strict cupy stand-in,
and the stand-in itself (it must fail wherever cupy would)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from strict_xp import IMPLICIT_MSG, StrictArray, strict_cupy

import autogradcli as ag
from autogradcli import backend
from autogradcli.autograd.function import Function
from autogradcli.backend import registry

HAS_CUPY = importlib.util.find_spec("cupy") is not None


# ----------------------------------------------------------------------------- devices
@pytest.mark.parametrize(
    "spec, expected_repr, expected_str",
    [
        ("cpu", "device(type='cpu')", "cpu"),
        ("cuda", "device(type='cuda')", "cuda"),
        ("cuda:0", "device(type='cuda', index=0)", "cuda:0"),
        ("cuda:1", "device(type='cuda', index=1)", "cuda:1"),
    ],
)
def test_device_parsing_and_repr(spec, expected_repr, expected_str):
    d = ag.device(spec)
    assert repr(d) == expected_repr
    assert str(d) == expected_str
    assert d == spec and d == ag.device(d)
    assert hash(d) == hash(ag.device(spec))


def test_device_forms_and_errors():
    assert ag.device("cuda", 0) == ag.device("cuda:0")
    assert repr(backend.as_device(0)) == "device(type='cuda', index=0)"
    assert backend.as_device(None) == ag.device("cpu")
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
        ag.device("tpu")
    with pytest.raises(RuntimeError, match="Invalid device string"):
        ag.device("cuda:x")
    with pytest.raises(RuntimeError, match="must not include an index"):
        ag.device("cuda:0", 1)
    assert repr(ag.zeros(2).device) == "device(type='cpu')"


# ----------------------------------------------------------------------------- no cupy
@pytest.mark.skipif(HAS_CUPY, reason="cupy is installed here")
def test_cuda_queries_without_cupy():
    assert registry._cuda is None
    assert ag.cuda.is_available() is False
    assert ag.cuda.device_count() == 0
    assert ag.cuda.synchronize() is None  # a no-op, not an error


@pytest.mark.skipif(HAS_CUPY, reason="cupy is installed here")
@pytest.mark.parametrize(
    "make",
    [
        lambda: ag.tensor([1.0, 2.0], device="cuda"),
        lambda: ag.zeros(3, device="cuda"),
        lambda: ag.randn(3, device="cuda:0"),
        lambda: ag.ones(2).cuda(),
        lambda: ag.ones(2).to("cuda"),
    ],
)
def test_cuda_tensor_without_cupy_is_a_clear_error(make):
    with pytest.raises(RuntimeError, match="cupy") as info:
        make()
    assert "autogradcli[cuda]" in str(info.value)
    assert registry._cuda is None


# ----------------------------------------------------------------------------- the stand-in
def test_stand_in_refuses_numpy():
    a = strict_cupy.asarray(np.arange(6.0).reshape(2, 3))
    assert type(a) is StrictArray
    with pytest.raises(TypeError, match="Implicit conversion to a NumPy array is not allowed"):
        np.asarray(a)
    with pytest.raises(TypeError):
        np.exp(a)
    with pytest.raises(TypeError):
        np.sum(a)
    with pytest.raises(TypeError):
        np.matmul(a, a.T)
    with pytest.raises(TypeError):
        np.concatenate([a, a])
    assert IMPLICIT_MSG.startswith("Implicit conversion")


def test_stand_in_refuses_host_arrays_in_device_ops():
    a = strict_cupy.ones(3)
    host = np.ones(3)
    with pytest.raises(TypeError, match="Unsupported type"):
        a + host
    with pytest.raises(TypeError, match="Unsupported type"):
        host + a
    with pytest.raises(TypeError, match="Unsupported type"):
        strict_cupy.exp(host)
    with pytest.raises(TypeError, match="Unsupported type"):
        strict_cupy.maximum(a, host)
    with pytest.raises(TypeError, match="Unsupported type"):
        a[...] = host


def test_stand_in_behaves_like_cupy():
    xp = strict_cupy
    a = xp.asarray(np.arange(6.0).reshape(2, 3))
    s = a.sum()
    assert type(s) is StrictArray and s.ndim == 0 and float(s) == 15.0  # 0-d, not a scalar
    assert type(a[0, 1]) is StrictArray and a[0, 1].item() == 1.0
    assert type(np.float32(2.0) * a) is StrictArray  # numpy scalars defer to the array
    assert (a.T.shape, a.ndim, a.size, a.itemsize, a.strides) == ((3, 2), 2, 6, 8, (24, 8))
    assert a.flags.c_contiguous and a.device.id == 0 and a.dtype == np.float64
    b = a.copy()
    b += 1
    b[0] = xp.zeros(3)
    assert b.tolist() == [[0.0, 0.0, 0.0], [4.0, 5.0, 6.0]]
    assert isinstance(a.get(), np.ndarray) and isinstance(xp.asnumpy(a), np.ndarray)
    v = a.view()
    v.shape = (3, 2)
    with pytest.raises(AttributeError):
        a.T.view().shape = (6,)
    out = xp.zeros(4)
    xp.add.at(out, xp.asarray([0, 0, 2]), 1.0)
    assert out.tolist() == [2.0, 0.0, 1.0, 0.0]
    st = xp.lib.stride_tricks.as_strided(a, shape=(2, 2), strides=(24, 8))
    assert type(st) is StrictArray and st.tolist() == [[0.0, 1.0], [3.0, 4.0]]
    g = xp.random.default_rng(0)
    assert type(g.standard_normal((2, 2), dtype=np.float32)) is StrictArray
    assert not hasattr(g, "normal") and not hasattr(g, "permutation")  # as cupy's Generator
    assert xp.cuda.runtime.getDeviceCount() == 1
    xp.cuda.Stream.null.synchronize()
    assert xp.__name__ != np.__name__


def test_strict_cuda_fixture_installs_and_restores(strict_cuda):
    assert strict_cuda is strict_cupy
    assert registry.cuda_module() is strict_cupy
    assert ag.cuda.is_available() and ag.cuda.device_count() == 1
    ag.cuda.synchronize()
    assert type(ag.zeros(2, device="cuda")._data) is StrictArray


def test_a_seam_violation_fails_on_the_stand_in(strict_cuda):
    """The reason for the stand-in: an op that calls numpy on its array passes on the CPU only."""

    class NumpyExp(Function):
        @staticmethod
        def forward(ctx, x):
            return np.exp(x._data)  # the bug: np instead of xp

        @staticmethod
        def backward(ctx, g):
            return g

    assert np.allclose(NumpyExp.apply(ag.zeros(2)).numpy(), 1.0)
    with pytest.raises(TypeError):
        NumpyExp.apply(ag.zeros(2, device="cuda"))


# ----------------------------------------------------------------------------- device moves
def test_tensors_on_the_stand_in(strict_cuda):
    x = ag.tensor([[1.0, -2.0], [3.0, 4.0]], device="cuda", requires_grad=True)
    assert type(x._data) is StrictArray
    assert x.is_cuda and repr(x.device) == "device(type='cuda', index=0)"
    assert repr(x) == (
        "tensor([[ 1., -2.],\n        [ 3.,  4.]], device='cuda:0', requires_grad=True)"
    )
    assert x.sum().item() == 6.0 and x.tolist() == [[1.0, -2.0], [3.0, 4.0]]
    assert ag.zeros_like(x).device == x.device and ag.randn_like(x).device == x.device
    assert float(x[1, 1]) == 4.0 and x.data_ptr() != 0 and x.stride() == (2, 1)


def test_mixing_devices_names_both(strict_cuda):
    a = ag.ones(3, device="cuda")
    b = ag.ones(3)
    for op in (lambda: a + b, lambda: b * a, lambda: ag.maximum(a, b), lambda: a @ b):
        with pytest.raises(RuntimeError, match="same device") as info:
            op()
        assert "cuda:0" in str(info.value) and "cpu" in str(info.value)
    # as in PyTorch, a 0-d CPU tensor joins a CUDA op as a scalar would
    assert (a * ag.tensor(2.0)).device == a.device


def test_round_trips_carry_gradients_across_devices(strict_cuda):
    x = ag.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.cuda()
    assert y.is_cuda and y.grad_fn is not None and y.grad_fn.name() == "ToCopyBackward0"
    z = (y * y).cpu()
    assert z.device.type == "cpu"
    z.sum().backward()
    assert x.grad.device.type == "cpu"
    assert x.grad.tolist() == [2.0, 4.0, 6.0]

    w = ag.tensor([0.5, -1.0], device="cuda", requires_grad=True)
    (w.to("cpu") ** 2).sum().backward()
    assert w.grad.is_cuda and type(w.grad._data) is StrictArray
    assert w.grad.tolist() == [1.0, -2.0]

    c = ag.ones(2).to("cuda:0")
    assert c.to("cuda") is c and c.cuda() is c and c.cpu().cpu().device.type == "cpu"
    assert c.to(ag.float64).is_cuda and c.double().dtype == ag.float64


def test_numpy_of_a_cuda_tensor_is_torchs_type_error(strict_cuda):
    t = ag.ones(2, device="cuda")
    with pytest.raises(TypeError) as info:
        t.numpy()
    assert str(info.value) == (
        "can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor "
        "to host memory first."
    )
    assert t.cpu().numpy().tolist() == [1.0, 1.0]
    assert np.asarray(t).tolist() == [1.0, 1.0]  # __array__ copies to the host explicitly


def test_cuda_random_is_seeded_by_manual_seed(strict_cuda):
    ag.manual_seed(123)
    a = ag.randn(4, 3, device="cuda")
    b = ag.rand(5, device="cuda")
    p = ag.randperm(6, device="cuda")
    ag.manual_seed(123)
    assert ag.randn(4, 3, device="cuda").tolist() == a.tolist()
    assert ag.rand(5, device="cuda").tolist() == b.tolist()
    assert ag.randperm(6, device="cuda").tolist() == p.tolist()
    assert sorted(p.tolist()) == list(range(6)) and p.dtype == ag.int64
    assert type(a._data) is StrictArray and a.dtype == ag.float32
    assert ag.randn(4, 3, device="cuda").tolist() != a.tolist()
    t = ag.zeros(1000, device="cuda").normal_(2.0, 0.5)
    assert abs(t.mean().item() - 2.0) < 0.1
    ag.manual_seed(7)
    u = ag.empty(3, device="cuda").uniform_(-1.0, 1.0)
    ag.manual_seed(7)
    assert ag.empty(3, device="cuda").uniform_(-1.0, 1.0).tolist() == u.tolist()


def test_a_training_step_on_the_stand_in(strict_cuda):
    ag.manual_seed(0)
    x = ag.randn(16, 3, device="cuda")
    y = x @ ag.tensor([[1.0], [-2.0], [0.5]], device="cuda") + 0.3
    w = ag.zeros(3, 1, device="cuda", requires_grad=True)
    b = ag.zeros(1, device="cuda", requires_grad=True)
    losses = []
    for _ in range(30):
        loss = ((x @ w + b - y) ** 2).mean()
        losses.append(loss.item())
        w.grad = b.grad = None
        loss.backward()
        with ag.no_grad():
            w.sub_(w.grad * 0.2)
            b.sub_(b.grad * 0.2)
    assert w.is_cuda and type(w._data) is StrictArray
    assert losses[-1] < losses[0] * 0.05
