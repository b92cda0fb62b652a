"""LSTM, GRU and RNN (and their cells) against PyTorch from identical weights: outputs, final
states and every parameter's gradient, 1 and 2 layers, batch_first, given or default states."""

import numpy as np
import pytest
from lazy_torch import torch

tnn = torch.nn

import autogradcli as ag
import autogradcli.nn as nn


def _pair(make):
    ours, theirs = make(nn), make(tnn).double()
    ours.double()
    assert repr(ours) == repr(theirs)
    names = [n for n, _ in ours.named_parameters()]
    assert names == [n for n, _ in theirs.named_parameters()]
    for (_, p), tp in zip(ours.named_parameters(), theirs.parameters()):
        assert tuple(p.shape) == tuple(tp.shape)
        p.data = ag.tensor(tp.detach().numpy().copy())
    return ours, theirs


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [out]


def _compare(ours, theirs, x, states=None):
    xa, xt = ag.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    sa = st = None
    if states is not None:
        sa = tuple(ag.tensor(s, requires_grad=True) for s in states)
        st = tuple(torch.tensor(s, requires_grad=True) for s in states)
        if len(states) == 1:
            sa, st = sa[0], st[0]
    out_a, out_t = _flat(ours(xa, sa)), _flat(theirs(xt, st))
    assert len(out_a) == len(out_t)
    rng = np.random.default_rng(5)
    loss_a = loss_t = 0
    for a, t in zip(out_a, out_t):
        assert tuple(a.shape) == tuple(t.shape)
        np.testing.assert_allclose(a.detach().numpy(), t.detach().numpy(), atol=1e-10)
        g = rng.standard_normal(tuple(t.shape))
        loss_a = loss_a + (a * ag.tensor(g)).sum()
        loss_t = loss_t + (t * torch.tensor(g)).sum()
    loss_a.backward()
    loss_t.backward()
    np.testing.assert_allclose(xa.grad.numpy(), xt.grad.numpy(), atol=1e-10)
    for (name, p), tp in zip(ours.named_parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), atol=1e-10, err_msg=name)
    if states is not None:
        for a, t in zip(_flat(sa), _flat(st)):
            np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), atol=1e-10)


CASES = [
    (lambda m: m.LSTM(3, 4), False),
    (lambda m: m.LSTM(3, 4, num_layers=2, batch_first=True), True),
    (lambda m: m.GRU(3, 4), False),
    (lambda m: m.GRU(3, 4, num_layers=2, batch_first=True, bias=False), True),
    (lambda m: m.RNN(3, 4, num_layers=2), False),
    (lambda m: m.RNN(3, 4, nonlinearity="relu", batch_first=True), True),
]


@pytest.mark.parametrize("make, batch_first", CASES)
@pytest.mark.parametrize("with_state", [False, True])
def test_recurrent_matches_torch(make, batch_first, with_state):
    ours, theirs = _pair(make)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 5, 3) if batch_first else (5, 2, 3))
    states = None
    if with_state:
        n = 2 if isinstance(ours, nn.LSTM) else 1
        states = [rng.standard_normal((ours.num_layers, 2, 4)) for _ in range(n)]
    _compare(ours, theirs, x, states)


def test_unbatched_input():
    ours, theirs = _pair(lambda m: m.LSTM(3, 4, num_layers=2))
    _compare(ours, theirs, np.random.default_rng(1).standard_normal((5, 3)))


@pytest.mark.parametrize(
    "make, n_states",
    [
        (lambda m: m.LSTMCell(3, 4), 2),
        (lambda m: m.GRUCell(3, 4), 1),
        (lambda m: m.RNNCell(3, 4, nonlinearity="relu"), 1),
        (lambda m: m.RNNCell(3, 4, bias=False), 1),
    ],
)
def test_cells(make, n_states):
    ours, theirs = _pair(make)
    rng = np.random.default_rng(2)
    states = [rng.standard_normal((2, 4)) for _ in range(n_states)]
    _compare(ours, theirs, rng.standard_normal((2, 3)), states)


def test_default_init_float32():
    ag.manual_seed(0)
    lstm = nn.LSTM(4, 16, num_layers=2)
    assert lstm.weight_ih_l0.shape == (64, 4) and lstm.weight_hh_l1.shape == (64, 16)
    for p in lstm.parameters():
        assert p.dtype == ag.float32
        assert np.abs(p.detach().numpy()).max() <= 0.25
    out, (h, c) = lstm(ag.randn(3, 2, 4))
    assert out.shape == (3, 2, 16) and h.shape == (2, 2, 16) and c.shape == (2, 2, 16)
    assert out.dtype == ag.float32


def test_reprs_and_errors():
    for make in [
        lambda m: m.LSTM(4, 8, num_layers=2, batch_first=True),
        lambda m: m.GRU(4, 8, dropout=0.5, num_layers=2),
        lambda m: m.RNN(4, 8, bias=False),
        lambda m: m.GRUCell(4, 8, bias=False),
    ]:
        assert repr(make(nn)) == repr(make(tnn))
    with pytest.raises(RuntimeError, match=r"input.size\(-1\) must be equal to input_size"):
        nn.GRU(3, 4)(ag.randn(5, 2, 2))
