"""The whole-sequence recurrent Functions (ops/recurrent.py) against PyTorch and against the
per-step ops they replace (``nn.rnn.FUSED = False``): values and every gradient in float64 and
float32, bidirectional, stacked, batch_first, no bias, LSTM projections, initial states, inputs that do not require
grad, dropout between layers, create_graph, retain_graph, in-place changes of the output, and the
strict cupy stand-in."""

import numpy as np
import pytest
from lazy_torch import torch
from test_nn_rnn import _pair

import autogradcli as ag
import autogradcli.nn as nn
import autogradcli.nn.rnn as rnn_module

MAKES = {
    "lstm": lambda m: m.LSTM(3, 4),
    "lstm2bi": lambda m: m.LSTM(3, 4, num_layers=2, bidirectional=True),
    "lstm_nobias_bf": lambda m: m.LSTM(3, 4, bias=False, batch_first=True),
    "gru2": lambda m: m.GRU(3, 4, num_layers=2),
    "gru_bi_nobias": lambda m: m.GRU(3, 4, bidirectional=True, bias=False),
    "rnn_tanh2bi": lambda m: m.RNN(3, 4, num_layers=2, bidirectional=True),
    "rnn_relu_bf": lambda m: m.RNN(3, 4, nonlinearity="relu", batch_first=True),
    "lstm_proj": lambda m: m.LSTM(3, 5, proj_size=2),
    "lstm_proj2bi": lambda m: m.LSTM(3, 5, num_layers=2, proj_size=3, bidirectional=True),
}


def _states(m, n, rng):
    rows = m.num_layers * (2 if m.bidirectional else 1)
    h = getattr(m, "proj_size", 0) or m.hidden_size
    if isinstance(m, (nn.LSTM, torch.nn.LSTM)):
        return [rng.standard_normal((rows, n, h)), rng.standard_normal((rows, n, m.hidden_size))]
    return [rng.standard_normal((rows, n, h))]


def _run(model, lib, x, states, grad_x, grad_states, dtype):
    """Outputs and gradients (x, states, parameters) of a weighted sum of all outputs."""
    xt = lib.tensor(x.astype(dtype), requires_grad=grad_x)
    st = None
    if states is not None:
        st = [lib.tensor(s.astype(dtype), requires_grad=grad_states) for s in states]
        st = tuple(st) if len(st) > 1 else st[0]
    out, fin = model(xt, st)
    fin = list(fin) if isinstance(fin, tuple) else [fin]
    rng = np.random.default_rng(9)
    loss = 0
    for o in [out, *fin]:
        loss = loss + (o * lib.tensor(rng.standard_normal(tuple(o.shape)).astype(dtype))).sum()
    loss.backward()
    grads = [xt.grad] + (
        [s.grad for s in (st if isinstance(st, tuple) else [st])] if st is not None else []
    )
    grads += [p.grad for p in model.parameters()]
    return [t.detach().numpy() for t in [out, *fin]], [
        None if g is None else g.detach().numpy() for g in grads
    ]


def _assert_same(a, b, tol):
    for u, v in zip(a, b):
        if u is None or v is None:
            assert u is None and v is None
            continue
        assert u.dtype == v.dtype
        np.testing.assert_allclose(u, v, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", list(MAKES))
@pytest.mark.parametrize("with_state, grad_x", [(False, True), (True, True), (True, False)])
def test_fused_matches_torch_float64(name, with_state, grad_x):
    ours, theirs = _pair(MAKES[name])
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 6, 3) if ours.batch_first else (6, 2, 3))
    states = _states(ours, 2, rng) if with_state else None
    va, ga = _run(ours, ag, x, states, grad_x, True, "float64")
    vt, gt = _run(theirs, torch, x, states, grad_x, True, "float64")
    _assert_same(va, vt, 1e-10)
    _assert_same(ga, gt, 1e-10)


@pytest.mark.parametrize("name", list(MAKES))
def test_fused_matches_per_step_ops(name, monkeypatch):
    ours, _ = _pair(MAKES[name])
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 5, 3) if ours.batch_first else (5, 2, 3))
    states = _states(ours, 2, rng)
    fused = _run(ours, ag, x, states, True, True, "float64")
    ours.zero_grad()
    monkeypatch.setattr(rnn_module, "FUSED", False)
    steps = _run(ours, ag, x, states, True, True, "float64")
    _assert_same(fused[0], steps[0], 1e-12)
    _assert_same(fused[1], steps[1], 1e-12)


