"""The recording and engine fast paths (issue 13's bookkeeping round) give the general path's
results, and step aside when a hook, retain_grad, create_graph, a modified saved tensor, a
multi-output node or a reparametrised layer needs the general path. PyTorch is the oracle."""

from __future__ import annotations

import inspect
import os

import numpy as np
import pytest
from lazy_torch import torch
from oracle import check

import autogradcli as ag


def _pair(*shape, seed=0, dtype="float64"):
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return ag.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


def _close(ours, theirs):
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), 1e-12, 1e-12)


# --------------------------------------------------------------- Mul/Sub backward on arrays
# (the array path runs without create_graph; check's gradgrad pass runs the recorded path)
def test_mul_by_float_backward_matches_torch_both_paths():
    check(lambda m, x: x * 0.75 * 2.5, (3, 4))


def test_mul_of_tensors_backward_matches_torch_both_paths():
    check(lambda m, x, y: x * y * x, (3, 4), (3, 4))


def test_mul_broadcast_backward_sums_to_each_shape():
    check(lambda m, x, y: x * y, (3, 4), (4,))


def test_mul_mixed_dtype_backward_takes_the_general_path():
    check(lambda m, x, y: x * y.float(), (3, 4), (3, 4), atol=1e-6, rtol=1e-6)


def test_mul_by_int_and_numpy_scalar_backward_matches_torch():
    check(lambda m, x: x * 3 * np.float64(0.5), (5,))


def test_sub_backward_matches_torch_both_paths():
    check(lambda m, x, y: x - y - y, (2, 3), (3,))


def test_float32_mul_sub_gradients_stay_float32():
    x = ag.ones(3, requires_grad=True)
    w = ag.ones(3, requires_grad=True)
    ((x * 0.5 * w) - w).sum().backward()
    assert x.grad.dtype == ag.float32 and w.grad.dtype == ag.float32


# --------------------------------------------------------------- engine: one-output buffers
def test_hook_on_intermediate_replaces_its_gradient_like_torch():
    (x, tx), (w, tw) = _pair(4), _pair(4, seed=1)
    outs = []
    for _m, a, b in ((ag, x, w), (torch, tx, tw)):
        y = a * b
        y.register_hook(lambda g: g * 3.0)
        (y.sin() * b).sum().backward()
        outs.append((a.grad, b.grad))
    _close(outs[0][0], outs[1][0])
    _close(outs[0][1], outs[1][1])


def test_retain_grad_on_intermediate_used_twice_matches_torch():
    (x, tx) = _pair(5)
    res = []
    for a in (x, tx):
        y = a * 2.0
        y.retain_grad()
        z = y * y - y  # y reaches the loss by three edges: its gradient is summed
        z.sum().backward()
        res.append((y.grad, a.grad))
    _close(res[0][0], res[1][0])
    _close(res[0][1], res[1][1])


def test_same_root_twice_sums_its_gradients_like_torch():
    (x, tx) = _pair(3)
    for m, a in ((ag, x), (torch, tx)):
        y = a * 3.0
        m.autograd.backward(
            [y, y], [m.ones(3, dtype=m.float64), m.full((3,), 2.0, dtype=m.float64)]
        )
    _close(x.grad, tx.grad)


def test_multi_output_node_with_one_output_used_matches_torch():
    (x, tx) = _pair(6)
    for a in (x, tx):
        p, _q = a.split(3)
        (p * 2.0).sum().backward()  # q gets no gradient: the node's list gets a zero for it
    _close(x.grad, tx.grad)


def test_multi_output_node_both_outputs_and_a_hook_match_torch():
    (x, tx) = _pair(4, 3)
    for a in (x, tx):
        v, _i = a.max(1)
        u = a.unbind(0)
        u[1].register_hook(lambda g: g * -1.0)
        ((v * 2.0).sum() + (u[1] * u[2]).sum()).backward()
    _close(x.grad, tx.grad)


def test_grad_of_intermediate_and_leaf_capture_matches_torch():
    (x, tx) = _pair(3)
    res = []
    for m, a in ((ag, x), (torch, tx)):
        y = a * 2.0
        z = (y * y).sum()
        res.append(m.autograd.grad(z, (y, a)))
    for o, t in zip(*res):
        _close(o, t)


def test_create_graph_double_backward_through_mul_sub_matches_torch():
    (x, tx) = _pair(3)
    res = []
    for m, a in ((ag, x), (torch, tx)):
        y = (a * a * 0.5 - a).sum()
        (g,) = m.autograd.grad(y, a, create_graph=True)
        (gg,) = m.autograd.grad((g * g).sum(), a)
        res.append((g, gg))
    _close(res[0][0], res[1][0])
    _close(res[0][1], res[1][1])


def test_leaf_gradient_from_a_pass_through_is_copied_not_aliased():
    x = ag.ones(3, requires_grad=True)
    y = x + 0.0  # AddBackward0 passes its gradient on unchanged
    g = ag.full((3,), 2.0)
    y.backward(g)
    g.add_(1.0)
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, 2.0])


# --------------------------------------------------------------- saved tensors: versions, site
def test_modified_saved_tensor_of_a_fixed_arity_op_is_refused_with_its_site():
    x = ag.ones(3, requires_grad=True)
    b = x * 1.0
    c = b.sin()
    line = inspect.currentframe().f_lineno - 1
    b.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation") as info:
        c.sum().backward()
    assert f"{os.path.basename(__file__)}:{line}" in str(info.value)
    assert "SinBackward0" in str(info.value)


def _user_layer(x, w):
    return ag.nn.functional.linear(x, w)  # the site the error names


