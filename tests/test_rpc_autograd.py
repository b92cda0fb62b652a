"""Distributed autograd and DistributedOptimizer: a forward pass through a local layer and two
remote ones (one called from the other) has the gradients and the SGD losses that torch computes
for the same model in one process."""

from __future__ import annotations

import time

import numpy as np
import pytest
from test_rpc import run_workers

import autogradcli as torch
import autogradcli.distributed.autograd as dist_autograd
import autogradcli.distributed.rpc as rpc
import autogradcli.nn as nn
import autogradcli.nn.functional as F
from autogradcli.distributed.optim import DistributedOptimizer

RNG = np.random.default_rng(0)
W = {  # (weight, bias) of the trainer's layer L and the remote layers A (on w1) and B (on w2)
    "L": (RNG.standard_normal((4, 3)), RNG.standard_normal(4)),
    "A": (RNG.standard_normal((5, 4)), RNG.standard_normal(5)),
    "B": (RNG.standard_normal((2, 5)), RNG.standard_normal(2)),
}
DATA = [(RNG.standard_normal((6, 3)).astype(np.float32), RNG.integers(0, 2, 6)) for _ in range(3)]
LR = 0.1


def linear(mod, name):
    layer = mod.nn.Linear(*W[name][0].shape[::-1])
    with mod.no_grad():
        layer.weight.copy_(mod.tensor(W[name][0], dtype=mod.float32))
        layer.bias.copy_(mod.tensor(W[name][1], dtype=mod.float32))
    return layer


def torch_reference():
    """Losses and first-step gradients of the same model, in one process, by torch."""
    t = pytest.importorskip("torch")
    layers = [linear(t, n) for n in "LAB"]
    params = [p for layer in layers for p in layer.parameters()]
    opt = t.optim.SGD(params, lr=LR)
    losses, grads = [], None
    for x, y in DATA:
        opt.zero_grad()
        x, y = t.tensor(x), t.tensor(y)
        h = t.relu(layers[0](x))
        out = layers[2](t.tanh(layers[1](h)))
        out2 = layers[2](t.tanh(layers[1](h)))
        loss = t.nn.functional.cross_entropy(out, y) + out2.pow(2).mean()
        loss.backward()
        if grads is None:
            grads = [p.grad.numpy().copy() for p in params]
        opt.step()
        losses.append(loss.item())
    return losses, grads


def make_layer(name):
    return linear(torch, name)


def param_rrefs(rref):
    return [rpc.RRef(p) for p in rref.local_value().parameters()]


def stage_b(rref, h):
    return rref.local_value()(h)


def stage_a(a_rref, b_rref, h):
    """On w1: A, then B on w2 (a nested RPC inside the context)."""
    return rpc.rpc_sync("w2", stage_b, args=(b_rref, torch.tanh(a_rref.local_value()(h))))


def grads_of(rref, cid):
    grads = dist_autograd.get_gradients(cid)
    return [grads[p].numpy() for p in rref.local_value().parameters()]


def has_context(cid):
    try:
        dist_autograd.get_gradients(cid)
    except RuntimeError:
        return False
    return True


def _trainer(rank, result):
    if rank != 0:
        return
    local = make_layer("L")
    a = rpc.remote("w1", make_layer, args=("A",))
    b = rpc.remote("w2", make_layer, args=("B",))
    rrefs = [rpc.RRef(p) for p in local.parameters()]
    rrefs += rpc.rpc_sync("w1", param_rrefs, args=(a,)) + rpc.rpc_sync("w2", param_rrefs, args=(b,))
    opt = DistributedOptimizer(torch.optim.SGD, rrefs, lr=LR)
    losses, grads = [], None
    for x, y in DATA:
        with dist_autograd.context() as cid:
            h = torch.relu(local(torch.tensor(x)))
            out = rpc.rpc_sync("w1", stage_a, args=(a, b, h))
            out2 = rpc.rpc_sync("w1", stage_a, args=(a, b, h))  # h sent again: gradients add up
            loss = F.cross_entropy(out, torch.tensor(y)) + out2.pow(2).mean()
            dist_autograd.backward(cid, [loss])
            if grads is None:
                mine = dist_autograd.get_gradients(cid)
                grads = [mine[p].numpy() for p in local.parameters()]
                grads += rpc.rpc_sync("w1", grads_of, args=(a, cid))
                grads += rpc.rpc_sync("w2", grads_of, args=(b, cid))
                assert local.weight.grad is None  # .grad is never touched
                with pytest.raises(RuntimeError, match="Already have an autograd context"):
                    dist_autograd.context().__enter__()
            opt.step(cid)
            losses.append(loss.item())
        deadline = time.monotonic() + 5  # contexts are released on every worker they reached
        while rpc.rpc_sync("w2", has_context, args=(cid,)) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not has_context(cid) and not rpc.rpc_sync("w2", has_context, args=(cid,))
    result.put((losses, grads))


def test_parameter_server_training_matches_torch_in_one_process():
    import multiprocessing

    ref_losses, ref_grads = torch_reference()
    result = multiprocessing.get_context("fork").SimpleQueue()
    run_workers(_trainer, 3, result)
    losses, grads = result.get()
    assert len(grads) == len(ref_grads) == 6
    for ours, theirs in zip(grads, ref_grads):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-5)


def test_context_needs_rpc_and_unknown_ids_raise():
    with pytest.raises(RuntimeError, match="not been initialized"):
        dist_autograd.context().__enter__()
    with pytest.raises(RuntimeError, match="Could not find autograd context with id: 12345"):
        dist_autograd.get_gradients(12345)
    with pytest.raises(RuntimeError, match="Could not find autograd context"):
        dist_autograd.backward(12345, [torch.ones(1, requires_grad=True).sum()])


def test_leaf_sent_directly_gets_its_gradient():
    """A leaf tensor (not a computed one) crossing RPC: its gradient comes back to its owner."""
    run_workers(_leaf, 2)


def scale(t):
    return t * 3


def _leaf(rank):
    if rank != 0:
        return
    w = nn.Parameter(torch.tensor([1.0, 2.0]))
    with dist_autograd.context() as cid:
        loss = rpc.rpc_sync("w1", scale, args=(w,)).sum()
        dist_autograd.backward(cid, [loss])
        assert dist_autograd.get_gradients(cid)[w].tolist() == [3.0, 3.0]
