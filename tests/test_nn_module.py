"""nn.Parameter and nn.Module against PyTorch: registration rules and errors, traversal, modes,
state dicts, hooks and reprs."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest
from lazy_torch import torch

import autogradcli as ag
from autogradcli import nn


def _msg(exc_info: pytest.ExceptionInfo) -> str:
    return str(exc_info.value).replace("autogradcli", "torch")


def _both_raise(fn, exc_type):
    """Run ``fn(lib)`` with torch and with us; both must raise ``exc_type`` with one message."""
    with pytest.raises(exc_type) as theirs:
        fn(torch)
    with pytest.raises(exc_type) as ours:
        fn(ag)
    assert _msg(ours) == _msg(theirs)


# ----------------------------------------------------------------------- Parameter
def test_parameter_basics():
    t = ag.tensor([1.0, 2.0])
    p = nn.Parameter(t)
    assert isinstance(p, ag.Tensor) and p.requires_grad and p.is_leaf
    assert repr(p) == repr(torch.nn.Parameter(torch.tensor([1.0, 2.0])))
    assert not nn.Parameter(t, requires_grad=False).requires_grad
    assert repr(nn.Parameter(t, False)) == repr(torch.nn.Parameter(torch.tensor([1.0, 2.0]), False))
    p.data.mul_(2.0)  # shares storage with t
    assert t.tolist() == [2.0, 4.0]
    assert type(p * 2) is ag.Tensor
    assert nn.Parameter().shape == (0,)


def test_parameter_deepcopy():
    import copy

    p = nn.Parameter(ag.tensor([1.0, 2.0]))
    q = copy.deepcopy(p)
    assert isinstance(q, nn.Parameter) and q.requires_grad and q.tolist() == [1.0, 2.0]
    q.data.zero_()
    assert p.tolist() == [1.0, 2.0]


# ----------------------------------------------------------------------- registration
def wrap(lib):
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = lib.nn.Parameter(lib.ones(2, 3))
            self.register_buffer("running", lib.zeros(3))
            self.register_buffer("scratch", lib.zeros(1), persistent=False)
            self.register_parameter("bias", None)
            self.child = lib.nn.Module()
            self.child.v = lib.nn.Parameter(lib.ones(4))

        def forward(self, x):
            return x @ self.w

    return Net()


def test_registration_and_traversal():
    ours, theirs = wrap(ag), wrap(torch)
    for fn in (
        lambda m: [n for n, _ in m.named_parameters()],
        lambda m: [n for n, _ in m.named_buffers()],
        lambda m: [n for n, _ in m.named_children()],
        lambda m: [n for n, _ in m.named_modules()],
        lambda m: [n for n, _ in m.named_parameters(prefix="pre", recurse=False)],
        lambda m: list(m.state_dict().keys()),
        lambda m: list(m._parameters.keys()),
    ):
        assert fn(ours) == fn(theirs)
    assert ours.bias is None
    assert type(ours.state_dict()) is OrderedDict
    assert isinstance(ours.w, nn.Parameter) and ours.running.shape == (3,)


def test_shared_parameters_listed_once():
    def build(lib):
        a = lib.nn.Module()
        a.p = lib.nn.Parameter(lib.ones(2))
        a.q = a.p
        a.sub = lib.nn.Module()
        a.sub.p = a.p
        a.sub2 = a.sub
        return a

    ours, theirs = build(ag), build(torch)
    for fn in (
        lambda m: [n for n, _ in m.named_parameters()],
        lambda m: [n for n, _ in m.named_parameters(remove_duplicate=False)],
        lambda m: [n for n, _ in m.named_modules()],
        lambda m: [n for n, _ in m.named_modules(remove_duplicate=False)],
        lambda m: [n for n, _ in m.named_children()],
        lambda m: list(m.state_dict().keys()),
        lambda m: len(list(m.parameters())),
    ):
        assert fn(ours) == fn(theirs)


@pytest.mark.parametrize(
    "fn, exc",
    [
        (lambda m, lib: setattr(m, "w", lib.ones(2, 3)), TypeError),
        (lambda m, lib: setattr(m, "child", 3), TypeError),
        (lambda m, lib: setattr(m, "running", [1.0]), TypeError),
        (lambda m, lib: m.register_buffer("w", lib.ones(1)), KeyError),
        (lambda m, lib: m.register_buffer("a.b", lib.ones(1)), KeyError),
        (lambda m, lib: m.register_buffer("", lib.ones(1)), KeyError),
        (lambda m, lib: m.register_buffer("x", 3), TypeError),
        (lambda m, lib: m.register_buffer(1, lib.ones(1)), TypeError),
        (lambda m, lib: m.register_parameter("x", lib.ones(1)), TypeError),
        (lambda m, lib: m.register_parameter("running", None), KeyError),
        (lambda m, lib: m.register_parameter("a.b", None), KeyError),
        (lambda m, lib: m.register_parameter("", None), KeyError),
        (
            lambda m, lib: m.register_parameter(
                "x", lib.nn.Parameter(lib.ones(1)) * lib.ones(1, requires_grad=True)
            ),
            TypeError,
        ),
        (lambda m, lib: m.add_module("x", 3), TypeError),
        (lambda m, lib: m.add_module("w", lib.nn.Module()), KeyError),
        (lambda m, lib: m.add_module("a.b", lib.nn.Module()), KeyError),
        (lambda m, lib: m.add_module("", lib.nn.Module()), KeyError),
        (lambda m, lib: m.nothing, AttributeError),
        (lambda m, lib: m.train("yes"), ValueError),
        (lambda m, lib: m.to(lib.int64), TypeError),
        (lambda m, lib: lib.nn.Module()(1), NotImplementedError),
    ],
)
def test_registration_errors(fn, exc):
    _both_raise(lambda lib: fn(wrap(lib), lib), exc)


def test_assign_before_init():
    def build(lib, value):
        class Bad(lib.nn.Module):
            def __init__(self):
                self.p = value(lib)

        return Bad()

    _both_raise(lambda lib: build(lib, lambda L: L.nn.Parameter(L.ones(1))), AttributeError)
    _both_raise(lambda lib: build(lib, lambda L: L.nn.Module()), AttributeError)

    class BadBuffer(nn.Module):
        def __init__(self):
            self.register_buffer("b", ag.ones(1))

    with pytest.raises(AttributeError, match=r"cannot assign buffer before Module\.__init__"):
        BadBuffer()


def test_reassignment_moves_between_kinds():
    m = wrap(ag)
    m.w = None  # keeps the parameter slot
    assert "w" in m._parameters and m.w is None
    assert [n for n, _ in m.named_parameters()] == ["child.v"]
    m.running = None
    assert "running" in m._buffers and "running" not in m.state_dict()
    m.child = nn.Parameter(ag.ones(1))  # a module slot turned into a parameter
    assert "child" not in m._modules and isinstance(m.child, nn.Parameter)
    del m.child
    assert not hasattr(m, "child")
    m.plain = 3
    assert m.plain == 3 and "plain" in m.__dict__
    del m.scratch
    assert "scratch" not in m._non_persistent_buffers_set


# ----------------------------------------------------------------------- modes and conversion
def test_train_eval_requires_grad_zero_grad_apply():
    m = wrap(ag)
    assert m.training and m.child.training
    assert m.eval() is m and not m.child.training
    m.train()
    assert m.child.training
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())
    m.requires_grad_()
    (ag.ones(1, 2) @ m.w).sum().backward()
    assert m.w.grad is not None
    m.zero_grad(set_to_none=False)
    assert m.w.grad.tolist() == [[0.0] * 3] * 2
    m.zero_grad()
    assert m.w.grad is None
    seen = []
    m.apply(lambda mod: seen.append(type(mod).__name__))
    assert seen == ["Module", "Net"]


def test_dtype_conversions_keep_parameter_objects():
    m = wrap(ag)
    w = m.w
    (ag.ones(1, 2) @ m.w).sum().backward()
    m.double()
    assert m.w is w and m.w.dtype == ag.float64 and m.w.grad.dtype == ag.float64
    assert m.running.dtype == ag.float64 and isinstance(m.w, nn.Parameter)
    m.float()
    assert m.w.dtype == ag.float32
    m.half()
    assert m.w.dtype == ag.float16
    m.to(ag.float32)
    assert m.w.dtype == ag.float32
    m.type(ag.float64)
    assert m.child.v.dtype == ag.float64
    m.to("cpu").cpu()
    assert m.w.device.type == "cpu"


# ----------------------------------------------------------------------- state dict
def test_state_dict_round_trip_and_keep_vars():
    src, dst = wrap(ag), wrap(ag)
    with ag.no_grad():
        src.w.mul_(3.0)
        src.running.add_(1.0)
    sd = src.state_dict()
    assert not sd["w"].requires_grad and not isinstance(sd["w"], nn.Parameter)
    assert src.state_dict(keep_vars=True)["w"] is src.w
    assert next(iter(src.state_dict(prefix="m."))) == "m.w"
    w_before = dst.w
    res = dst.load_state_dict(sd)
    assert repr(res) == "<All keys matched successfully>"
    assert res.missing_keys == [] and res.unexpected_keys == []
    assert dst.w is w_before and dst.w.tolist() == src.w.tolist()
    assert dst.running.tolist() == [1.0] * 3


def test_load_state_dict_errors_match_torch():
    def strict_fail(lib):
        m = wrap(lib)
        sd = m.state_dict()
        del sd["child.v"]
        sd["extra"] = lib.ones(1)
        sd["child.extra"] = lib.ones(1)
        sd["w"] = lib.ones(5, 3)
        m.load_state_dict(sd)

    _both_raise(strict_fail, RuntimeError)

    def not_tensor(lib):
        m = wrap(lib)
        sd = m.state_dict()
        sd["w"] = [1.0]
        m.load_state_dict(sd)

    _both_raise(not_tensor, RuntimeError)
    _both_raise(lambda lib: wrap(lib).load_state_dict([1]), TypeError)

    results = []
    for lib in (ag, torch):
        m = wrap(lib)
        sd = m.state_dict()
        del sd["running"]
        sd["zzz"] = lib.ones(1)
        results.append(m.load_state_dict(sd, strict=False))
    assert results[0] == results[1] == (["running"], ["zzz"])
    assert repr(results[0]) == repr(results[1])
    res_ours = wrap(ag).load_state_dict({"w": ag.ones(2, 3)}, strict=False)
    res_theirs = wrap(torch).load_state_dict({"w": torch.ones(2, 3)}, strict=False)
    assert repr(res_ours) == repr(res_theirs)


def test_load_state_dict_assign():
    m = wrap(ag)
    sd = {k: v.clone() for k, v in wrap(ag).state_dict().items()}
    m.load_state_dict(sd, assign=True)
    assert isinstance(m.w, nn.Parameter) and m.w.requires_grad


# ----------------------------------------------------------------------- repr
def test_repr_nested():
    def build(lib):
        class Block(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.inner = lib.nn.Module()

            def extra_repr(self):
                return "a=1\nb=2"

        top = lib.nn.Module()
        top.block = Block()
        top.empty = lib.nn.Module()
        top.gone = None
        return top

    assert repr(build(ag)) == repr(build(torch))


def test_dir_lists_members():
    m = wrap(ag)
    names = dir(m)
    assert {"w", "running", "child", "forward"} <= set(names)


# ----------------------------------------------------------------------- hooks
def test_forward_hooks_order_and_replacement():
    calls = []
    m = wrap(ag)
    x = ag.ones(1, 2)

    def pre1(mod, args):
        calls.append(("pre1", len(args)))
        return args[0] * 2  # a bare value replaces the input tuple

    def pre2(mod, args):
        calls.append(("pre2", args[0].tolist()))

    def fwd(mod, args, out):
        calls.append(("fwd", out.tolist()))
        return out + 1

    h1 = m.register_forward_pre_hook(pre1)
    m.register_forward_pre_hook(pre2)
    m.register_forward_hook(fwd)
    m.register_forward_pre_hook(lambda mod, args: calls.append(("first",)), prepend=True)
    out = m(x)
    assert out.tolist() == [[5.0] * 3]
    assert calls == [("first",), ("pre1", 1), ("pre2", [[2.0, 2.0]]), ("fwd", [[4.0] * 3])]
    h1.remove()
    assert m(x).tolist() == [[3.0] * 3]


def test_forward_hooks_with_kwargs():
    class K(nn.Module):
        def forward(self, x, scale=1.0):
            return x * scale

    m = K()
    m.register_forward_pre_hook(lambda mod, a, kw: (a, {"scale": 3.0}), with_kwargs=True)
    m.register_forward_hook(lambda mod, a, kw, out: out + kw["scale"], with_kwargs=True)
    assert m(ag.ones(2)).tolist() == [6.0, 6.0]
    bad = K()
    bad.register_forward_pre_hook(lambda mod, a, kw: 1, with_kwargs=True)
    with pytest.raises(RuntimeError, match="forward pre-hook must return None or a tuple"):
        bad(ag.ones(1))


def _linear_pair(seed=0):
    rng = np.random.default_rng(seed)
    w, b = rng.standard_normal((4, 3)), rng.standard_normal(4)
    x = rng.standard_normal((2, 3))

    class L(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(ag.tensor(w))
            self.bias = nn.Parameter(ag.tensor(b))

        def forward(self, x):
            return x @ self.weight.t() + self.bias

    tl = torch.nn.Linear(3, 4).double()
    with torch.no_grad():
        tl.weight.copy_(torch.tensor(w))
        tl.bias.copy_(torch.tensor(b))
    return L(), tl, x


def test_full_backward_hooks_match_torch():
    ours, theirs, x = _linear_pair()
    records: dict[str, list] = {"ours": [], "theirs": []}

    def make_hooks(key, to_np):
        def pre(mod, grad_output):
            records[key].append(("pre", [to_np(g) for g in grad_output]))

        def post(mod, grad_input, grad_output):
            records[key].append(
                ("post", [to_np(g) for g in grad_input], [to_np(g) for g in grad_output])
            )
            return (grad_input[0] * 2,)

        return pre, post

    for key, mod, to_np in (
        ("ours", ours, lambda g: np.asarray(g)),
        ("theirs", theirs, lambda g: g.detach().numpy()),
    ):
        pre, post = make_hooks(key, to_np)
        mod.register_full_backward_pre_hook(pre)
        mod.register_full_backward_hook(post)
    xo = ag.tensor(x, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    (ours(xo) ** 2).sum().backward()
    (theirs(xt) ** 2).sum().backward()
    assert [r[0] for r in records["ours"]] == [r[0] for r in records["theirs"]] == ["pre", "post"]
    for a, b in zip(records["ours"], records["theirs"]):
        for ga, gb in zip(a[1:], b[1:]):
            for u, v in zip(ga, gb):
                np.testing.assert_allclose(u, v, rtol=1e-10)
    np.testing.assert_allclose(np.asarray(xo.grad), xt.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(np.asarray(ours.weight.grad), theirs.weight.grad.numpy(), rtol=1e-10)


def test_backward_pre_hook_replaces_grad_output_and_handles():
    ours, _, x = _linear_pair()
    h = ours.register_full_backward_pre_hook(lambda mod, go: (ag.zeros_like(go[0]),))
    xo = ag.tensor(x, requires_grad=True)
    ours(xo).sum().backward()
    assert np.all(np.asarray(xo.grad) == 0) and np.all(np.asarray(ours.weight.grad) == 0)
    h.remove()
    xo.grad = None
    ours(xo).sum().backward()
    assert np.any(np.asarray(xo.grad) != 0)
    bad = ours.register_full_backward_hook(lambda mod, gi, go: (None, None))
    with pytest.raises(RuntimeError, match="invalid number of grad_input, got 2, but expected 1"):
        ours(xo).sum().backward()
    bad.remove()


def test_full_backward_hook_when_no_input_requires_grad():
    ours, _, x = _linear_pair()
    seen = []
    ours.register_full_backward_hook(lambda mod, gi, go: seen.append((gi, go[0].shape)))
    with pytest.warns(UserWarning, match="Full backward hook is firing"):
        ours(ag.tensor(x)).sum().backward()
    assert seen == [((None,), (2, 4))]


def test_deepcopy_module_with_buffers():
    import copy

    m = wrap(ag)
    (ag.ones(1, 2) @ m.w).sum().backward()
    c = copy.deepcopy(m)
    assert c.w is not m.w and isinstance(c.w, nn.Parameter) and c.w.requires_grad
    assert c.running is not m.running and c.running.tolist() == m.running.tolist()
    with ag.no_grad():
        c.w.add_(1.0)
    assert m.w.tolist() == [[1.0] * 3] * 2
    assert [n for n, _ in c.named_parameters()] == [n for n, _ in m.named_parameters()]