def test_site_is_the_innermost_frame_outside_the_package():
    x = ag.ones(2, 3, requires_grad=True)
    w = ag.ones(4, 3, requires_grad=True)
    out = _user_layer(x, w)
    line = inspect.getsourcelines(_user_layer)[1] + 1
    with ag.no_grad():
        w.mul_(2.0)
    with pytest.raises(RuntimeError, match="AddmmBackward0") as info:
        out.sum().backward()
    assert f"{os.path.basename(__file__)}:{line}" in str(info.value)


def test_unmodified_saved_tensor_backward_matches_torch():
    (x, tx) = _pair(3)
    for a in (x, tx):
        (a.sin() * a).sum().backward()
    _close(x.grad, tx.grad)


# --------------------------------------------------------------- nn.Linear's parameter read
def test_linear_layer_matches_torch():
    torch.manual_seed(0)
    ref = torch.nn.Linear(3, 2).double()
    lin = ag.nn.Linear(3, 2).double()
    lin.weight.data = ag.tensor(ref.weight.detach().numpy().copy())
    lin.bias.data = ag.tensor(ref.bias.detach().numpy().copy())
    (x, tx) = _pair(4, 3)
    lin(x).pow(2).sum().backward()
    ref(tx).pow(2).sum().backward()
    _close(x.grad, tx.grad)
    _close(lin.weight.grad, ref.weight.grad)
    _close(lin.bias.grad, ref.bias.grad)


def test_linear_with_weight_replaced_by_a_plain_tensor_uses_it():
    lin = ag.nn.Linear(3, 2)
    del lin.weight
    lin.weight = ag.zeros(2, 3)  # no longer a parameter: the attribute protocol finds it
    np.testing.assert_array_equal(
        lin(ag.ones(1, 3)).detach().numpy(), lin.bias.detach()[None].numpy()
    )


def test_linear_subclass_goes_through_the_attribute_protocol():
    class Halved(ag.nn.Linear):
        def __getattr__(self, name):  # what a reparametrising subclass may do
            value = super().__getattr__(name)
            return value * 0.5 if name == "weight" else value

    lin = Halved(3, 2)
    x = ag.ones(2, 3)
    expected = ag.nn.functional.linear(x, lin._parameters["weight"] * 0.5, lin.bias)
    np.testing.assert_array_equal(lin(x).detach().numpy(), expected.detach().numpy())


def test_linear_without_bias_matches_functional():
    lin = ag.nn.Linear(3, 2, bias=False)
    x = ag.ones(2, 3)
    np.testing.assert_array_equal(
        lin(x).detach().numpy(), ag.nn.functional.linear(x, lin.weight).detach().numpy()
    )


def test_linear_forward_hook_still_runs():
    lin = ag.nn.Linear(3, 2)
    seen = []
    lin.register_forward_hook(lambda mod, args, out: seen.append(out.shape))
    lin(ag.ones(4, 3))
    assert seen == [ag.Size([4, 2])]


# --------------------------------------------------------------- loss modules' class weight
def test_weighted_cross_entropy_module_matches_torch():
    w = np.array([0.2, 1.0, 3.0])
    logits = np.random.default_rng(0).standard_normal((4, 3))
    target = np.array([0, 2, 1, 2])
    ours = ag.nn.CrossEntropyLoss(weight=ag.tensor(w))(ag.tensor(logits), ag.tensor(target))
    theirs = torch.nn.CrossEntropyLoss(weight=torch.tensor(w))(
        torch.tensor(logits), torch.tensor(target)
    )
    np.testing.assert_allclose(ours.item(), theirs.item(), 1e-12)


def test_loss_subclass_goes_through_the_attribute_protocol():
    class Unweighted(ag.nn.NLLLoss):
        def __getattr__(self, name):  # what a subclass elsewhere may do
            value = super().__getattr__(name)
            return value * 0.0 + 1.0 if name == "weight" else value

    p = np.array([[0.5, 0.25, 0.25], [0.25, 0.25, 0.5]])
    loss = Unweighted(weight=ag.tensor([1.0, 0.0, 0.0]))  # in the buffers, but not used
    got = loss(ag.tensor(np.log(p)), ag.tensor([0, 1])).item()
    np.testing.assert_allclose(
        got, -(np.log(0.5) + np.log(0.25)) / 2, 1e-12
    )  # the stored weight gives -log 0.5


# --------------------------------------------------------------- unrecorded outputs, root grad
def _identity_and_view(m):
    class Ident(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    class View(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.view(-1)

        @staticmethod
        def backward(ctx, g):
            return g.view(2, 2)

    return Ident, View


def test_unrecorded_outputs_alias_a_returned_input_and_keep_a_new_view_like_torch():
    for m in (ag, torch):
        ident, view = _identity_and_view(m)
        x = m.ones(2, 2)
        with m.no_grad():
            y, z = ident.apply(x), view.apply(x)
        assert y is not x and y._base is x  # an input returned as is: an alias
        assert z._base is x and z.shape == (4,)
        y.add_(1.0)
        assert x._version == 1 and float(x.sum()) == 8.0


def test_implicit_root_gradient_of_a_0d_output_keeps_dtype_like_torch():
    for dtype in ("float32", "float64"):
        a = np.arange(3.0).astype(dtype)
        x, tx = ag.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
        (x * x).sum().backward()
        (tx * tx).sum().backward()
        assert str(x.grad.dtype).split(".")[-1] == dtype
        _close(x.grad, tx.grad)
    leaf = ag.tensor(2.0, requires_grad=True)
    leaf.backward()
    leaf.grad.add_(1.0)  # the one adopted as .grad is writable and not shared
    assert leaf.grad.item() == 2.0


def test_implicit_root_gradient_of_a_one_element_nd_output():
    x, tx = _pair(1, 1)
    (x * 3.0).backward()
    (tx * 3.0).backward()
    _close(x.grad, tx.grad)
