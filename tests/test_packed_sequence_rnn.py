"""``nn.LSTM``/``GRU``/``RNN`` on a ``PackedSequence`` against PyTorch on identical weights: the
packed output, h_n/c_n at each sequence's own last step (and the reverse direction's start at its
own end), every gradient, sorted and unsorted batches, initial states, float32, create_graph, the
per-step ops (``FUSED = False``) and the strict cupy stand-in; and the padded-sequence NLP pattern
(embedding, pack, LSTM, unpack, linear) ported by renaming the import."""

import numpy as np
import pytest
from lazy_torch import torch
from test_nn_rnn import _pair

import autogradcli as ag
import autogradcli.nn as nn
import autogradcli.nn.rnn as rnn_module
from autogradcli.nn.utils import rnn as R

MAKES = {
    "lstm": lambda m: m.LSTM(3, 4),
    "lstm2bi": lambda m: m.LSTM(3, 4, num_layers=2, bidirectional=True),
    "gru_bi": lambda m: m.GRU(3, 4, bidirectional=True),
    "gru2_nobias": lambda m: m.GRU(3, 4, num_layers=2, bias=False),
    "rnn_relu2": lambda m: m.RNN(3, 4, num_layers=2, nonlinearity="relu"),
    "rnn_tanh_bi": lambda m: m.RNN(3, 4, bidirectional=True),
    "lstm_proj2bi": lambda m: m.LSTM(3, 5, num_layers=2, proj_size=2, bidirectional=True),
    "lstm_bf_nobias": lambda m: m.LSTM(3, 4, bias=False, batch_first=True),  # ignored when packed
}
SORTED, UNSORTED = [5, 3, 3, 1], [2, 5, 1, 4]


def _states(model, n, rng):
    rows = model.num_layers * (2 if model.bidirectional else 1)
    h = getattr(model, "proj_size", 0) or model.hidden_size
    states = [rng.standard_normal((rows, n, h))]
    if "LSTM" in type(model).__name__:
        states.append(rng.standard_normal((rows, n, model.hidden_size)))
    return states


def _run(model, lib, x, lengths, enforce_sorted, states, dtype="float64"):
    """Padded output, final states and every gradient of a weighted sum of them."""
    u = R if lib is ag else torch.nn.utils.rnn
    xt = lib.tensor(x.astype(dtype), requires_grad=True)
    st = (
        None
        if states is None
        else [lib.tensor(s.astype(dtype), requires_grad=True) for s in states]
    )
    packed = u.pack_padded_sequence(xt, lengths, enforce_sorted=enforce_sorted)
    hx = None if st is None else (tuple(st) if len(st) > 1 else st[0])
    out, fin = model(packed, hx)
    assert type(out).__name__ == "PackedSequence"
    assert out.batch_sizes.tolist() == packed.batch_sizes.tolist()
    fin = list(fin) if isinstance(fin, tuple) else [fin]
    padded, _ = u.pad_packed_sequence(out)
    rng = np.random.default_rng(9)
    loss = 0
    for o in [padded, *fin]:
        loss = loss + (o * lib.tensor(rng.standard_normal(tuple(o.shape)).astype(dtype))).sum()
    loss.backward()
    grads = [xt.grad] + [s.grad for s in st or []] + [p.grad for p in model.parameters()]
    return [t.detach().numpy() for t in [padded, *fin, *grads]]


def _same(a, b, tol):
    assert len(a) == len(b)
    for u, v in zip(a, b):
        assert u.dtype == v.dtype
        np.testing.assert_allclose(u, v, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", list(MAKES))
@pytest.mark.parametrize("lengths, enforce_sorted", [(SORTED, True), (UNSORTED, False)])
def test_packed_matches_torch_float64(name, lengths, enforce_sorted):
    ours, theirs = _pair(MAKES[name])
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 4, 3))
    states = _states(ours, 4, rng) if enforce_sorted else None
    _same(
        _run(ours, ag, x, lengths, enforce_sorted, states),
        _run(theirs, torch, x, lengths, enforce_sorted, states),
        1e-10,
    )


@pytest.mark.parametrize("name", ["lstm2bi", "gru_bi", "rnn_tanh_bi", "lstm_proj2bi"])
def test_packed_unsorted_initial_states_match_torch(name):
    ours, theirs = _pair(MAKES[name])
    rng = np.random.default_rng(1)
    x = rng.standard_normal((5, 4, 3))
    states = _states(ours, 4, rng)  # permuted by sorted_indices, unpermuted on the way out
    _same(
        _run(ours, ag, x, UNSORTED, False, states),
        _run(theirs, torch, x, UNSORTED, False, states),
        1e-10,
    )


