"""``autogradcli.distributions`` against ``torch.distributions`` on identical parameters:
probs/logits, log_prob, entropy, mean/variance and their gradients; samples' shapes, dtypes and
frequencies; validation errors; and the samplers under them (``multinomial``, ``bernoulli``,
``normal``)."""

import math

import numpy as np
import pytest

import autogradcli as ag
from autogradcli.distributions import Bernoulli, Categorical, Normal


def _t(torch, arr, grad=True):
    return torch.tensor(np.array(arr), requires_grad=grad)


def _a(arr, grad=True):
    return ag.tensor(np.array(arr), requires_grad=grad)


def _close(ours, theirs, tol=1e-10):
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), atol=tol, rtol=tol)


P = [[0.2, 0.3, 0.5], [0.1, 0.0, 0.9]]
VALUES = [[2, 1], [0, 2], [1, 0]]


@pytest.mark.parametrize("by", ["probs", "logits"])
def test_categorical_matches_torch(by):
    torch = pytest.importorskip("torch")
    raw = np.array(P) * 3 if by == "probs" else np.log(np.array(P) + 0.05)
    pt, pa = _t(torch, raw), _a(raw)
    dt = torch.distributions.Categorical(**{by: pt})
    da = Categorical(**{by: pa})
    _close(da.probs, dt.probs)
    _close(da.logits, dt.logits)
    assert tuple(da.batch_shape) == tuple(dt.batch_shape) == (2,)
    assert tuple(da.event_shape) == ()
    vt, va = torch.tensor(VALUES), ag.tensor(VALUES)
    lt, la = dt.log_prob(vt), da.log_prob(va)
    _close(la, lt)
    et, ea = dt.entropy(), da.entropy()
    _close(ea, et)
    (lt.sum() + et.sum()).backward()
    (la.sum() + ea.sum()).backward()
    _close(pa.grad, pt.grad)
    assert repr(da).replace("autogradcli", "torch") == repr(dt)


def test_categorical_sample_shapes_and_frequencies():
    ag.manual_seed(0)
    d = Categorical(ag.tensor([0.2, 0.3, 0.5]))
    one = d.sample()
    assert one.shape == () and one.dtype == ag.int64
    many = d.sample((4000,))
    assert many.shape == (4000,)
    freq = np.bincount(many.numpy(), minlength=3) / 4000
    # 4000 draws: each frequency within 4 standard errors (<= 0.032) of its probability
    np.testing.assert_allclose(freq, [0.2, 0.3, 0.5], atol=0.032)
    batched = Categorical(logits=ag.zeros(2, 5)).sample((3, 4))
    assert batched.shape == (3, 4, 2)
    zero = Categorical(ag.tensor([0.0, 1.0, 0.0])).sample((50,))
    assert (zero.numpy() == 1).all()


def test_categorical_errors_match_torch():
    torch = pytest.importorskip("torch")
    for kwargs in [{}, {"probs": [0.5, 0.5], "logits": [0.0, 0.0]}]:
        with pytest.raises(ValueError) as theirs:
            torch.distributions.Categorical(**{k: torch.tensor(v) for k, v in kwargs.items()})
        with pytest.raises(ValueError) as ours:
            Categorical(**{k: ag.tensor(v) for k, v in kwargs.items()})
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(ValueError, match="to satisfy the constraint Simplex"):
        Categorical(ag.tensor([0.5, -0.1, 0.6]))
    with pytest.raises(
        ValueError, match=r"within the support \(IntegerInterval\(lower_bound=0, upper_bound=2\)\)"
    ):
        Categorical(ag.tensor([0.2, 0.3, 0.5])).log_prob(ag.tensor(3))
    Categorical(ag.tensor([0.2, 0.3, 0.5]), validate_args=False).log_prob(ag.tensor(2))


def test_normal_matches_torch():
    torch = pytest.importorskip("torch")
    loc, scale = [0.5, -1.0, 2.0], [1.0, 0.3, 2.5]
    lt, st, la, sa = _t(torch, loc), _t(torch, scale), _a(loc), _a(scale)
    dt, da = torch.distributions.Normal(lt, st), Normal(la, sa)
    x = [0.1, -0.7, 4.0]
    pt, pa = dt.log_prob(torch.tensor(x)), da.log_prob(ag.tensor(x))
    _close(pa, pt)
    _close(da.entropy(), dt.entropy())
    _close(da.variance, dt.variance)
    _close(da.cdf(ag.tensor(x)), dt.cdf(torch.tensor(x)))
    (pt.sum() + dt.entropy().sum()).backward()
    (pa.sum() + da.entropy().sum()).backward()
    _close(la.grad, lt.grad)
    _close(sa.grad, st.grad)
    scalar = Normal(0.0, 1.0)
    assert scalar.batch_shape == () and scalar.loc.dtype == ag.float32
    assert (
        repr(Normal(ag.zeros(2), ag.ones(2)))
        == "Normal(loc: autogradcli.Size([2]), scale: autogradcli.Size([2]))"
    )


