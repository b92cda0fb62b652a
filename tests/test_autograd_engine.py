"""The backward engine: graph traversal, accumulation, retain_graph, grad modes, hooks, dtypes."""

from __future__ import annotations

import numpy as np
import pytest
from lazy_torch import torch

import autogradcli as ag
from autogradcli.autograd import Function


def _pair(*shape, seed=0, dtype="float64"):
    """The same random leaf in autogradcli and torch."""
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return ag.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


def test_deep_chain_is_iterative():
    x = ag.ones(2, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.sum().backward()  # no RecursionError
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0])


def test_diamond_runs_each_node_once_and_sums():
    calls = []

    class Twice(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2.0

        @staticmethod
        def backward(ctx, g):
            calls.append(g.numpy().copy())
            return g * 2.0

    x = ag.tensor([1.0, 2.0], requires_grad=True)
    h = Twice.apply(x)
    y = (h * 3.0 + h.sin() + h).sum()
    y.backward()
    assert len(calls) == 1  # one call with the three branches' gradients summed
    np.testing.assert_allclose(calls[0], 3.0 + np.cos([2.0, 4.0]) + 1.0)
    np.testing.assert_allclose(x.grad.numpy(), 2.0 * calls[0])


def test_grad_accumulates_across_backward_calls():
    x = ag.tensor([1.0, -2.0], requires_grad=True)
    (x * x).sum().backward()
    (x * 3.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0 + 3.0, -4.0 + 3.0])
    x.grad = None
    (x * 3.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])


def test_retain_graph():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    y = (x.exp() * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([1.0, 2.0]) * [2.0, 3.0])
    with pytest.raises(RuntimeError, match=r"second time.*Specify retain_graph=True"):
        y.backward()


def test_autograd_grad_allow_unused_and_no_accumulation():
    x, z = ag.tensor([1.0, 2.0], requires_grad=True), ag.ones(3, requires_grad=True)
    y = (x * x).sum()
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        ag.autograd.grad(y, [x, z], retain_graph=True)
    gx, gz = ag.autograd.grad(y, [x, z], allow_unused=True)
    assert gz is None and x.grad is None
    np.testing.assert_allclose(gx.numpy(), [2.0, 4.0])
    (gz,) = ag.autograd.grad((x * 2).sum(), z, allow_unused=True, materialize_grads=True)
    np.testing.assert_array_equal(gz.numpy(), np.zeros(3))


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_create_graph_grad_of_grad_matches_torch():
    (a, ta), (b, tb) = _pair(3), _pair(3, seed=1)
    results = []
    for m, x, w in ((ag, a, b), (torch, ta, tb)):
        y = (x.pow(3) * w + x.tanh() * w.exp()).sum()
        (gx,) = m.autograd.grad(y, x, create_graph=True)
        (ggx, ggw) = m.autograd.grad((gx * gx).sum(), (x, w))
        z = (x.sin() * w).sum()
        z.backward(create_graph=True)
        assert x.grad.requires_grad
        x.grad.sum().backward()
        results.append([t.detach().numpy().copy() for t in (gx, ggx, ggw, w.grad)])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10)


def test_grad_modes_as_context_managers_and_decorators():
    x = ag.ones(2, requires_grad=True)
    with ag.no_grad():
        assert not (x * 2).requires_grad and not ag.is_grad_enabled()
        with ag.enable_grad():
            assert (x * 2).requires_grad
    assert ag.is_grad_enabled()
    with ag.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert ag.is_grad_enabled()
    ag.set_grad_enabled(False)
    assert not ag.is_grad_enabled()
    ag.set_grad_enabled(True)

    @ag.no_grad()
    def f(t):
        return t * 2

    @ag.set_grad_enabled(False)
    def g(t):
        return t * 2

    @ag.enable_grad()
    def h(t):
        return t * 2

    assert ag.is_grad_enabled()  # decorating does not switch the mode
    assert not f(x).requires_grad and not g(x).requires_grad and ag.is_grad_enabled()
    with ag.no_grad():
        assert h(x).requires_grad
    with pytest.raises(ValueError), ag.no_grad():
        raise ValueError
    assert ag.is_grad_enabled()  # restored after an exception


def test_hooks_leaf_and_non_leaf():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(("leaf", g.numpy().copy())))
    y = x * 3.0
    handle = y.register_hook(lambda g: g * 10.0)  # replaces the gradient
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [30.0, 30.0])
    np.testing.assert_allclose(seen[0][1], [30.0, 30.0])
    handle.remove()
    x.grad = None
    y = x * 3.0
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        ag.ones(2).register_hook(lambda g: g)


def test_retain_grad():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    y.retain_grad()
    z = y * 2.0
    assert y.retains_grad and not z.retains_grad
    z.sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), [2.0, 2.0])
    assert z.grad is None
    x.retain_grad()  # a no-op on leaves
    with pytest.raises(
        RuntimeError, match="can't retain_grad on Tensor that has requires_grad=False"
    ):
        ag.ones(2).retain_grad()


