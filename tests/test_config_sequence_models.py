"""Sequence models in a config's layer list (issue 18): RNN/LSTM/GRU pass one tensor on
(``output: sequence | last``), ``TransformerEncoderLayer`` takes ``causal: true``,
``PositionalEmbedding``; an LSTM and a GPT config build, match hand-written torch models with
identical weights, and train through ``agrad train`` with per-position loss, accuracy and
perplexity."""

from __future__ import annotations

import json
import math
import os
import shutil
import textwrap

import numpy as np
import pytest
from lazy_torch import torch
from test_cli_helpers import agrad

import autogradcli as ag
from autogradcli.config import ConfigError, build_experiment, load_config
from autogradcli.config import sequence_layers as S
from autogradcli.trainer.sequence_loss import compute_loss

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")
CONFIGS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "configs")
VOCAB = 12


def tokens_npz(path, n: int = 64, t: int = 16, seed: int = 0, per_sequence=False) -> None:
    """Sequences counting up mod VOCAB from a random start: each next token is predictable.
    ``y``: the next token at every position, or (``per_sequence``) after the last one only."""
    start = np.random.default_rng(seed).integers(0, VOCAB, (n, 1))
    ids = (start + np.arange(t + 1)).astype(np.int64) % VOCAB
    np.savez(path, x=ids[:, :-1], y=ids[:, -1] if per_sequence else ids[:, 1:])


def config_in(tmp_path, fixture: str, overrides=(), text: str | None = None, **data):
    """The fixture config (or ``text``) copied beside a fresh tokens.npz, loaded."""
    path = tmp_path / "c.yaml"
    if text is None:
        shutil.copy(os.path.join(FIXTURES, fixture), path)
    else:
        path.write_text(textwrap.dedent(text))
    tokens_npz(tmp_path / "tokens.npz", **data)
    return load_config(str(path), list(overrides))


def build_issues(config) -> list[str]:
    with pytest.raises(ConfigError) as info:
        build_experiment(config)
    return [str(i) for i in info.value.issues]


def np32(t) -> np.ndarray:
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def copy_weights(ours, theirs) -> None:
    """Torch's parameters into ours, by name (float32)."""
    state = {k: ag.tensor(v.detach().numpy().copy()) for k, v in theirs.state_dict().items()}
    ours.load_state_dict(state)


# --------------------------------------------------------------------- recurrent layers' output
RNN_CASES = [
    ("RNN", dict(num_layers=2)),
    ("GRU", dict(batch_first=True)),
    ("LSTM", dict(batch_first=True, num_layers=2)),
    ("LSTM", dict(batch_first=True, bidirectional=True, num_layers=2)),
    ("GRU", dict(bidirectional=True)),
    ("LSTM", dict(batch_first=True, bidirectional=True, proj_size=3)),
]


def final_states(kind: str, h_n, bidirectional: bool):
    """What PyTorch users pass on from h_n: the last layer's final hidden state, both
    directions concatenated when bidirectional."""
    h = h_n[0] if kind == "LSTM" else h_n
    return torch.cat([h[-2], h[-1]], dim=-1) if bidirectional else h[-1]


@pytest.mark.filterwarnings("ignore:LSTM with projections")
@pytest.mark.parametrize("kind, kwargs", RNN_CASES)
@pytest.mark.parametrize("unbatched", [False, True])
def test_recurrent_layer_passes_torch_output_or_final_states(kind, kwargs, unbatched):
    theirs = getattr(torch.nn, kind)(5, 4, **kwargs)
    seq = getattr(S, kind)(5, 4, **kwargs)
    last = getattr(S, kind)(5, 4, output="last", **kwargs)
    copy_weights(seq, theirs)
    copy_weights(last, theirs)
    rng = np.random.default_rng(1)
    shape = (7, 5) if unbatched else ((3, 7, 5) if kwargs.get("batch_first") else (7, 3, 5))
    x = rng.standard_normal(shape).astype(np.float32)
    out, h_n = theirs(torch.tensor(x))
    np.testing.assert_allclose(np32(seq(ag.tensor(x))), np32(out), rtol=1e-5, atol=1e-6)
    want = final_states(kind, h_n, kwargs.get("bidirectional", False))
    got = last(ag.tensor(x))
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(np32(got), np32(want), rtol=1e-5, atol=1e-6)