@pytest.mark.parametrize("name", ["lstm2bi", "gru2_nobias", "lstm_proj2bi"])
def test_packed_float32_matches_torch(name):
    ours, theirs = _pair(MAKES[name])
    ours.float()
    theirs.float()
    x = np.random.default_rng(2).standard_normal((6, 3, 3))
    va = _run(ours, ag, x, [3, 6, 2], False, None, "float32")
    vt = _run(theirs, torch, x, [3, 6, 2], False, None, "float32")
    assert all(v.dtype == np.float32 for v in va)
    _same(va, vt, 1e-4)


@pytest.mark.parametrize("name", ["lstm2bi", "gru_bi", "rnn_relu2", "lstm_proj2bi"])
def test_fused_equals_per_step_ops(name, monkeypatch):
    model = MAKES[name](nn).double()
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 4, 3))
    states = _states(model, 4, rng)
    fused = _run(model, ag, x, UNSORTED, False, states)
    model.zero_grad()
    monkeypatch.setattr(rnn_module, "FUSED", False)
    _same(fused, _run(model, ag, x, UNSORTED, False, states), 1e-12)


def test_final_states_at_each_sequences_own_end():
    """Hand check: forward h_n is the output at t = length - 1, the reverse direction's h_n its
    output at t = 0, and padding after a sequence's end changes nothing."""
    lstm = nn.LSTM(3, 4, bidirectional=True).double()
    x = np.random.default_rng(4).standard_normal((5, 3, 3))
    lengths = [2, 5, 3]
    with ag.no_grad():
        out, (h, _) = lstm(R.pack_padded_sequence(ag.tensor(x), lengths, enforce_sorted=False))
        padded = R.pad_packed_sequence(out)[0].numpy()
    for i, n in enumerate(lengths):
        np.testing.assert_allclose(h[0, i].numpy(), padded[n - 1, i, :4], atol=1e-12)
        np.testing.assert_allclose(h[1, i].numpy(), padded[0, i, 4:], atol=1e-12)
        assert not padded[n:, i].any()
        alone = lstm(ag.tensor(x[:n, i : i + 1]))[0].detach().numpy()[:, 0]  # by itself
        np.testing.assert_allclose(padded[:n, i], alone, atol=1e-12)


def test_one_node_per_layer_direction_and_dropout_masks(monkeypatch):
    lstm = nn.LSTM(3, 4, num_layers=3, dropout=0.5).double()
    packed = R.pack_sequence([ag.randn(4, 3).double(), ag.randn(2, 3).double()])
    out, _ = lstm(packed)
    assert type(out.data.grad_fn).__name__ == "RecurrentSequenceBackward0"
    ag.manual_seed(0)
    a = lstm(packed)[0].data.detach().numpy()
    monkeypatch.setattr(rnn_module, "FUSED", False)
    ag.manual_seed(0)
    b = lstm(packed)[0].data.detach().numpy()
    np.testing.assert_allclose(a, b, atol=1e-12)
    lstm.eval()
    first, second = (lstm(packed)[0].data.detach().numpy() for _ in range(2))
    np.testing.assert_array_equal(first, second)  # no dropout in eval mode


def _double_backward(model, lib, x):
    u = R if lib is ag else torch.nn.utils.rnn
    xt = lib.tensor(x, requires_grad=True)
    out, _ = model(u.pack_padded_sequence(xt, [1, 4, 3], enforce_sorted=False))
    params = list(model.parameters())
    grads = lib.autograd.grad((out.data * out.data).sum(), params + [xt], create_graph=True)
    second = lib.autograd.grad(sum((g * g).sum() for g in grads), params + [xt])
    return [g.detach().numpy() for g in grads + tuple(second)]


@pytest.mark.parametrize("name", ["lstm2bi", "gru_bi"])
def test_create_graph_double_backward_matches_torch(name):
    ours, theirs = _pair(MAKES[name])
    x = np.random.default_rng(5).standard_normal((4, 3, 3))
    _same(_double_backward(ours, ag, x), _double_backward(theirs, torch, x), 1e-9)


def test_packed_input_errors():
    lstm = nn.LSTM(3, 4)
    packed = R.pack_sequence([ag.randn(3, 3), ag.randn(2, 3)])
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(1, 2, 4\), got \[1, 3, 4\]"):
        lstm(packed, (ag.zeros(1, 3, 4), ag.zeros(1, 3, 4)))
    with pytest.raises(RuntimeError, match=r"input.size\(-1\) must be equal to input_size"):
        lstm(R.pack_sequence([ag.randn(3, 5)]))
    with pytest.raises(ValueError, match="Expected input to be 2D, got 3D"):
        lstm(R.PackedSequence(ag.randn(5, 1, 3), packed.batch_sizes))
    with pytest.raises(RuntimeError):  # torch: mat1 and mat2 must have the same dtype
        torch.nn.LSTM(3, 4)(torch.nn.utils.rnn.pack_sequence([torch.zeros(2, 3).double()]))
    with pytest.raises(RuntimeError, match="does not match weight dtype"):
        lstm(packed.double())


