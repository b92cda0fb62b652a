"""Batch, layer and group normalization against PyTorch: functional forms (forward, grads,
grad-of-grad), modules in train and eval mode, running statistics over several steps, reprs."""

import numpy as np
import pytest
from lazy_torch import torch

tnn = torch.nn
TF = torch.nn.functional
from oracle import check

import autogradcli as ag
import autogradcli.nn as nn
import autogradcli.nn.functional as F


def _lib(m):
    return TF if m is torch else F


@pytest.mark.parametrize("shape", [(5, 3), (4, 3, 6), (3, 2, 4, 5)])
def test_batch_norm_training(shape):
    c = shape[1]
    check(
        lambda m, x, w, b: _lib(m).batch_norm(x, None, None, w, b, training=True, eps=1e-3),
        shape,
        (c,),
        (c,),
    )


def test_batch_norm_eval():
    rm, rv = np.random.default_rng(3).standard_normal(3), np.random.default_rng(4).random(3) + 0.5
    check(
        lambda m, x, w, b, mu, var: _lib(m).batch_norm(x, mu, var, w, b),
        (4, 3, 5),
        (3,),
        (3,),
        rm,
        rv,
        grad_inputs=[0, 1, 2],
    )


def test_layer_norm():
    check(lambda m, x, w, b: _lib(m).layer_norm(x, (4,), w, b), (3, 5, 4), (4,), (4,))
    check(
        lambda m, x, w, b: _lib(m).layer_norm(x, (5, 4), w, b, eps=1e-3), (3, 5, 4), (5, 4), (5, 4)
    )
    check(lambda m, x: _lib(m).layer_norm(x, [4]), (3, 4), dtype="float32")


def test_group_norm():
    check(lambda m, x, w, b: _lib(m).group_norm(x, 2, w, b), (3, 4, 5), (4,), (4,))
    check(lambda m, x, w, b: _lib(m).group_norm(x, 3, w, b), (2, 6, 3, 2), (6,), (6,))
    check(lambda m, x: _lib(m).group_norm(x, 1), (2, 6, 3), dtype="float32")


def test_instance_norm():
    check(lambda m, x, w, b: _lib(m).instance_norm(x, weight=w, bias=b), (3, 4, 5), (4,), (4,))


def test_norm_errors():
    with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[5\]"):
        F.layer_norm(ag.randn(2, 4), (5,))
    with pytest.raises(RuntimeError, match="divisible by num_groups"):
        F.group_norm(ag.randn(2, 6, 3), 4)
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        nn.BatchNorm1d(3)(ag.randn(1, 3))
    with pytest.raises(ValueError, match="expected 4D input"):
        nn.BatchNorm2d(3)(ag.randn(2, 3))


def _copy(ours, theirs):
    for (n, p), (tn, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert n == tn
        p.data = ag.tensor(tp.detach().numpy().copy())


def _state(module):
    return {k: v.detach().numpy() for k, v in module.state_dict().items()}


@pytest.mark.parametrize(
    "make, shape",
    [
        (lambda m: m.BatchNorm1d(3), (6, 3)),
        (lambda m: m.BatchNorm1d(3, momentum=0.3), (4, 3, 5)),
        (lambda m: m.BatchNorm2d(4), (3, 4, 5, 2)),
        (lambda m: m.BatchNorm2d(4, momentum=None, affine=False), (3, 4, 2, 2)),
        (lambda m: m.BatchNorm2d(4, track_running_stats=False), (3, 4, 2, 2)),
    ],
)
def test_batch_norm_module_steps(make, shape):
    ours, theirs = make(nn), make(tnn)
    assert repr(ours) == repr(theirs)
    assert list(_state(ours)) == list(theirs.state_dict())
    rng = np.random.default_rng(0)
    if ours.weight is not None:
        w = rng.standard_normal(shape[1]).astype("float32")
        ours.weight.data, theirs.weight.data = ag.tensor(w), torch.tensor(w)
    for step in range(3):  # training: batch statistics, running stats updated each step
        x = (rng.standard_normal(shape) * 2 + step).astype("float32")
        xa, xt = ag.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        out, tout = ours(xa), theirs(xt)
        np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), atol=1e-5)
        g = rng.standard_normal(shape).astype("float32")
        out.backward(ag.tensor(g))
        tout.backward(torch.tensor(g))
        np.testing.assert_allclose(xa.grad.numpy(), xt.grad.numpy(), atol=1e-4)
        for p, tp in zip(ours.parameters(), theirs.parameters()):
            np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-4, atol=1e-4)
    for k, v in theirs.state_dict().items():
        np.testing.assert_allclose(_state(ours)[k], v.numpy(), rtol=1e-5, atol=1e-6, err_msg=k)
    ours.eval()
    theirs.eval()
    x = rng.standard_normal(shape).astype("float32")
    np.testing.assert_allclose(
        ours(ag.tensor(x)).detach().numpy(), theirs(torch.tensor(x)).detach().numpy(), atol=1e-5
    )
    assert ours.running_mean is None or ours.running_mean.dtype == ag.float32


@pytest.mark.parametrize(
    "make, shape",
    [
        (lambda m: m.LayerNorm(4), (2, 3, 4)),
        (lambda m: m.LayerNorm([3, 4], elementwise_affine=False), (2, 3, 4)),
        (lambda m: m.LayerNorm(4, eps=1e-3, bias=False), (5, 4)),
        (lambda m: m.GroupNorm(2, 4), (3, 4, 5)),
        (lambda m: m.GroupNorm(3, 6, affine=False), (2, 6, 2, 2)),
    ],
)
def test_layer_group_norm_modules(make, shape):
    ours, theirs = make(nn), make(tnn)
    assert repr(ours) == repr(theirs)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    rng = np.random.default_rng(1)
    for p, tp in zip(ours.parameters(), theirs.parameters()):
        v = rng.standard_normal(tuple(tp.shape)).astype("float32")
        p.data, tp.data = ag.tensor(v), torch.tensor(v)
    x = rng.standard_normal(shape).astype("float32")
    xa, xt = ag.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, tout = ours(xa), theirs(xt)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), atol=1e-5)
    (out * out).sum().backward()
    (tout * tout).sum().backward()
    np.testing.assert_allclose(xa.grad.numpy(), xt.grad.numpy(), atol=1e-4)
    for p, tp in zip(ours.parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-4, atol=1e-4)
