"""nn layers, containers, init and nn.functional against PyTorch from identical weights."""

from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np
import pytest
from lazy_torch import torch
from oracle import check

import autogradcli as ag
from autogradcli import nn
from autogradcli.nn import functional as F
from autogradcli.nn import init


def _np(t):
    if isinstance(t, ag.Tensor):
        return np.asarray(t.detach())
    return t.detach().numpy()


def copy_weights(ours, theirs):
    """Load torch's parameters and buffers into our module through state_dict."""
    sd = OrderedDict((k, ag.tensor(v.detach().numpy())) for k, v in theirs.state_dict().items())
    ours.load_state_dict(sd)


def run_both(ours, theirs, x, dtype="float64", check_grads=True, rtol=1e-9):
    """Forward and backward of both modules on ``x``; compare outputs, input and weight grads."""
    x = x.astype(dtype)
    xo = ag.tensor(x, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    yo, yt = ours(xo), theirs(xt)
    np.testing.assert_allclose(_np(yo), _np(yt), rtol=rtol, atol=rtol)
    if not check_grads:
        return
    up = np.random.default_rng(1).standard_normal(tuple(yt.shape)).astype(dtype)
    yo.backward(ag.tensor(up))
    yt.backward(torch.tensor(up))
    np.testing.assert_allclose(_np(xo.grad), _np(xt.grad), rtol=rtol, atol=rtol)
    theirs_params = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(
            _np(p.grad), _np(theirs_params[name].grad), rtol=rtol, atol=rtol, err_msg=name
        )


# ----------------------------------------------------------------------- Linear
@pytest.mark.parametrize("shape", [(5, 3), (2, 4, 3), (3,)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_matches_torch(shape, bias):
    theirs = torch.nn.Linear(3, 4, bias=bias).double()
    ours = nn.Linear(3, 4, bias=bias).double()
    copy_weights(ours, theirs)
    run_both(ours, theirs, np.random.default_rng(0).standard_normal(shape))


@pytest.mark.parametrize("shape", [(5, 3), (2, 4, 3)])
def test_functional_linear_double_backward(shape):
    check(lambda m, x, w, b: m.nn.functional.linear(x, w, b), shape, (4, 3), (4,))
    check(lambda m, x, w: m.nn.functional.linear(x, w), shape, (4, 3), dtype="float32")


def test_linear_is_one_node_and_errors():
    lin = nn.Linear(3, 4)
    y = lin(ag.randn(2, 3))
    assert type(y.grad_fn).__name__ == "AddmmBackward0"
    assert {type(e[0]).__name__ for e in y.grad_fn.next_functions} == {"AccumulateGrad", "NoneType"}

    def shapes(lib):
        lib.nn.functional.linear(lib.ones(2, 3), lib.ones(4, 5))

    def dtypes(lib):
        lib.nn.functional.linear(lib.ones(2, 3, dtype=lib.float64), lib.ones(4, 3))

    for fn in (shapes, dtypes):
        with pytest.raises(RuntimeError) as theirs:
            fn(torch)
        with pytest.raises(RuntimeError) as ours:
            fn(ag)
        assert str(ours.value) == str(theirs.value)


def test_linear_default_init_bounds():
    ag.manual_seed(0)
    lin = nn.Linear(50, 400)
    bound = 1 / math.sqrt(50)
    w, b = _np(lin.weight), _np(lin.bias)
    assert w.shape == (400, 50) and lin.weight.dtype == ag.float32
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.99 * bound
    assert np.abs(b).max() <= bound and np.abs(b).max() > 0.9 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.01 * bound
    assert nn.Linear(2, 3, dtype=ag.float64).weight.dtype == ag.float64


def test_identity():
    x = ag.randn(2, 3)
    assert nn.Identity(54, unused="x")(x) is x
    assert repr(nn.Identity(3)) == repr(torch.nn.Identity(3))


# ----------------------------------------------------------------------- init
def test_calculate_gain_and_fans():
    for name, param in [
        ("linear", None),
        ("conv2d", None),
        ("sigmoid", None),
        ("tanh", None),
        ("relu", None),
        ("leaky_relu", None),
        ("leaky_relu", 0.2),
        ("leaky_relu", 1),
        ("selu", None),
    ]:
        assert init.calculate_gain(name, param) == torch.nn.init.calculate_gain(name, param)
    for shape in [(3, 4), (8, 3, 5, 5), (2, 6, 7)]:
        assert init._calculate_fan_in_and_fan_out(
            ag.empty(*shape)
        ) == torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(*shape))
    for fn, exc in [
        (lambda m: m.nn.init.calculate_gain("foo"), ValueError),
        (lambda m: m.nn.init.calculate_gain("leaky_relu", "x"), ValueError),
        (lambda m: m.nn.init._calculate_fan_in_and_fan_out(m.empty(3)), ValueError),
        (lambda m: m.nn.init.kaiming_uniform_(m.empty(3, 4), mode="fan_avg"), ValueError),
        (lambda m: m.nn.init.eye_(m.empty(3)), ValueError),
    ]:
        with pytest.raises(exc) as theirs:
            fn(torch)
        with pytest.raises(exc) as ours:
            fn(ag)
        assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize(
    "fn, bound",
    [
        (lambda t: init.uniform_(t, -0.3, 0.7), (-0.3, 0.7)),
        (lambda t: init.xavier_uniform_(t), 1.0 * math.sqrt(6.0 / (200 + 300))),
        (lambda t: init.xavier_uniform_(t, gain=2.0), 2.0 * math.sqrt(6.0 / (200 + 300))),
        (lambda t: init.kaiming_uniform_(t), math.sqrt(2.0) * math.sqrt(3.0 / 300)),
        (
            lambda t: init.kaiming_uniform_(t, a=math.sqrt(5)),
            math.sqrt(2.0 / 6.0) * math.sqrt(3.0 / 300),
        ),
        (
            lambda t: init.kaiming_uniform_(t, mode="fan_out", nonlinearity="relu"),
            math.sqrt(2.0) * math.sqrt(3.0 / 200),
        ),
    ],
)
def test_uniform_inits_bounds(fn, bound):
    t = ag.empty(200, 300)
    assert fn(t) is t
    lo, hi = bound if isinstance(bound, tuple) else (-bound, bound)
    v = _np(t).astype(np.float64)
    eps = 1e-6 * (hi - lo)  # float32 rounding of the float64 draws
    assert v.min() >= lo - eps and v.max() <= hi + eps
    assert v.min() < lo + 0.01 * (hi - lo) and v.max() > hi - 0.01 * (hi - lo)
    assert abs(v.mean() - (lo + hi) / 2) < 0.01 * (hi - lo)


@pytest.mark.parametrize(
    "fn, mean, std",
    [
        (lambda t: init.normal_(t, 0.5, 2.0), 0.5, 2.0),
        (lambda t: init.xavier_normal_(t), 0.0, math.sqrt(2.0 / 500)),
        (lambda t: init.kaiming_normal_(t, nonlinearity="relu"), 0.0, math.sqrt(2.0 / 300)),
        (lambda t: init.kaiming_normal_(t, mode="fan_out"), 0.0, math.sqrt(2.0 / 200)),
    ],
)
def test_normal_inits_statistics(fn, mean, std):
    t = ag.empty(200, 300)
    v = _np(fn(t))
    assert abs(v.mean() - mean) < 0.02 * std + 1e-3
    assert abs(v.std() - std) < 0.02 * std


def test_trunc_normal_constant_eye_and_grad_free():
    t = ag.empty(100, 100, requires_grad=True)
    v = _np(init.trunc_normal_(t, mean=0.5, std=1.0, a=-1.0, b=1.5).detach())
    assert v.min() >= -1.0 and v.max() <= 1.5 and t.is_leaf and t.grad_fn is None
    theirs = torch.nn.init.trunc_normal_(torch.empty(100, 100), 0.5, 1.0, -1.0, 1.5).numpy()
    assert abs(v.mean() - theirs.mean()) < 0.03 and abs(v.std() - theirs.std()) < 0.03
    assert _np(init.constant_(ag.empty(2, 2), 3.5).detach()).tolist() == [[3.5] * 2] * 2
    assert _np(init.ones_(ag.empty(2))).tolist() == [1.0, 1.0]
    assert _np(init.zeros_(ag.empty(2))).tolist() == [0.0, 0.0]
    np.testing.assert_array_equal(_np(init.eye_(ag.empty(2, 3))), np.eye(2, 3))
    with pytest.warns(UserWarning, match="zero-element"):
        init.kaiming_uniform_(ag.empty(0, 3))


def test_init_uses_global_rng():
    ag.manual_seed(123)
    a = _np(nn.Linear(4, 4).weight)
    ag.manual_seed(123)
    b = _np(nn.Linear(4, 4).weight)
    np.testing.assert_array_equal(a, b)


# ----------------------------------------------------------------------- activations
ACTIVATIONS = [
    ("ReLU", (), {}),
    ("ReLU", (), {"inplace": True}),
    ("LeakyReLU", (), {}),
    ("LeakyReLU", (0.2,), {"inplace": True}),
    ("ELU", (), {}),
    ("ELU", (0.5,), {}),
    ("GELU", (), {}),
    ("GELU", (), {"approximate": "tanh"}),
    ("SiLU", (), {}),
    ("Tanh", (), {}),
    ("Sigmoid", (), {}),
    ("Softplus", (), {}),
    ("Softplus", (2.0, 1.0), {}),
    ("Softmax", (), {"dim": 1}),
    ("Softmax", (-1,), {}),
    ("LogSoftmax", (), {"dim": 1}),
    ("Hardtanh", (), {}),
    ("Hardtanh", (-0.5, 0.5), {}),
    ("LogSigmoid", (), {}),
    ("ReLU6", (), {}),
]


@pytest.mark.parametrize("name, args, kwargs", ACTIVATIONS)
def test_activation_modules_match_torch(name, args, kwargs):
    ours, theirs = getattr(nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    x = np.random.default_rng(0).standard_normal((4, 5)) * 3
    if kwargs.get("inplace"):  # in place on a non-leaf
        xo = ag.tensor(x, requires_grad=True)
        xt = torch.tensor(x, requires_grad=True)
        yo, yt = ours(xo * 1.0), theirs(xt * 1.0)
        np.testing.assert_allclose(_np(yo), _np(yt), rtol=1e-9, atol=1e-12)
        yo.sum().backward()
        yt.sum().backward()
        np.testing.assert_allclose(_np(xo.grad), _np(xt.grad), rtol=1e-9, atol=1e-12)
        return
    run_both(ours, theirs, x, rtol=1e-7)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: m.nn.functional.relu(x),
        lambda m, x: m.nn.functional.leaky_relu(x, 0.1),
        lambda m, x: m.nn.functional.elu(x),
        lambda m, x: m.nn.functional.gelu(x),
        lambda m, x: m.nn.functional.silu(x),
        lambda m, x: m.nn.functional.tanh(x),
        lambda m, x: m.nn.functional.sigmoid(x),
        lambda m, x: m.nn.functional.softplus(x, beta=2.0),
        lambda m, x: m.nn.functional.softmax(x, dim=0),
        lambda m, x: m.nn.functional.log_softmax(x, dim=-1),
        lambda m, x: m.nn.functional.softmax(x, dim=1, dtype=m.float64),
        lambda m, x: m.nn.functional.hardtanh(x, -0.5, 0.5),
    ],
)
def test_functional_activations(fn):
    check(fn, (3, 4))


def test_softmax_implicit_dim_warns():
    x = ag.randn(2, 3)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        y = F.softmax(x)
    np.testing.assert_allclose(_np(y).sum(1), [1.0, 1.0], rtol=1e-6)


def test_activation_errors():
    with pytest.raises(AssertionError, match=r"max_val \(0\.0\) must be greater than min_val"):
        nn.Hardtanh(1.0, 0.0)


# ----------------------------------------------------------------------- dropout
def test_dropout_train_eval_and_scaling():
    ag.manual_seed(0)
    d = nn.Dropout(0.25)
    assert repr(d) == repr(torch.nn.Dropout(0.25))
    assert repr(nn.Dropout(0.1, True)) == repr(torch.nn.Dropout(0.1, True))
    x = ag.ones(200, 100, requires_grad=True)
    y = d(x)
    v = _np(y)
    kept = v != 0
    assert np.allclose(v[kept], 1 / 0.75)
    assert abs(kept.mean() - 0.75) < 0.02
    y.sum().backward()
    np.testing.assert_array_equal(_np(x.grad), v)  # grad = mask / (1 - p)
    d.eval()
    assert d(x) is x
    assert F.dropout(x, 0.5, training=False) is x
    assert _np(F.dropout(x, 1.0)).sum() == 0
    assert F.dropout(x, 0.0) is x


def test_dropout_inplace_and_errors():
    ag.manual_seed(1)
    x = ag.ones(1000)
    assert F.dropout(x, 0.5, inplace=True) is x
    assert set(np.unique(_np(x)).tolist()) <= {0.0, 2.0}
    leaf = ag.ones(10, requires_grad=True)
    y = leaf * 1.0
    F.dropout(y, 0.5, inplace=True).sum().backward()
    np.testing.assert_array_equal(_np(leaf.grad), _np(y))
    for p in (-0.1, 1.5):
        with pytest.raises(ValueError) as theirs:
            torch.nn.Dropout(p)
        with pytest.raises(ValueError) as ours:
            nn.Dropout(p)
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        F.dropout(x, 2.0)


def test_dropout_double_backward():
    ag.manual_seed(3)
    x = ag.randn(5, 4, dtype=ag.float64, requires_grad=True)
    y = F.dropout(x, 0.3) ** 2
    (g,) = ag.autograd.grad(y.sum(), x, create_graph=True)
    (gg,) = ag.autograd.grad(g.sum(), x)
    mask = _np(F.dropout(ag.ones(1), 0.0))  # unused; the mask is recovered from y below
    assert mask.shape == (1,)
    m = (_np(y) != 0).astype(float) / 0.7
    np.testing.assert_allclose(_np(gg), 2 * m**2, rtol=1e-12)


# ----------------------------------------------------------------------- embedding
@pytest.mark.parametrize(
    "kwargs",
    [{}, {"padding_idx": 2}, {"padding_idx": -1}, {"scale_grad_by_freq": True, "padding_idx": 0}],
)
def test_embedding_matches_torch(kwargs):
    theirs = torch.nn.Embedding(7, 3, **kwargs).double()
    ours = nn.Embedding(7, 3, **kwargs).double()
    assert repr(ours) == repr(theirs)
    if "padding_idx" in kwargs:
        assert not _np(ours.weight)[ours.padding_idx].any()
    copy_weights(ours, theirs)
    idx = np.array([[0, 2, 6, 2], [1, 2, 5, 6]])
    yo, yt = ours(ag.tensor(idx)), theirs(torch.tensor(idx))
    np.testing.assert_allclose(_np(yo), _np(yt))
    up = np.random.default_rng(0).standard_normal((2, 4, 3))
    yo.backward(ag.tensor(up))
    yt.backward(torch.tensor(up))
    np.testing.assert_allclose(_np(ours.weight.grad), _np(theirs.weight.grad), rtol=1e-12)


def test_embedding_max_norm_and_from_pretrained():
    w = np.random.default_rng(0).standard_normal((6, 4)) * 3
    ours = nn.Embedding.from_pretrained(ag.tensor(w), freeze=False, max_norm=1.0)
    theirs = torch.nn.Embedding.from_pretrained(torch.tensor(w), freeze=False, max_norm=1.0)
    assert repr(ours) == repr(theirs)
    idx = np.array([1, 3, 3])
    np.testing.assert_allclose(_np(ours(ag.tensor(idx))), _np(theirs(torch.tensor(idx))), 1e-6)
    np.testing.assert_allclose(_np(ours.weight), _np(theirs.weight), rtol=1e-6)
    frozen = nn.Embedding.from_pretrained(ag.tensor(w))
    assert not frozen.weight.requires_grad


def test_embedding_errors_and_double_backward():
    e = nn.Embedding(4, 2)
    with pytest.raises(IndexError, match="index out of range in self"):
        e(ag.tensor([4]))
    with pytest.raises(RuntimeError) as theirs:
        torch.nn.Embedding(4, 2)(torch.tensor([1.0]))
    with pytest.raises(RuntimeError) as ours:
        e(ag.tensor([1.0]))
    assert str(ours.value).replace("autogradcli", "torch") == str(theirs.value)
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(4, 2, padding_idx=4)
    idx = np.array([[0, 1], [3, 1]])
    check(lambda m, w: m.nn.functional.embedding(m.tensor(idx), w) ** 2, (4, 2))
    check(lambda m, w: m.nn.functional.embedding(m.tensor(idx), w, padding_idx=1) ** 2, (4, 2))


def test_one_hot():
    idx = np.array([0, 2, 1])
    assert (
        F.one_hot(ag.tensor(idx), 4).tolist()
        == torch.nn.functional.one_hot(torch.tensor(idx), 4).tolist()
    )


# ----------------------------------------------------------------------- flatten
def test_flatten_unflatten():
    for ours, theirs in [
        (nn.Flatten(), torch.nn.Flatten()),
        (nn.Flatten(0, 1), torch.nn.Flatten(0, 1)),
        (nn.Unflatten(1, (2, 3)), torch.nn.Unflatten(1, (2, 3))),
        (nn.Unflatten(-1, [3, 1]), torch.nn.Unflatten(-1, [3, 1])),
    ]:
        assert repr(ours) == repr(theirs)
        run_both(ours, theirs, np.random.default_rng(0).standard_normal((4, 6, 3)))
    for bad in ((2.0, 3), 5):
        with pytest.raises(TypeError) as theirs_err:
            torch.nn.Unflatten(1, bad)
        with pytest.raises(TypeError) as ours_err:
            nn.Unflatten(1, bad)
        assert str(ours_err.value) == str(theirs_err.value)


# ----------------------------------------------------------------------- containers
def _mlp(lib):
    return lib.nn.Sequential(
        lib.nn.Linear(3, 8), lib.nn.Tanh(), lib.nn.Linear(8, 8), lib.nn.ReLU(), lib.nn.Linear(8, 2)
    )


def test_sequential_matches_torch():
    ours, theirs = _mlp(ag).double(), _mlp(torch).double()
    assert repr(ours) == repr(theirs)
    copy_weights(ours, theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    run_both(ours, theirs, np.random.default_rng(0).standard_normal((6, 3)))


def test_sequential_container_protocol():
    ours, theirs = _mlp(ag), _mlp(torch)
    assert len(ours) == 5 and isinstance(ours[0], nn.Linear) and isinstance(ours[-1], nn.Linear)
    assert repr(ours[1:3]) == repr(theirs[1:3]) and isinstance(ours[1:3], nn.Sequential)
    assert [type(m).__name__ for m in ours] == [type(m).__name__ for m in theirs]
    for lib, m in ((ag, ours), (torch, theirs)):
        m.append(lib.nn.Sigmoid())
        del m[1]
        m[0] = lib.nn.Identity()
        m.insert(1, lib.nn.ReLU())
        m.extend([lib.nn.Tanh()])
        m.pop(2)
    assert repr(ours) == repr(theirs)
    assert list(dict(ours.named_children())) == list(dict(theirs.named_children()))
    for idx in (10, -11):
        with pytest.raises(IndexError) as t_err:
            theirs[idx]
        with pytest.raises(IndexError) as o_err:
            ours[idx]
        assert str(o_err.value) == str(t_err.value)
    named = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 2)), ("act", nn.ReLU())]))
    assert [n for n, _ in named.named_children()] == ["fc", "act"] and named.act is named[1]
    both = nn.Sequential(nn.ReLU()) + nn.Sequential(nn.Tanh())
    assert len(both) == 2