@pytest.mark.parametrize("name", ["lstm2bi", "gru_bi", "rnn_relu2", "lstm_proj2bi"])
def test_strict_cuda_matches_cpu(name, strict_cuda):
    cpu, dev = MAKES[name](nn), MAKES[name](nn)
    dev.load_state_dict(cpu.state_dict())
    dev.to("cuda")
    x = np.random.default_rng(6).standard_normal((5, 3, 3)).astype("float32")
    results = []
    for model, device in ((cpu, "cpu"), (dev, "cuda")):
        xt = ag.tensor(x, device=device, requires_grad=True)
        out, _ = model(R.pack_padded_sequence(xt, [2, 5, 3], enforce_sorted=False))
        (out.data * out.data).sum().backward()
        grads = [xt.grad] + [p.grad for p in model.parameters()]
        results.append([ag.backend.to_numpy(t.detach()._data) for t in [out.data, *grads]])
    for a, b in zip(*results):
        np.testing.assert_allclose(b, a, atol=1e-5)


NLP_PROGRAM = """
import torch
import torch.nn as nn
import torch.optim as optim


def collate(batch, pad_index):
    ids = nn.utils.rnn.pad_sequence(
        [item["ids"] for item in batch], padding_value=pad_index, batch_first=True
    )
    length = torch.stack([item["length"] for item in batch])
    label = torch.stack([item["label"] for item in batch])
    return {"ids": ids, "length": length, "label": label}


class Classifier(nn.Module):
    def __init__(self, vocab_size, embedding_dim, hidden_dim, output_dim, pad_index):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embedding_dim, padding_idx=pad_index)
        self.lstm = nn.LSTM(
            embedding_dim, hidden_dim, 2, bidirectional=True, dropout=0.0, batch_first=True
        )
        self.fc = nn.Linear(hidden_dim * 2, output_dim)

    def forward(self, ids, length):
        embedded = self.embedding(ids)
        packed = nn.utils.rnn.pack_padded_sequence(
            embedded, length, batch_first=True, enforce_sorted=False
        )
        packed_output, (hidden, cell) = self.lstm(packed)
        output, output_length = nn.utils.rnn.pad_packed_sequence(packed_output)
        hidden = torch.cat([hidden[-1], hidden[-2]], dim=-1)
        return self.fc(hidden) + output.mean(0).sum() * 0.01


def run(weights, sentences, labels):
    model = Classifier(20, 6, 5, 2, 0).double()
    model.load_state_dict({k: torch.tensor(v) for k, v in weights.items()})
    optimizer = optim.Adam(model.parameters(), lr=5e-3)
    criterion = nn.CrossEntropyLoss()
    batch = collate(
        [
            {"ids": torch.tensor(s), "length": torch.tensor(len(s)), "label": torch.tensor(y)}
            for s, y in zip(sentences, labels)
        ],
        0,
    )
    prediction = model(batch["ids"], batch["length"])
    loss = criterion(prediction, batch["label"])
    optimizer.zero_grad()
    loss.backward()
    grads = {n: p.grad.numpy().copy() for n, p in model.named_parameters()}
    optimizer.step()
    model.eval()
    with torch.no_grad():  # one sentence, as the tutorial's predict_sentiment
        single = torch.LongTensor(sentences[0]).unsqueeze(dim=0)
        probability = torch.softmax(model(single, torch.LongTensor([len(sentences[0])])), -1)
    return loss.item(), grads, probability.numpy()
"""


def _program(source):
    namespace = {}
    exec(compile(source, "<sentiment LSTM, as bentrevett's tutorial 2>", "exec"), namespace)
    return namespace


def test_padded_sequence_nlp_program_ported_by_renaming_the_import():
    """bentrevett/pytorch-sentiment-analysis's RNN tutorial pattern (collate with pad_sequence,
    pack unsorted batch-first, bidirectional LSTM, last layer's h_n of both directions, Adam,
    a one-sentence prediction) gives torch's loss, gradients and prediction after renaming the
    import."""
    theirs = _program(NLP_PROGRAM)
    ours = _program(NLP_PROGRAM.replace("torch", "autogradcli"))
    reference = theirs["Classifier"](20, 6, 5, 2, 0).double()
    weights = {k: v.detach().numpy().copy() for k, v in reference.state_dict().items()}
    rng = np.random.default_rng(7)
    sentences = [rng.integers(1, 20, n).tolist() for n in (3, 6, 1, 4)]  # unsorted lengths
    labels = [1, 0, 1, 1]
    loss_t, grads_t, prob_t = theirs["run"](weights, sentences, labels)
    loss_a, grads_a, prob_a = ours["run"](weights, sentences, labels)
    assert abs(loss_a - loss_t) < 1e-12
    assert grads_a.keys() == grads_t.keys()
    for name in grads_t:
        np.testing.assert_allclose(grads_a[name], grads_t[name], atol=1e-12, err_msg=name)
    np.testing.assert_allclose(prob_a, prob_t, atol=1e-10)