def test_normal_rsample_carries_gradients_and_sample_statistics():
    ag.manual_seed(1)
    loc = ag.tensor([1.0, -2.0], requires_grad=True)
    scale = ag.tensor([0.5, 2.0], requires_grad=True)
    d = Normal(loc, scale)
    r = d.rsample((5000,))
    assert r.shape == (5000, 2)
    r.sum().backward()
    np.testing.assert_allclose(loc.grad.numpy(), [5000.0, 5000.0])
    eps = (r.detach() - loc.detach()) / scale.detach()
    np.testing.assert_allclose(scale.grad.numpy(), eps.sum(0).numpy(), rtol=1e-5)
    s = d.sample((5000,))
    assert not s.requires_grad
    # 5000 draws: means within 4 standard errors (4 * scale / sqrt(5000))
    np.testing.assert_allclose(s.numpy().mean(0), [1.0, -2.0], atol=4 * 2.0 / math.sqrt(5000))
    with pytest.raises(ValueError, match="GreaterThan"):
        Normal(0.0, ag.tensor([-1.0]))


@pytest.mark.parametrize("by", ["probs", "logits"])
def test_bernoulli_matches_torch(by):
    torch = pytest.importorskip("torch")
    raw = [0.1, 0.5, 0.9] if by == "probs" else [-2.0, 0.0, 3.0]
    pt, pa = _t(torch, raw), _a(raw)
    dt, da = torch.distributions.Bernoulli(**{by: pt}), Bernoulli(**{by: pa})
    _close(da.probs, dt.probs)
    _close(da.logits, dt.logits)
    v = np.array([1.0, 0.0, 1.0])
    lt, la = dt.log_prob(torch.tensor(v)), da.log_prob(ag.tensor(v))
    _close(la, lt)
    _close(da.entropy(), dt.entropy())
    (lt.sum() + dt.entropy().sum()).backward()
    (la.sum() + da.entropy().sum()).backward()
    _close(pa.grad, pt.grad)
    ag.manual_seed(2)
    s = Bernoulli(ag.tensor([0.25])).sample((4000,))
    assert s.shape == (4000, 1) and s.dtype == ag.float32
    assert abs(float(s.mean()) - 0.25) < 4 * math.sqrt(0.25 * 0.75 / 4000)
    with pytest.raises(ValueError, match="Boolean"):
        Bernoulli(ag.tensor([0.5])).log_prob(ag.tensor([2.0]))


def test_multinomial_without_replacement_and_errors():
    torch = pytest.importorskip("torch")
    ag.manual_seed(3)
    w = ag.tensor([[1.0, 0.0, 3.0, 2.0], [0.0, 0.0, 1.0, 1.0]])
    s = ag.multinomial(w, 2)
    assert s.shape == (2, 2) and s.dtype == ag.int64
    for row, picks in zip(w.numpy(), s.numpy()):
        assert len(set(picks)) == 2 and all(row[p] > 0 for p in picks)
    cases = [
        lambda m: m.multinomial(m.tensor([1.0, 2.0]), 3),
        lambda m: m.multinomial(m.tensor([1.0, -2.0]), 1),
        lambda m: m.multinomial(m.tensor([0.0, 0.0]), 1),
        lambda m: m.multinomial(m.tensor([1.0]), 0),
    ]
    for case in cases:
        with pytest.raises(RuntimeError) as theirs:
            case(torch)
        with pytest.raises(RuntimeError) as ours:
            case(ag)
        assert str(ours.value) == str(theirs.value)
    short = ag.multinomial(ag.tensor([1.0, 0.0, 0.0]), 2)  # positive weights run out: as torch
    assert short.numpy()[0] == 0 and len(set(short.numpy())) == 2
    # with replacement: frequencies follow the weights (4 standard errors of 4000 draws)
    freq = (
        np.bincount(ag.multinomial(ag.tensor([1.0, 3.0]), 4000, True).numpy(), minlength=2) / 4000
    )
    np.testing.assert_allclose(freq, [0.25, 0.75], atol=4 * math.sqrt(0.25 * 0.75 / 4000))


def test_normal_function_forms():
    ag.manual_seed(4)
    x = ag.normal(2.0, 0.5, (3000,))
    assert x.dtype == ag.float32 and x.shape == (3000,)
    assert abs(float(x.mean()) - 2.0) < 4 * 0.5 / math.sqrt(3000)
    m = ag.tensor([0.0, 10.0], dtype=ag.float64)
    y = ag.normal(m, 0.0)
    np.testing.assert_array_equal(y.numpy(), [0.0, 10.0])
    assert y.dtype == ag.float64
    with pytest.raises(RuntimeError, match=r"normal expects std >= 0\.0"):
        ag.normal(0.0, -1.0, (2,))


def test_samplers_on_strict_device(strict_cuda):
    ag.manual_seed(5)
    probs = ag.tensor([0.2, 0.8], device="cuda")
    assert Categorical(probs).sample((7,)).device.type == "cuda"
    assert ag.multinomial(probs, 2).device.type == "cuda"
    assert ag.bernoulli(probs).device.type == "cuda"
    assert (
        Normal(ag.zeros(2, device="cuda"), ag.ones(2, device="cuda")).rsample().device.type
        == "cuda"
    )
    assert ag.unique(ag.tensor([2, 1, 2], device="cuda")).device.type == "cuda"
