"""Views share memory and the version counter with their base; in-place ops match PyTorch in
values, versions and autograd, and a tensor saved for backward that was changed in place gives
an error naming the node, the shape, both versions and where the forward was called."""

import inspect
import os

import numpy as np
import pytest
from lazy_torch import torch

import autogradcli as ag

VIEWS = {
    "reshape": lambda t: t.reshape(4, 3),
    "view": lambda t: t.view(-1),
    "transpose": lambda t: t.transpose(0, 1),
    "T": lambda t: t.t(),
    "slice": lambda t: t[1:, ::2],
    "select": lambda t: t[1],
    "narrow": lambda t: t.narrow(1, 1, 2),
    "split": lambda t: t.split(1)[2],
    "chunk": lambda t: t.chunk(2, 1)[1],
    "unbind": lambda t: t.unbind(1)[3],
    "unsqueeze": lambda t: t.unsqueeze(0),
    "squeeze": lambda t: t[None].squeeze(0),
    "permute": lambda t: t.permute(1, 0),
    "detach": lambda t: t.detach(),
}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_views_share_memory_and_version(name):
    base = ag.arange(12.0).reshape(3, 4).clone()
    ref = torch.arange(12.0).reshape(3, 4).clone()
    view, tview = VIEWS[name](base), VIEWS[name](ref)
    base.mul_(10)
    ref.mul_(10)
    np.testing.assert_array_equal(view.numpy(), tview.numpy())
    view.add_(1)
    tview.add_(1)
    np.testing.assert_array_equal(base.numpy(), ref.numpy())
    assert view._version == base._version == tview._version == 2


def test_expand_sees_base_writes():
    base = ag.zeros(3, 1)
    e = base.expand(3, 4)
    base[1, 0] = 5.0
    assert e[1].tolist() == [5.0] * 4
    assert e._version == base._version == 1


def test_advanced_index_is_a_copy():
    base = ag.zeros(3)
    copy = base[[0, 1]]
    base.fill_(2.0)
    assert copy.tolist() == [0.0, 0.0] and copy._version == 0


INPLACE = [
    lambda m, t, o: t.add_(o),
    lambda m, t, o: t.add_(o, alpha=2.5),
    lambda m, t, o: t.sub_(o[0]),
    lambda m, t, o: t.mul_(o),
    lambda m, t, o: t.div_(o.abs() + 1),
    lambda m, t, o: t.mul_(3.0).sub_(1).div_(2),
    lambda m, t, o: t.zero_(),
    lambda m, t, o: t.fill_(1.5),
    lambda m, t, o: t.copy_(o),
    lambda m, t, o: t.copy_(o[1]),
    lambda m, t, o: t.clamp_(-0.3, 0.4),
    lambda m, t, o: t.clamp_(min=0.0),
    lambda m, t, o: t.masked_fill_(o > 0, -2.0),
    lambda m, t, o: t.scatter_add_(1, m.tensor([[0, 0, 1, 2]] * 3), o),
    lambda m, t, o: t.__setitem__((slice(None), 1), o[0, 0]),
    lambda m, t, o: t.__setitem__(([0, 2], 0), o[:2, 1]),
    lambda m, t, o: t.__setitem__(o > 0, 7.0),
]


@pytest.mark.parametrize("op", INPLACE)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_inplace_values_and_versions(op, dtype):
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((3, 4)).astype(dtype) for _ in range(2))
    ours, theirs = ag.tensor(a), torch.tensor(a)
    ret = op(ag, ours, ag.tensor(b))
    op(torch, theirs, torch.tensor(b))
    assert ret is None or ret is ours
    assert ours.dtype == getattr(ag, dtype)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)
    assert ours._version == theirs._version


@pytest.mark.parametrize("op", INPLACE)
def test_autograd_through_inplace_on_non_leaf(op):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    grads = []
    for m in (ag, torch):
        x, o = m.tensor(a, requires_grad=True), m.tensor(b, requires_grad=True)
        y = x * x
        op(m, y, o)
        z = y.sin()
        gx, go = m.autograd.grad(z.sum(), [x, o], create_graph=True, allow_unused=True)
        gg = [g.sum() for g in (gx, go) if g is not None and g.requires_grad]
        second = m.autograd.grad(sum(gg), [x, o], allow_unused=True) if gg else (None, None)
        grads.append([gx, go, *second])
    for ours, theirs in zip(*grads):
        if theirs is None:
            assert ours is None or not ours.numpy(force=True).any()
            continue
        np.testing.assert_allclose(ours.numpy(force=True), theirs.detach().numpy(), atol=1e-10)


def test_inplace_grad_fn_names():
    for m in (ag, torch):
        x = m.ones(3, requires_grad=True)
        names = []
        for op in (
            lambda y: y.add_(1),
            lambda y, x=x: y.mul_(x),
            lambda y: y.zero_(),
            lambda y: y.fill_(2.0),
            lambda y, x=x: y.copy_(x),
            lambda y: y.uniform_(),
            lambda y: y.normal_(),
        ):
            y = x * 1
            op(y)
            names.append(y.grad_fn.name().split("::")[-1])
        assert names == [
            "AddBackward0",
            "MulBackward0",
            "ZeroBackward0",
            "FillBackward2",
            "CopyBackwards",
            "UniformBackward0",
            "NormalBackward0",
        ], m.__name__


def test_random_fills_cut_the_gradient():
    x = ag.ones(4, requires_grad=True)
    y = x * 3
    y.uniform_(2.0, 3.0)
    assert bool(((y >= 2) & (y < 3)).all())
    (y * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), y.detach().numpy())
    z = ag.zeros(1000).normal_(1.0, 0.5)
    assert abs(z.mean().item() - 1.0) < 0.1 and z._version == 1


