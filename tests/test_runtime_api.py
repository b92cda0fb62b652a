"""PyTorch's everyday runtime API that ported programs call (issue 9), compared with PyTorch:
``equal/allclose/isclose``, ``testing.assert_close`` (tolerances and messages), devices and
``accelerator``, ``set_default_device``, ``inference_mode``, ``autocast``/``GradScaler``,
``save(model)`` refused with the safe alternative, and the old Function call styles."""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pytest

import autogradcli as ag
from autogradcli.autograd import Function, gradcheck


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


# ----------------------------------------------------------------- equal / isclose / allclose
def test_equal_like_torch(torch):
    cases = [([1.0, 2.0], [1.0, 2.0]), ([1.0, 2.0], [1.0, 2.5]), ([1.0, 2.0], [[1.0, 2.0]]),
             ([1, 2], [1.0, 2.0])]  # fmt: skip
    for a, b in cases:
        assert ag.equal(ag.tensor(a), ag.tensor(b)) == torch.equal(torch.tensor(a), torch.tensor(b))
    assert ag.ones(2).equal(ag.ones(2))


@pytest.mark.parametrize("rtol,atol", [(1e-5, 1e-8), (0.0, 0.1), (0.01, 0.0)])
def test_isclose_allclose_like_torch(torch, rtol, atol):
    a = np.array([1.0, 2.0, 0.0, np.inf, np.nan, -np.inf, 100.0], dtype=np.float32)
    b = a + np.array([0.0, 0.0999, 0.1001, 0.0, 0.0, 0.0, 1.0], dtype=np.float32)
    for equal_nan in (False, True):
        ours = ag.isclose(ag.tensor(a), ag.tensor(b), rtol, atol, equal_nan)
        ref = torch.isclose(torch.tensor(a), torch.tensor(b), rtol, atol, equal_nan)
        assert ours.tolist() == ref.tolist() and ours.dtype == ag.bool
        assert ag.allclose(ag.tensor(a[:3]), ag.tensor(b[:3]), rtol, atol) == torch.allclose(
            torch.tensor(a[:3]), torch.tensor(b[:3]), rtol, atol
        )


def test_allclose_tolerance_edges():
    # |a - b| <= atol + rtol * |b|: just inside and just outside (float64, exact here)
    b = ag.tensor([100.0], dtype=ag.float64)
    assert ag.allclose(ag.tensor([100.0 + 1e-3 * 0.999], dtype=ag.float64), b, rtol=1e-5, atol=0.0)
    assert not ag.allclose(
        ag.tensor([100.0 + 1e-3 * 1.001], dtype=ag.float64), b, rtol=1e-5, atol=0.0
    )


def test_isclose_errors_like_torch(torch):
    for call in (
        lambda m: m.isclose(m.tensor([1.0]), m.tensor([1])),
        lambda m: m.allclose(m.tensor([1.0]), m.tensor([1.0], dtype=m.float64)),
        lambda m: m.isclose(m.tensor([1.0]), m.tensor([1.0]), rtol=-1),
    ):
        with pytest.raises(RuntimeError) as ref:
            call(torch)
        with pytest.raises(RuntimeError) as ours:
            call(ag)
        assert str(ours.value) == str(ref.value)


# ----------------------------------------------------------------- testing.assert_close
CLOSE_CASES = [
    ([1.0, 2.0, 3.0], [1.0, 2.1, 3.0], {}),
    ([[1, 2], [3, 4]], [[1, 2], [3, 5]], {}),
    ([0.0, 1.0], [1e-3, 1.0], {}),
    ([1.0, 2.0], [1.0, 2.5], {"rtol": 1e-3, "atol": 1e-3}),
    ([1.0, 2.0], [1.0, 2.0 + 2e-5], {}),
]


@pytest.mark.parametrize("a,b,kw", CLOSE_CASES)
def test_assert_close_messages_like_torch(torch, a, b, kw):
    with pytest.raises(AssertionError) as ref:
        torch.testing.assert_close(torch.tensor(a), torch.tensor(b), **kw)
    with pytest.raises(AssertionError) as ours:
        ag.testing.assert_close(ag.tensor(a), ag.tensor(b), **kw)
    assert str(ours.value) == str(ref.value)