@pytest.mark.parametrize("name", ["lstm2bi", "gru2", "rnn_tanh2bi", "lstm_proj2bi"])
def test_fused_float32_matches_torch(name):
    ours, theirs = _pair(MAKES[name])
    ours.float()
    theirs.float()
    rng = np.random.default_rng(2)
    x = rng.standard_normal((7, 3, 3))
    states = _states(ours, 3, rng)
    va, ga = _run(ours, ag, x, states, True, True, "float32")
    vt, gt = _run(theirs, torch, x, states, True, True, "float32")
    assert all(v.dtype == np.float32 for v in va + ga)
    _assert_same(va, vt, 1e-5)
    _assert_same(ga, gt, 1e-4)


def test_word_language_model_shape_float32():
    """The benchmark's layer (2 x 256 over 35 x 32 tokens) at float32 tolerance."""
    ours, theirs = _pair(lambda m: m.LSTM(16, 64, num_layers=2))
    ours.float()
    theirs.float()
    x = np.random.default_rng(3).standard_normal((35, 32, 16))
    va, ga = _run(ours, ag, x, None, True, False, "float32")
    vt, gt = _run(theirs, torch, x, None, True, False, "float32")
    _assert_same(va, vt, 2e-5)
    _assert_same(ga, gt, 2e-4)


@pytest.mark.parametrize("shape", [(1, 1, 3), (1, 4, 3), (4, 1, 3)])
def test_one_step_and_one_sample(shape):
    ours, theirs = _pair(MAKES["lstm2bi"])
    x = np.random.default_rng(4).standard_normal(shape)
    va, ga = _run(ours, ag, x, None, True, False, "float64")
    vt, gt = _run(theirs, torch, x, None, True, False, "float64")
    _assert_same(va + ga, vt + gt, 1e-10)


def test_unbatched_and_non_contiguous_input():
    ours, theirs = _pair(MAKES["gru_bi_nobias"])
    x = np.random.default_rng(5).standard_normal((3, 6, 2)).transpose(1, 2, 0)  # (6, 2, 3) view
    va, ga = _run(ours, ag, x, None, True, False, "float64")
    vt, gt = _run(theirs, torch, x, None, True, False, "float64")
    _assert_same(va + ga, vt + gt, 1e-10)
    u = x[:, 0]
    ya, yt = ours(ag.tensor(u))[0], theirs(torch.tensor(u))[0]
    np.testing.assert_allclose(ya.detach().numpy(), yt.detach().numpy(), atol=1e-10)


def test_one_node_per_layer_and_the_switch(monkeypatch):
    lstm = nn.LSTM(3, 4)
    x = ag.randn(5, 2, 3)
    assert type(lstm(x)[0].grad_fn).__name__ == "RecurrentSequenceBackward0"
    monkeypatch.setattr(rnn_module, "FUSED", False)
    assert type(lstm(x)[0].grad_fn).__name__ != "RecurrentSequenceBackward0"
    proj = nn.LSTM(3, 4, proj_size=2)
    monkeypatch.setattr(rnn_module, "FUSED", True)
    assert type(proj(x)[0].grad_fn).__name__ == "RecurrentSequenceBackward0"


def test_empty_batch_uses_per_step_ops():
    lstm = nn.LSTM(3, 4)
    out, (h, c) = lstm(ag.randn(5, 0, 3))
    assert out.shape == (5, 0, 4) and h.shape == c.shape == (1, 0, 4)


def test_dropout_between_layers_same_masks_as_per_step(monkeypatch):
    lstm = nn.LSTM(3, 4, num_layers=3, dropout=0.5).double()
    x = np.random.default_rng(6).standard_normal((5, 2, 3))
    ag.manual_seed(0)
    a = _run(lstm, ag, x, None, True, False, "float64")
    lstm.zero_grad()
    monkeypatch.setattr(rnn_module, "FUSED", False)
    ag.manual_seed(0)
    b = _run(lstm, ag, x, None, True, False, "float64")
    _assert_same(a[0] + a[1], b[0] + b[1], 1e-12)
    lstm.eval()  # no dropout: as torch
    ours, theirs = _pair(lambda m: m.LSTM(3, 4, num_layers=3, dropout=0.5))
    ours.eval()
    theirs.eval()
    va, _ = _run(ours, ag, x, None, True, False, "float64")
    vt, _ = _run(theirs, torch, x, None, True, False, "float64")
    _assert_same(va, vt, 1e-10)


def _double_backward(model, lib, x):
    """Gradient of the squared norm of the first-order parameter gradients (create_graph)."""
    xt = lib.tensor(x, requires_grad=True)
    out, _ = model(xt)
    params = list(model.parameters())
    grads = lib.autograd.grad((out * out).sum(), params + [xt], create_graph=True)
    penalty = sum((g * g).sum() for g in grads)
    second = lib.autograd.grad(penalty, params + [xt])
    return [g.detach().numpy() for g in grads + tuple(second)]


