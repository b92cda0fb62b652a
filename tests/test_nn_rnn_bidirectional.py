"""Bidirectional RNN/LSTM/GRU and LSTM ``proj_size`` against PyTorch from identical weights:
parameter names and shapes, outputs, final states, every gradient; their errors and reprs."""

import numpy as np
import pytest
from lazy_torch import torch
from test_nn_rnn import _compare, _pair

import autogradcli as ag
import autogradcli.nn as nn

CASES = [
    lambda m: m.LSTM(3, 4, bidirectional=True),
    lambda m: m.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True),
    lambda m: m.GRU(3, 4, num_layers=2, bidirectional=True, bias=False),
    lambda m: m.RNN(3, 4, bidirectional=True, nonlinearity="relu"),
    lambda m: m.LSTM(3, 5, proj_size=2),
    lambda m: m.LSTM(3, 5, num_layers=2, proj_size=2, bidirectional=True),
]


def _state_shapes(m):
    rows = m.num_layers * (2 if m.bidirectional else 1)
    h = m.proj_size or m.hidden_size
    return [(rows, 2, h), (rows, 2, m.hidden_size)] if isinstance(m, nn.LSTM) else [(rows, 2, h)]


@pytest.mark.parametrize("make", CASES)
@pytest.mark.parametrize("with_state", [False, True])
def test_bidirectional_and_projection_match_torch(make, with_state):
    ours, theirs = _pair(make)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 5, 3) if ours.batch_first else (5, 2, 3))
    states = [rng.standard_normal(s) for s in _state_shapes(ours)] if with_state else None
    _compare(ours, theirs, x, states)


def test_unbatched_bidirectional():
    ours, theirs = _pair(lambda m: m.GRU(3, 4, bidirectional=True))
    _compare(ours, theirs, np.random.default_rng(4).standard_normal((6, 3)))


def test_float32_shapes_and_flatten_parameters():
    lstm = nn.LSTM(4, 6, num_layers=2, bidirectional=True, proj_size=3)
    lstm.flatten_parameters()  # a no-op, as on PyTorch's CPU
    out, (h, c) = lstm(ag.randn(7, 2, 4))
    assert out.shape == (7, 2, 6) and h.shape == (4, 2, 3) and c.shape == (4, 2, 6)
    assert out.dtype == h.dtype == ag.float32


def test_errors_and_reprs_match_torch():
    tnn = torch.nn
    make = lambda m: m.LSTM(4, 8, num_layers=2, bidirectional=True, proj_size=3)
    assert repr(make(nn)) == repr(make(tnn))
    for kwargs in [{"proj_size": 8}, {"proj_size": -1}]:
        with pytest.raises(ValueError) as theirs:
            tnn.LSTM(4, 8, **kwargs)
        with pytest.raises(ValueError, match=str(theirs.value)):
            nn.LSTM(4, 8, **kwargs)
    with pytest.raises(ValueError) as theirs:
        tnn.GRU(4, 8, proj_size=2)
    with pytest.raises(ValueError, match=str(theirs.value)):
        nn.GRU(4, 8, proj_size=2)
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(2, 3, 8\), got \[1, 3, 8\]"):
        nn.GRU(4, 8, bidirectional=True)(ag.randn(5, 3, 4), ag.zeros(1, 3, 8))