def test_assert_close_default_tolerances_edges(torch):
    # float32: atol 1e-5 + rtol 1.3e-6 * |expected|; at expected = 1: 1.13e-5
    for delta, ok in ((1.0e-5, True), (1.2e-5, False)):
        exp = np.array([1.0], dtype=np.float64)
        act = exp + delta
        for dtype in (np.float64, np.float32):  # float64's 1e-7 tolerances refuse both
            a, e = act.astype(dtype), exp.astype(dtype)
            ours = _passes(ag.testing.assert_close, ag.tensor(a), ag.tensor(e))
            ref = _passes(torch.testing.assert_close, torch.tensor(a), torch.tensor(e))
            assert ours == ref == (ok and dtype == np.float32)


def _passes(fn, *args) -> bool:
    try:
        fn(*args)
    except AssertionError:
        return False
    return True


def test_assert_close_other_checks_like_torch(torch):
    for call in (
        lambda m: m.testing.assert_close(m.tensor([1.0, 2.0]), m.tensor([1.0, 2.0, 3.0])),
        lambda m: m.testing.assert_close(1.0, 1.1),
        lambda m: m.testing.assert_close(m.tensor(1.0), m.tensor(1.5)),
        lambda m: m.testing.assert_close(m.tensor([1.0]), m.tensor([2.0]), msg="custom"),
    ):
        with pytest.raises(AssertionError) as ref:
            call(torch)
        with pytest.raises(AssertionError) as ours:
            call(ag)
        assert str(ours.value).replace("autogradcli", "torch") == str(ref.value)
    with pytest.raises(AssertionError, match="'dtype' do not match"):
        ag.testing.assert_close(ag.tensor([1.0]), ag.tensor([1.0], dtype=ag.float64))
    ag.testing.assert_close(ag.tensor([1.0]), ag.tensor([1.0], dtype=ag.float64), check_dtype=False)
    ag.testing.assert_close({"a": [ag.ones(2)]}, {"a": [ag.ones(2)]})
    with pytest.raises(ValueError, match="Both 'rtol' and 'atol'"):
        ag.testing.assert_close(ag.ones(1), ag.ones(1), rtol=1e-3)
    with pytest.raises(TypeError, match="No comparison pair"):
        ag.testing.assert_close(ag.ones(1), [1.0])


# ----------------------------------------------------------------- devices
def test_device_queries_without_a_gpu(torch):
    assert ag.accelerator.is_available() is False or ag.cuda.is_available()
    if not ag.cuda.is_available():
        assert ag.accelerator.current_accelerator() is None
        assert ag.accelerator.device_count() == 0
    dev = ag.device("cpu")
    x = ag.ones(2, device=dev)
    assert x.device == dev and x.to(dev) is x and x.cpu() is x
    assert ag.zeros(2, device=ag.device("cpu")).device.type == "cpu"
    assert ag.tensor([1.0], device="cpu").to(ag.device("cpu"), ag.float64).dtype == ag.float64
    assert str(ag.device("cpu")) == str(torch.device("cpu"))
    assert repr(ag.device("cuda", 0)) == repr(torch.device("cuda", 0))


def test_set_default_device_cpu_roundtrip(torch):
    try:
        ag.set_default_device("cpu")
        assert ag.get_default_device() == ag.device("cpu") == ag.randn(2).device
        assert ag.tensor([1.0]).device.type == "cpu"
    finally:
        ag.set_default_device(None)
    assert ag.get_default_device() == ag.device("cpu")


def test_set_default_device_cuda_on_strict_stand_in(strict_cuda):
    try:
        ag.set_default_device("cuda")
        for t in (ag.zeros(2), ag.randn(2, 3), ag.tensor([1.0, 2.0]), ag.arange(3.0)):
            assert t.device.type == "cuda"
        y = (ag.tensor([1.0, 2.0]) * 2).sort(descending=True).values
        assert y.device.type == "cuda" and y.cpu().tolist() == [4.0, 2.0]
    finally:
        ag.set_default_device(None)
    assert ag.zeros(1).device.type == "cpu"