def test_recurrent_layer_keeps_state_dict_names_and_shows_its_output():
    ours, plain = S.LSTM(5, 4, output="last"), ag.nn.LSTM(5, 4)
    assert list(ours.state_dict()) == list(plain.state_dict())
    assert repr(ours) == "LSTM(5, 4, output='last')"
    assert repr(S.GRU(5, 4)) == repr(ag.nn.GRU(5, 4))  # the default adds nothing
    with pytest.raises(ValueError, match="output must be one of sequence, last, got 'all'"):
        S.RNN(5, 4, output="all")


LSTM_LIST = """
name: lstm
data: {dataset: npz, path: tokens.npz, val_split: 0.25}
model:
  - {type: Embedding, num_embeddings: 12, embedding_dim: 8}
  - {type: LSTM, input_size: auto, hidden_size: 6, batch_first: true, OPTIONS}
  - {type: Linear, in_features: auto, out_features: OUT}
loss: CrossEntropyLoss
optimizer: {type: Adam, lr: 0.01}
"""


@pytest.mark.parametrize(
    "options, out, shape, in_features",
    [
        ("output: sequence", 12, (8, 16, 12), 6),
        ("bidirectional: true", 12, (8, 16, 12), 12),
        ("output: last", 12, (8, 12), 6),
        ("output: last, bidirectional: true", 12, (8, 12), 12),
    ],
)
def test_lstm_in_a_layer_list_builds_with_auto_sizes(tmp_path, options, out, shape, in_features):
    """Before: 'cannot infer in_features from an input of shape [(8, 16, 6), [...]]'."""
    text = LSTM_LIST.replace("OPTIONS", options).replace("OUT", str(out))
    exp = build_experiment(config_in(tmp_path, "", text=text, per_sequence=len(shape) == 2))
    assert exp.model[2].in_features == in_features
    assert exp.output_shape == shape[1:]


def test_output_last_needs_class_per_sequence_targets(tmp_path):
    """output: last gives (N, C) scores, which per-position targets (N, T) cannot match."""
    text = LSTM_LIST.replace("OPTIONS", "output: last").replace("OUT", "12")
    problems = build_issues(config_in(tmp_path, "", text=text))
    assert len(problems) == 1 and "CrossEntropyLoss cannot compare" in problems[0]


@pytest.mark.parametrize(
    "options, where, message",
    [
        ("output: lats", "model.1.output", "expected 'sequence' or 'last', got 'lats' (str)"),
        ("output: 1", "model.1.output", "expected 'sequence' or 'last', got 1 (int)"),
        ("outptu: last", "model.1.outptu", "did you mean 'output'?"),
    ],
)
def test_bad_output_setting_is_located(tmp_path, options, where, message):
    path = tmp_path / "c.yaml"
    path.write_text(textwrap.dedent(LSTM_LIST.replace("OPTIONS", options).replace("OUT", "12")))
    with pytest.raises(ConfigError) as info:
        load_config(str(path))
    (issue,) = [str(i) for i in info.value.issues]
    assert "c.yaml:6:" in issue and where in issue and message in issue


# --------------------------------------------------------------------- causal attention layer
def test_causal_encoder_layer_matches_torch_with_the_causal_mask():
    kw = dict(dim_feedforward=16, dropout=0.0, batch_first=True, norm_first=True)
    theirs = torch.nn.TransformerEncoderLayer(8, 2, **kw)
    ours = S.TransformerEncoderLayer(8, 2, causal=True, **kw)
    copy_weights(ours, theirs)
    x = np.random.default_rng(2).standard_normal((3, 5, 8)).astype(np.float32)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(5)
    want = theirs(torch.tensor(x), src_mask=mask, is_causal=True)
    got = ours(ag.tensor(x))
    np.testing.assert_allclose(np32(got), np32(want), rtol=1e-5, atol=1e-5)
    # no position sees a later one: changing the last step leaves the others as they were
    y = x.copy()
    y[:, -1] += 1.0
    changed = np32(ours(ag.tensor(y)))
    np.testing.assert_allclose(changed[:, :-1], np32(got)[:, :-1], rtol=1e-6, atol=1e-6)
    assert not np.allclose(changed[:, -1], np32(got)[:, -1])