@pytest.mark.parametrize("name", ["lstm2bi", "gru2", "rnn_relu_bf", "lstm_proj"])
def test_create_graph_double_backward_matches_torch(name):
    ours, theirs = _pair(MAKES[name])
    x = np.random.default_rng(7).standard_normal((2, 4, 3) if ours.batch_first else (4, 2, 3))
    _assert_same(_double_backward(ours, ag, x), _double_backward(theirs, torch, x), 1e-9)


def test_retain_graph_backward_twice():
    lstm = nn.LSTM(3, 4, num_layers=2).double()
    x = ag.tensor(np.random.default_rng(8).standard_normal((5, 2, 3)), requires_grad=True)
    loss = lstm(x)[0].sum()
    loss.backward(retain_graph=True)
    first = [p.grad.numpy().copy() for p in lstm.parameters()]
    loss.backward()
    for f, p in zip(first, lstm.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), 2 * f, rtol=1e-12)


def test_changing_the_output_in_place_is_refused():
    lstm = nn.LSTM(3, 4)
    out, _ = lstm(ag.randn(5, 2, 3))
    loss = (out * out).sum()
    out.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


@pytest.mark.parametrize("name", ["lstm2bi", "gru_bi_nobias", "rnn_relu_bf", "lstm_proj2bi"])
def test_strict_cuda_matches_cpu(name, strict_cuda):
    cpu = MAKES[name](nn)
    dev = MAKES[name](nn)
    dev.load_state_dict(cpu.state_dict())
    dev.to("cuda")
    x = np.random.default_rng(9).standard_normal((2, 5, 3)).astype("float32")
    xc = ag.tensor(x, requires_grad=True)
    xd = ag.tensor(x, device="cuda", requires_grad=True)
    oc, od = cpu(xc)[0], dev(xd)[0]
    (oc * oc).sum().backward()
    (od * od).sum().backward()
    np.testing.assert_allclose(od.cpu().detach().numpy(), oc.detach().numpy(), atol=1e-6)
    np.testing.assert_allclose(xd.grad.cpu().numpy(), xc.grad.numpy(), atol=1e-5)
    for pc, pd in zip(cpu.parameters(), dev.parameters()):
        np.testing.assert_allclose(pd.grad.cpu().numpy(), pc.grad.numpy(), atol=1e-5)


def test_dtype_mismatches_refused_as_torch():
    lstm = nn.LSTM(3, 4).double()
    with pytest.raises(ValueError) as theirs:
        torch.nn.LSTM(3, 4).double()(torch.randn(5, 2, 3))
    with pytest.raises(ValueError, match="does not match weight dtype") as ours:
        lstm(ag.randn(5, 2, 3))
    assert str(ours.value).replace("autogradcli", "torch") == str(theirs.value)
    gru = nn.GRU(3, 4)
    with pytest.raises(RuntimeError) as theirs:
        torch.nn.GRU(3, 4)(torch.randn(5, 2, 3), torch.randn(1, 2, 4).double())
    with pytest.raises(RuntimeError) as ours:
        gru(ag.randn(5, 2, 3), ag.randn(1, 2, 4).double())
    assert str(ours.value) == str(theirs.value)


def test_a_device_runs_each_lstm_step_as_one_fused_kernel(monkeypatch, strict_cuda):
    """On a device the LSTM's per-step elementwise work is one kernel each way
    (ops/recurrent_device.py); the CPU loop stays the reference (test_strict_cuda_matches_cpu
    compares the two)."""
    from autogradcli.backend.kernels import Kernel
    from autogradcli.ops import recurrent_cells, recurrent_device

    calls = []
    for name in ("LSTM_STEP", "LSTM_STEP_BACKWARD"):
        body = getattr(recurrent_device, name).body

        def counted(*args, _body=body, _name=name):
            calls.append(_name)
            return _body(*args)

        monkeypatch.setattr(recurrent_cells, name, Kernel(name.lower(), counted))
    lstm = nn.LSTM(3, 4, 2).to("cuda")
    lstm(ag.randn(5, 2, 3, device="cuda"))[0].sum().backward()
    assert calls.count("LSTM_STEP") == calls.count("LSTM_STEP_BACKWARD") == 10  # 5 steps x 2
    calls.clear()
    nn.LSTM(3, 4)(ag.randn(5, 2, 3))[0].sum().backward()
    assert calls == []  # numpy arrays keep the reference loop
