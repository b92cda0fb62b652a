"""The engine's gradient sums for a tensor that feeds many consumers: the first sum is a new
array, later gradients are added into it in place; gradients passed through unchanged (add's
backward), hooks, retained gradients and root gradients must not be changed by that."""

import numpy as np
from lazy_torch import torch

import autogradcli as ag


def _both(fn, *arrays):
    """fn on autogradcli and torch leaves; their gradients."""
    out = []
    for lib in (ag, torch):
        leaves = [lib.tensor(a, requires_grad=True) for a in arrays]
        fn(lib, *leaves).backward()
        out.append([t.grad.detach().numpy() for t in leaves])
    return out


def test_many_consumers_and_passed_through_gradients():
    def fn(lib, a, w):
        b = a * 2.0
        total = b + b  # add's backward hands the same gradient to both edges
        for k in range(20):
            total = total + (b * w) * float(k) + b
        return (total * total).sum()

    rng = np.random.default_rng(0)
    ours, theirs = _both(fn, rng.standard_normal((3, 4)), rng.standard_normal((3, 4)))
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o, t, rtol=1e-12)


def test_hooks_and_retained_grads_see_the_full_sum():
    a = ag.tensor(np.ones(3), requires_grad=True)
    b = a * 1.0
    b.retain_grad()
    seen = []
    b.register_hook(lambda g: seen.append(g.numpy().copy()))
    root = ag.tensor(np.full(3, 2.0))
    (b + b + b).backward(root)
    np.testing.assert_array_equal(seen[0], np.full(3, 6.0))
    np.testing.assert_array_equal(b.grad.numpy(), np.full(3, 6.0))
    np.testing.assert_array_equal(root.numpy(), np.full(3, 2.0))  # the root gradient unchanged
    np.testing.assert_array_equal(a.grad.numpy(), np.full(3, 6.0))


def test_shared_weight_over_steps_float32():
    w = ag.tensor(
        np.random.default_rng(1).standard_normal((4, 4)).astype("float32"), requires_grad=True
    )
    wt = torch.tensor(w.detach().numpy(), requires_grad=True)
    h, ht = ag.ones(2, 4), torch.ones(2, 4)
    for _ in range(10):
        h, ht = (h @ w).tanh(), (ht @ wt).tanh()
    h.sum().backward()
    ht.sum().backward()
    assert w.grad.dtype == ag.float32
    np.testing.assert_allclose(w.grad.numpy(), wt.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_grad_capture_and_create_graph_unchanged():
    x = ag.tensor(np.arange(3.0), requires_grad=True)
    y = x * x
    z = y + y + y
    (gx,) = ag.autograd.grad(z.sum(), [x], create_graph=True)
    np.testing.assert_array_equal(gx.detach().numpy(), 6 * np.arange(3.0))
    (ggx,) = ag.autograd.grad(gx.sum(), [x])
    np.testing.assert_array_equal(ggx.numpy(), np.full(3, 6.0))