def _message(fn, m):
    with pytest.raises(RuntimeError) as info:
        fn(m)
    return str(info.value)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.ones(3, requires_grad=True).add_(1),
        lambda m: m.ones(3, requires_grad=True).zero_(),
        lambda m: m.ones(3, requires_grad=True).uniform_(),
        lambda m: m.ones(3, requires_grad=True).__setitem__(0, 2.0),
        lambda m: m.ones(3, requires_grad=True)[1:].mul_(2),
        lambda m: m.ones(3).add_(m.ones(2, 3)),
        lambda m: m.ones(3).long().add_(1.5),
        lambda m: m.ones(3).int().div_(2),
        lambda m: m.ones(3).long().mul_(m.ones(3, dtype=m.float64)),
        lambda m: m.ones(3).clamp_(),
        lambda m: m.ones(3).copy_(m.ones(2)),
        lambda m: m.ones(3).copy_(m.ones(1, 3)),
        lambda m: m.ones(2, 3).copy_(m.ones(4, 1, 2)),
        lambda m: m.ones(2, 3).add_(m.ones(4, 2, 1)),
        lambda m: m.ones(3, requires_grad=True).__setitem__([0], 2.0),
        lambda m: m.ones(3, 4).__setitem__([0, 1], m.ones(3, 4)),
    ],
)
def test_inplace_errors_match_torch(fn):
    assert _message(fn, ag) == _message(fn, torch)


def test_leaf_inplace_allowed_under_no_grad():
    w = ag.ones(3, requires_grad=True)
    with ag.no_grad():
        w.mul_(2).add_(1)
        w[0] = 0.0
    assert w.is_leaf and w.requires_grad and w.tolist() == [0.0, 3.0, 3.0]
    assert w._version == 3


def _modified_error(build):
    line = inspect.currentframe().f_back.f_lineno + 1
    with pytest.raises(RuntimeError) as info:
        build()
    return str(info.value), line


def test_modified_saved_tensor_names_node_shape_versions_and_site():
    x = ag.randn(2, 3, requires_grad=True)
    b = x * 1
    c = b * b  # the forward whose saved input is changed below
    forward_line = inspect.currentframe().f_lineno - 1
    b.add_(1)
    b.mul_(2)
    with pytest.raises(RuntimeError) as info:
        c.sum().backward()
    msg = str(info.value)
    assert "modified by an inplace operation" in msg
    assert "MulBackward0" in msg
    assert "[2, 3]" in msg
    assert "version 2" in msg and "expected version 0" in msg
    assert f"{os.path.basename(__file__)}:{forward_line}" in msg


def test_modified_saved_output_is_detected():
    x = ag.randn(3, requires_grad=True)
    y = x.exp()
    forward_line = inspect.currentframe().f_lineno - 1
    y.add_(1)
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    msg = str(info.value)
    assert "ExpBackward0" in msg and "[3]" in msg and "version 1" in msg
    assert f"{os.path.basename(__file__)}:{forward_line}" in msg


class _Scale(ag.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * 2

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return g * a


def test_modified_saved_tensor_of_custom_function():
    x = ag.randn(4, requires_grad=True)
    b = x * 1
    c = _Scale.apply(b)
    forward_line = inspect.currentframe().f_lineno - 1
    b[0] = 3.0
    with pytest.raises(RuntimeError) as info:
        c.sum().backward()
    msg = str(info.value)
    assert c.grad_fn.name() == "_ScaleBackward"
    assert "_ScaleBackward" in msg and "[4]" in msg
    assert "version 1" in msg and "expected version 0" in msg
    assert f"{os.path.basename(__file__)}:{forward_line}" in msg


def test_view_write_bumps_base_version_for_saved_check():
    x = ag.randn(2, 2, requires_grad=True)
    b = x * 1
    c = b.exp() * b
    view = b.detach()[0]
    view.fill_(0.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        c.sum().backward()


@pytest.mark.parametrize("name", ["reshape", "view", "transpose", "slice", "select", "permute"])
def test_inplace_on_a_view_of_a_non_leaf_rewrites_the_base_history_as_torch(name):
    """PyTorch's CopySlices: the base takes the view's change into its history, and the view
    reads the new base (d2l's masked_softmax writes through ``X.reshape(-1, n)[~mask]``)."""

    def run(m):
        w = m.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4), requires_grad=True)
        base = w * 2
        view = VIEWS[name](base)
        view.mul_(3)
        view[0] = -3.0
        view.sin_()  # saves the view's value before it
        out = (base.sin() * m.arange(12.0).reshape(3, 4)).sum() + view.sum()
        out.backward()
        return base.detach().numpy(), w.grad.numpy(), base.grad_fn.name().split("::")[-1]

    ours, theirs = run(ag), run(torch)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-5, atol=1e-6)
    assert ours[2] == theirs[2] == "CopySlices"


def test_assigning_a_tensor_with_grad_into_a_view_of_a_plain_buffer_as_torch():
    def run(m):
        w = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        buf = m.zeros(4, 3)
        buf.t()[:, 1].copy_(w * w)  # a view of a buffer that does not require grad
        buf[1:].t()[0] = w
        (buf * m.arange(12.0).reshape(4, 3)).sum().backward()
        return buf.detach().numpy(), w.grad.numpy(), buf.requires_grad

    ours, theirs = run(ag), run(torch)
    np.testing.assert_array_equal(ours[0], theirs[0])
    np.testing.assert_array_equal(ours[1], theirs[1])
    assert ours[2] is theirs[2] is True