# ----------------------------------------------------------------- grad modes, autocast
def test_inference_mode_like_torch(torch):
    for lib in (ag, torch):
        x = lib.ones(2, requires_grad=True)
        with lib.inference_mode():
            assert not (x * 2).requires_grad and lib.is_inference_mode_enabled()
        with lib.inference_mode(False):
            assert (x * 2).requires_grad

        @lib.inference_mode()
        def f(t):
            return t * 2

        @lib.inference_mode
        def g(t):
            return t * 2

        assert not f(x).requires_grad and not g(x).requires_grad
        assert (x * 2).requires_grad and not lib.is_inference_mode_enabled()


def test_autocast_changes_nothing_on_float32():
    x, w = ag.randn(3, 4), ag.randn(4, 2)
    with ag.autocast("cpu"):
        y = x @ w
    with ag.autocast(device_type="cuda", dtype=ag.float16, enabled=True):
        z = x @ w
    assert y.dtype == z.dtype == ag.float32 and ag.equal(y, x @ w) and ag.equal(z, y)
    scaler = ag.amp.GradScaler()
    loss = (x @ w).sum()
    assert scaler.scale(loss) is loss
    with pytest.raises(ValueError, match="device_type"):
        ag.autocast(0)


# ----------------------------------------------------------------- save(model)
def test_save_of_a_module_pickles_it_and_load_refuses_it_as_pytorch_2_6_does(tmp_path):
    import pickle

    model = ag.nn.Linear(2, 2)
    path = tmp_path / "model.pt"
    ag.save(model, path)  # issue 20: torch.save(model, path) works, classes by reference
    with pytest.raises(pickle.UnpicklingError, match="weights_only"):
        ag.load(path)
    assert ag.equal(ag.load(path, weights_only=False).weight, model.weight)
    ag.save(model.state_dict(), path)  # the state dict stays in the pickle-free format
    fresh = ag.nn.Linear(2, 2)
    fresh.load_state_dict(ag.load(path))
    assert ag.equal(fresh.weight, model.weight)


# ----------------------------------------------------------------- Function call styles
class Legacy(Function):
    """The pre-0.4 instance style: state from __init__, self as ctx."""

    def __init__(self, scale=2.0):
        super().__init__()
        self.scale = scale

    def forward(self, x, w):
        self.save_for_backward(x, w)
        return x.mm(w) * self.scale

    def backward(self, g):
        x, w = self.saved_tensors
        return g.mm(w.t()) * self.scale, x.t().mm(g) * self.scale


def test_instance_style_function_reused_by_gradcheck():
    fn = Legacy(3.0)
    x = ag.randn(3, 4, dtype=ag.float64, requires_grad=True)
    w = ag.randn(4, 2, dtype=ag.float64, requires_grad=True)
    assert gradcheck(fn, (x, w), eps=1e-6, atol=1e-4)
    y1, y2 = fn(x, w), fn(x, w)  # the same object, again
    assert ag.allclose(y1, y2) and y1.grad_fn is not y2.grad_fn
    y1.sum().backward()
    assert ag.allclose(x.grad, ag.ones(3, 2, dtype=ag.float64).mm(w.detach().t()) * 3.0)


def test_static_function_instance_call_and_saved_variables(torch):
    class Double(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            (saved,) = ctx.saved_variables
            return g * 2 + saved * 0

    x = ag.ones(2, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Double()(x).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
    messages = [(w.category, str(w.message)) for w in caught]
    assert (DeprecationWarning, "'saved_variables' is deprecated; use 'saved_tensors'") in messages
    ours = next(m for _, m in messages if "should not be instantiated" in m)

    class TDouble(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    # PyTorch 2 refuses the call after warning
    with pytest.warns(DeprecationWarning) as ref, contextlib.suppress(RuntimeError):
        TDouble()(torch.ones(1))
    ref_msg = str(ref[0].message)
    assert ours.split("'> ", 1)[1] == ref_msg.split("'> ", 1)[1]