def test_non_causal_encoder_layer_is_torchs():
    kw = dict(dim_feedforward=16, dropout=0.0)
    theirs = torch.nn.TransformerEncoderLayer(8, 2, **kw)
    ours = S.TransformerEncoderLayer(8, 2, **kw)
    copy_weights(ours, theirs)
    x = np.random.default_rng(3).standard_normal((5, 3, 8)).astype(np.float32)
    want = theirs(torch.tensor(x))
    np.testing.assert_allclose(np32(ours(ag.tensor(x))), np32(want), rtol=1e-5, atol=1e-5)


# --------------------------------------------------------------------- position embedding
@pytest.mark.parametrize("length", [1, 4])
def test_positional_embedding_adds_the_first_rows(length):
    layer = S.PositionalEmbedding(4, 3)
    x = np.random.default_rng(4).standard_normal((2, length, 3)).astype(np.float32)
    want = x + layer.weight.detach().numpy()[:length]
    np.testing.assert_allclose(np32(layer(ag.tensor(x))), want, rtol=1e-6)
    assert repr(layer) == "PositionalEmbedding(4, 3)"


def test_positional_embedding_refuses_a_longer_sequence():
    with pytest.raises(ValueError, match="the input has 5 positions but there are only 4"):
        S.PositionalEmbedding(4, 3)(ag.zeros(2, 5, 3))


def test_positional_embedding_too_short_is_reported_at_its_layer(tmp_path):
    config = config_in(tmp_path, "seq_gpt.yaml", ["model.1.num_embeddings=15"])
    (problem,) = build_issues(config)
    assert "model.1" in problem and "the input has 16 positions but there are only 15" in problem