def test_module_list_and_repr_collapsing():
    def build(lib):
        block = lambda: lib.nn.Sequential(lib.nn.Linear(4, 4), lib.nn.GELU())
        layers = lib.nn.ModuleList([block() for _ in range(12)])
        layers.append(lib.nn.Linear(4, 2))
        layers.extend([lib.nn.ReLU(), lib.nn.ReLU()])
        layers.insert(0, lib.nn.Tanh())
        outer = lib.nn.Module()
        outer.layers = layers
        outer.empty = lib.nn.ModuleList()
        return outer

    ours, theirs = build(ag), build(torch)
    assert repr(ours) == repr(theirs)
    assert "(1-12): 12 x Sequential(" in repr(ours)
    assert len(ours.layers) == 16 and isinstance(ours.layers[-3], nn.Linear)
    assert len(ours.layers[2:5]) == 3
    assert len(list(ours.parameters())) == len(list(theirs.parameters()))
    del ours.layers[0]
    del theirs.layers[0]
    ours.layers.pop(-1)
    theirs.layers.pop(-1)
    assert repr(ours) == repr(theirs)
    with pytest.raises(TypeError) as t_err:
        theirs.layers.extend(3)
    with pytest.raises(TypeError) as o_err:
        ours.layers.extend(3)
    assert str(o_err.value) == str(t_err.value)
    with pytest.raises(NotImplementedError):
        ours.layers(ag.ones(1))