def test_requires_grad_rules_and_errors():
    x = ag.ones(2, requires_grad=True)
    c = ag.ones(2)
    assert (x + c).requires_grad and not (c * 2).requires_grad and x.is_leaf
    assert not (x + c).is_leaf and x.detach().requires_grad is False
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype"):
        ag.tensor([1, 2]).requires_grad_()
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf"):
        (x * 2).requires_grad_(False)
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad"):
        c.sum().backward()
    with pytest.raises(RuntimeError, match="One of the differentiated Tensors does not require"):
        ag.autograd.grad((x * 2).sum(), c)
    with pytest.raises(RuntimeError, match=r"^grad can be implicitly created only for scalar"):
        (x * 2).backward()
    (x * 2).backward(ag.tensor([1.0, 0.5]))
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 1.0])
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        (x * 2).backward(ag.ones(3))


def test_float32_stays_float32_for_every_builtin_op():
    rng = np.random.default_rng(0)
    a = ag.tensor(rng.uniform(0.5, 2.0, (2, 3)).astype("float32"), requires_grad=True)
    b = ag.tensor(rng.uniform(0.5, 2.0, (2, 3)).astype("float32"), requires_grad=True)
    m = ag.tensor(rng.uniform(0.5, 2.0, (3, 2)).astype("float32"), requires_grad=True)
    unary = [
        "abs",
        "cos",
        "exp",
        "log",
        "neg",
        "relu",
        "rsqrt",
        "sigmoid",
        "sin",
        "sqrt",
        "tanh",
        "clone",
    ]
    ops = {name: (lambda n: lambda: getattr(ag, n)(a))(name) for name in unary}
    ops.update(
        add=lambda: ag.add(a, b), sub=lambda: ag.sub(a, b), mul=lambda: ag.mul(a, b),
        div=lambda: ag.div(a, b), pow=lambda: ag.pow(a, 2.5), pow_t=lambda: ag.pow(a, b),
        maximum=lambda: ag.maximum(a, b), minimum=lambda: ag.minimum(a, b),
        matmul=lambda: ag.matmul(a, m), mm=lambda: ag.mm(a, m),
        bmm=lambda: ag.bmm(a.unsqueeze(0), m.unsqueeze(0)), mean=lambda: ag.mean(a, 1),
        sum=lambda: ag.sum(a), clamp=lambda: ag.clamp(a, 0.7, 1.5), where=lambda: ag.where(a > b, a, b),
        reshape=lambda: ag.reshape(a, (3, 2)), permute=lambda: ag.permute(a, (1, 0)),
        t=lambda: ag.t(a), transpose=lambda: ag.transpose(a, 0, 1), flatten=lambda: ag.flatten(a),
        squeeze=lambda: ag.squeeze(a.unsqueeze(0)), unflatten=lambda: ag.unflatten(a, 1, (3, 1)),
        expand=lambda: ag.expand(a.unsqueeze(0), 4, 2, 3), broadcast_to=lambda: ag.broadcast_to(a, (2, 2, 3)),
        sum_to=lambda: ag.sum_to(a, (1, 3)), scalar_mix=lambda: 2 * a / 3.0 - 1 + a ** 2,
        index=lambda: a[0, 1:], trunc=lambda: ag.trunc(a) + a, sign=lambda: ag.sign(a) * a,
    )  # fmt: skip
    for name, op in ops.items():
        a.grad = b.grad = m.grad = None
        out = op()
        assert out.dtype == ag.float32, name
        out.sum().backward()
        for p in (a, b, m):
            assert p.grad is None or p.grad.dtype == ag.float32, name


def test_grad_fn_names_and_next_functions():
    (x, tx), (w, tw) = _pair(2, 3), _pair(3, 2, seed=1)
    for ours, theirs in (
        (x * 2.0, tx * 2.0),
        ((x @ w).exp(), (tx @ tw).exp()),
        (x.sum(1), tx.sum(1)),
    ):
        assert ours.grad_fn.name() == theirs.grad_fn.name()
        assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
        # compared without (None, 0) entries: ours lists one per non-tensor argument (dim=...)
        assert [type(f).__name__ for f, _ in ours.grad_fn.next_functions if f] == [
            type(f).__name__ for f, _ in theirs.grad_fn.next_functions if f
        ]
    y = x @ w
    acc_x, acc_w = (f for f, _ in y.grad_fn.next_functions)
    assert acc_x.variable is x and acc_w.variable is w and acc_x.name() == "AccumulateGrad"


def test_matrix_vector_grad_fn_name():
    (x, tx), (v, tv) = _pair(2, 3), _pair(3, seed=1)
    assert (x @ v).grad_fn.name() == (tx @ tv).grad_fn.name()


def test_full_sum_grad_fn_name():
    (x, tx) = _pair(2, 3)
    assert x.sum().grad_fn.name() == tx.sum().grad_fn.name()