# --------------------------------------------------------------------- the GPT of a config
def torch_gpt(vocab=12, block=16, d=32, heads=4, ff=64, layers=2):
    """The GPT of seq_gpt.yaml written by hand in torch, as nanoGPT users write it."""

    class GPT(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = torch.nn.Embedding(vocab, d)
            self.pos = torch.nn.Parameter(torch.zeros(block, d))
            kw = dict(dim_feedforward=ff, dropout=0.0, batch_first=True, norm_first=True)
            self.blocks = torch.nn.ModuleList(
                torch.nn.TransformerEncoderLayer(d, heads, **kw) for _ in range(layers)
            )
            self.ln = torch.nn.LayerNorm(d)
            self.head = torch.nn.Linear(d, vocab)

        def forward(self, idx):
            t = idx.shape[1]
            x = self.tok(idx) + self.pos[:t]
            mask = torch.nn.Transformer.generate_square_subsequent_mask(t)
            for block in self.blocks:
                x = block(x, src_mask=mask, is_causal=True)
            return self.head(self.ln(x))

    return GPT()


def load_into_torch(theirs, ours) -> None:
    """Our config-built GPT's weights into the hand-written one (names mapped by layer)."""
    names = {"0": "tok", "1": "pos", "2": "blocks.0", "3": "blocks.1", "4": "ln", "5": "head"}
    state = {}
    for key, value in ours.state_dict().items():
        layer, _, rest = key.partition(".")
        name = names[layer] if layer == "1" else f"{names[layer]}.{rest}"
        state[name] = torch.tensor(value.numpy().copy())
    theirs.load_state_dict(state)


def test_config_gpt_matches_hand_written_torch_gpt(tmp_path):
    exp = build_experiment(config_in(tmp_path, "seq_gpt.yaml"))
    theirs = torch_gpt()
    load_into_torch(theirs, exp.model)
    x, y = next(iter(exp.train_loader))
    tx, ty = torch.tensor(x.numpy()), torch.tensor(y.numpy())
    ours_out = exp.model(x)
    theirs_out = theirs(tx)
    np.testing.assert_allclose(np32(ours_out), np32(theirs_out), rtol=1e-4, atol=1e-5)
    topt = torch.optim.AdamW(theirs.parameters(), lr=0.01)
    for _ in range(2):  # a step, then the loss after it
        exp.optimizer.zero_grad()
        loss = compute_loss(exp.loss_fn, exp.model(x), y)
        topt.zero_grad()
        want = torch.nn.functional.cross_entropy(theirs(tx).transpose(1, 2), ty)
        assert math.isclose(loss.item(), want.item(), rel_tol=1e-5)
        loss.backward()
        want.backward()
        exp.optimizer.step()
        topt.step()


def test_gpt_config_logs_perplexity_by_default_and_a_table_does_not(tmp_path):
    exp = build_experiment(config_in(tmp_path, "seq_gpt.yaml"))
    assert exp.metrics == ["accuracy", "perplexity"]
    digits = build_experiment(load_config(os.path.join(CONFIGS, "digits_mlp.yaml")))
    assert digits.metrics == ["accuracy"]


# --------------------------------------------------------------------- agrad train, end to end
@pytest.mark.parametrize("fixture", ["seq_lstm.yaml", "seq_gpt.yaml"])
def test_sequence_config_trains_through_agrad_train(tmp_path, capsys, fixture):
    shutil.copy(os.path.join(FIXTURES, fixture), tmp_path / "c.yaml")
    tokens_npz(tmp_path / "tokens.npz", n=96)
    runs = tmp_path / "runs"
    code, out, err = agrad(capsys, "train", str(tmp_path / "c.yaml"), "--set", f"output.dir={runs}")
    assert code == 0, err
    assert "val_perplexity" in out + err  # in the progress lines too
    (run,) = os.listdir(runs)
    with open(runs / run / "metrics.jsonl", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    first, last = rows[0], rows[-1]
    for row in rows:
        for key in ("train_acc", "val_acc", "train_perplexity", "val_perplexity"):
            assert key in row, (key, row)
    assert last["train_loss"] < 0.5 * first["train_loss"]
    assert last["val_loss"] < 0.5 * math.log(VOCAB)  # well below a uniform guess
    assert last["val_acc"] > 0.9


def test_too_few_class_scores_per_position_are_reported_at_the_head(tmp_path):
    """The class count of (N, T, C) scores is C (not T) for the label-range check."""
    config = config_in(tmp_path, "seq_lstm.yaml", ["model.2.out_features=11"])
    (problem,) = build_issues(config)
    assert "model.2" in problem
    assert "has label 11 but the model gives 11 class scores (labels 0..10)" in problem


def test_just_enough_class_scores_per_position_build(tmp_path):
    exp = build_experiment(config_in(tmp_path, "seq_lstm.yaml", ["model.2.out_features=12"]))
    assert exp.output_shape == (16, 12)


# --------------------------------------------------------------------- a tied head
def test_tied_gpt_head_shares_the_token_embedding_and_trains_as_torchs(tmp_path):
    config = config_in(tmp_path, "seq_gpt.yaml", ["model.0.name=tok", "model.5.tie=tok"])
    exp = build_experiment(config)
    assert exp.model.tok.weight is exp.model[5].weight
    names = [n for n, _ in exp.model.named_parameters()]
    assert "tok.weight" in names and "5.weight" not in names  # trained once
    theirs = torch_gpt()
    theirs.head.weight = theirs.tok.weight
    state = {k.replace("tok.", "0.", 1): v for k, v in exp.model.state_dict().items()}
    load_into_torch(theirs, _Named(state))
    assert theirs.head.weight is theirs.tok.weight
    x, y = next(iter(exp.train_loader))
    tx, ty = torch.tensor(x.numpy()), torch.tensor(y.numpy())
    topt = torch.optim.AdamW(theirs.parameters(), lr=0.01)
    for _ in range(2):
        exp.optimizer.zero_grad()
        loss = compute_loss(exp.loss_fn, exp.model(x), y)
        topt.zero_grad()
        want = torch.nn.functional.cross_entropy(theirs(tx).transpose(1, 2), ty)
        assert math.isclose(loss.item(), want.item(), rel_tol=1e-5)
        loss.backward()
        want.backward()
        exp.optimizer.step()
        topt.step()
    np.testing.assert_allclose(
        np32(exp.model.tok.weight), np32(theirs.tok.weight), rtol=1e-4, atol=1e-6
    )


class _Named:
    """A state dict standing in for a module in ``load_into_torch``."""

    def __init__(self, state):
        self.state = state

    def state_dict(self):
        return self.state


@pytest.mark.parametrize(
    "overrides, where, message",
    [
        (["model.5.tie=tk"], "model.5.tie", "unknown layer 'tk' (did you mean 'tok'?)"),
        (["model.0.tie=5"], "model.0.tie", "layer '5' is written after 'tok': tie to an earlier"),
        (["model.5.tie=5"], "model.5.tie", "layer '5' cannot share its own weight"),
    ],
)
def test_bad_tie_is_located(tmp_path, overrides, where, message):
    path = tmp_path / "c.yaml"
    shutil.copy(os.path.join(FIXTURES, "seq_gpt.yaml"), path)
    with pytest.raises(ConfigError) as info:
        load_config(str(path), ["model.0.name=tok", *overrides])
    (issue,) = [str(i) for i in info.value.issues]
    assert where in issue and message in issue


@pytest.mark.parametrize(
    "tie, message",
    [
        (
            "model.4.tie=1",
            "layer '1''s weight: it has a weight (16, 32) and LayerNorm has a weight (32,)",
        ),
        (
            "model.5.tie=1",
            "layer '1''s weight: it has a weight (16, 32) and Linear has a weight (12, 32)",
        ),
        ("model.5.tie=2", "it has no weight and Linear has a weight (12, 32)"),
    ],
)
def test_tie_needs_weights_of_one_shape(tmp_path, tie, message):
    (problem,) = build_issues(config_in(tmp_path, "seq_gpt.yaml", [tie]))
    assert tie.split("=")[0].removesuffix(".tie") in problem and message in problem


def test_a_block_model_ties_by_block_name(tmp_path):
    text = """
    name: tied-blocks
    data: {dataset: npz, path: tokens.npz, val_split: 0.25}
    model:
      blocks:
        tok: {type: Embedding, num_embeddings: 12, embedding_dim: 8}
        head: {type: Linear, in_features: auto, out_features: 12, tie: tok}
    loss: CrossEntropyLoss
    """
    exp = build_experiment(config_in(tmp_path, "", text=text))
    assert exp.model.head.weight is exp.model.tok.weight
    x, _ = next(iter(exp.train_loader))
    emb = exp.model.tok.weight.detach().numpy()
    want = emb[x.numpy()] @ emb.T + exp.model.head.bias.detach().numpy()
    np.testing.assert_allclose(np32(exp.model(x)), want, rtol=1e-5, atol=1e-6)


def test_sequence_layers_run_on_the_device_stand_in(strict_cuda):
    """The config's sequence layers keep to the array seam: the same outputs on the stand-in."""
    ag.manual_seed(0)
    model = ag.nn.Sequential(
        ag.nn.Embedding(12, 8),
        S.PositionalEmbedding(16, 8),
        S.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True, causal=True),
        S.LSTM(8, 6, batch_first=True, bidirectional=True, output="last"),
    )
    x = ag.tensor(np.random.default_rng(7).integers(0, 12, (2, 5)))
    want = np32(model(x))
    got = model.to("cuda")(x.to("cuda")).cpu()
    np.testing.assert_allclose(np32(got), want, rtol=1e-5, atol=1e-6)