def test_module_dict():
    def build(lib):
        d = lib.nn.ModuleDict({"b": lib.nn.Linear(2, 2), "a": lib.nn.ReLU()})
        d["c"] = lib.nn.Tanh()
        d.update([("e", lib.nn.Sigmoid())])
        return d

    ours, theirs = build(ag), build(torch)
    assert repr(ours) == repr(theirs)
    assert list(ours) == list(theirs) == list(ours.keys())
    assert "a" in ours and len(ours) == 4
    assert isinstance(ours.pop("a"), nn.ReLU) and "a" not in ours
    assert [type(v).__name__ for v in ours.values()] == ["Linear", "Tanh", "Sigmoid"]
    for bad, exc in ((3, TypeError), ([("x",)], ValueError)):
        with pytest.raises(exc) as t_err:
            theirs.update(bad)
        with pytest.raises(exc) as o_err:
            ours.update(bad)
        assert str(o_err.value) == str(t_err.value)
    ours.clear()
    assert len(ours) == 0


def test_parameter_list():
    ours = nn.ParameterList([ag.ones(2, 3), nn.Parameter(ag.zeros(1))])
    theirs = torch.nn.ParameterList([torch.ones(2, 3), torch.nn.Parameter(torch.zeros(1))])
    assert repr(ours).replace("autogradcli", "torch") == repr(theirs)
    assert len(ours) == 2 and all(isinstance(p, nn.Parameter) for p in ours)
    assert [n for n, _ in ours.named_parameters()] == ["0", "1"]
    ours.append(ag.ones(4))
    assert ours[-1].shape == (4,)


# ----------------------------------------------------------------------- hooks on real layers
def _hook_records(mod, store, to_np):
    def fwd_pre(m, args):
        store.append(("fwd_pre", type(m).__name__))

    def fwd(m, args, out):
        store.append(("fwd", type(m).__name__, to_np(out)))

    def bw_pre(m, grad_output):
        store.append(("bw_pre", type(m).__name__, [to_np(g) for g in grad_output]))

    def bw(m, grad_input, grad_output):
        gi = [None if g is None else to_np(g) for g in grad_input]
        store.append(("bw", type(m).__name__, gi, [to_np(g) for g in grad_output]))

    for m in mod.modules():
        m.register_forward_pre_hook(fwd_pre)
        m.register_forward_hook(fwd)
        m.register_full_backward_pre_hook(bw_pre)
        m.register_full_backward_hook(bw)


def test_hooks_on_sequential_match_torch():
    ours, theirs = _mlp(ag).double(), _mlp(torch).double()
    copy_weights(ours, theirs)
    rec_o: list = []
    rec_t: list = []
    _hook_records(ours, rec_o, _np)
    _hook_records(theirs, rec_t, _np)
    x = np.random.default_rng(0).standard_normal((4, 3))
    xo, xt = ag.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (ours(xo) ** 2).sum().backward()
    (theirs(xt) ** 2).sum().backward()
    assert [r[:2] for r in rec_o] == [r[:2] for r in rec_t]
    for a, b in zip(rec_o, rec_t):
        for u, v in zip(a[2:], b[2:]):
            if isinstance(u, list):
                for uu, vv in zip(u, v):
                    np.testing.assert_allclose(uu, vv, rtol=1e-10, err_msg=str(a[:2]))
            else:
                np.testing.assert_allclose(u, v, rtol=1e-10, err_msg=str(a[:2]))
    np.testing.assert_allclose(_np(xo.grad), _np(xt.grad), rtol=1e-10)


def test_backward_hook_replaces_grad_input_on_linear():
    ours, theirs = nn.Linear(3, 2).double(), torch.nn.Linear(3, 2).double()
    copy_weights(ours, theirs)
    for m in (ours, theirs):
        m.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 3,))
    x = np.random.default_rng(0).standard_normal((4, 3))
    xo, xt = ag.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ours(xo).sum().backward()
    theirs(xt).sum().backward()
    np.testing.assert_allclose(_np(xo.grad), _np(xt.grad), rtol=1e-12)
    np.testing.assert_allclose(_np(ours.weight.grad), _np(theirs.weight.grad), rtol=1e-12)


def test_state_dict_round_trip_torch_to_ours_and_back():
    theirs = _mlp(torch)
    ours = _mlp(ag)
    copy_weights(ours, theirs)
    back = _mlp(torch)
    back.load_state_dict({k: torch.tensor(_np(v)) for k, v in ours.state_dict().items()})
    for (k1, v1), (k2, v2) in zip(back.state_dict().items(), theirs.state_dict().items()):
        assert k1 == k2
        np.testing.assert_array_equal(v1.numpy(), v2.numpy())
    wrong = OrderedDict(
        (k, ag.tensor(v.numpy())) for k, v in torch.nn.Linear(3, 7).state_dict().items()
    )
    with pytest.raises(RuntimeError) as o_err:
        nn.Linear(3, 4).load_state_dict(wrong)
    with pytest.raises(RuntimeError) as t_err:
        torch.nn.Linear(3, 4).load_state_dict(torch.nn.Linear(3, 7).state_dict())
    assert str(o_err.value).replace("autogradcli", "torch") == str(t_err.value)
