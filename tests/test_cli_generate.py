"""``agrad generate``: the sampler (temperature, top-k, banned ids, cropping, seeds) against
hand-computed distributions, and the command on runs that are not language models."""

from __future__ import annotations

import json
import os
from collections import Counter

import numpy as np
import pytest
from test_cli_helpers import REPO, agrad

import autogradcli as ag
from autogradcli.cli.errors import UserError
from autogradcli.cli.generate_cmd import next_token, sample_tokens
from autogradcli.data.text.tokens import tokenize


class FixedLogits(ag.nn.Module):
    """Logits ``row`` at every position of every sequence; records the inputs it saw."""

    def __init__(self, row) -> None:
        super().__init__()
        self.row = np.asarray(row, dtype=np.float32)
        self.seen: list[list[int]] = []
        self.scale = ag.nn.Parameter(ag.ones(1))

    def forward(self, x):
        self.seen.append(x.numpy()[0].tolist())
        n, t = x.shape
        return ag.tensor(np.broadcast_to(self.row, (n, t, self.row.shape[0])).copy())


def _draws(logits, temperature, top_k, n=4000, seed=0):
    rng = np.random.default_rng(seed)
    row = np.asarray(logits, dtype=np.float64)
    return np.bincount([next_token(row, temperature, top_k, rng) for _ in range(n)], minlength=4)


def test_temperature_zero_takes_the_likeliest():
    rng = np.random.default_rng(0)
    assert next_token(np.array([0.1, 2.0, 1.9]), 0.0, 0, rng) == 1


def test_frequencies_follow_softmax_of_scaled_logits():
    logits = np.log([0.1, 0.2, 0.3, 0.4])
    for temperature in (1.0, 0.5):
        p = np.exp(logits / temperature)
        p /= p.sum()
        freq = _draws(logits, temperature, 0) / 4000
        assert np.abs(freq - p).max() < 0.03, (temperature, freq, p)


@pytest.mark.parametrize(
    ("k", "allowed"), [(1, {3}), (2, {2, 3}), (3, {1, 2, 3}), (4, {0, 1, 2, 3})]
)
def test_top_k_keeps_the_k_likeliest(k, allowed):
    counts = _draws(np.log([0.1, 0.2, 0.3, 0.4]), 1.0, k)
    assert set(np.flatnonzero(counts).tolist()) == allowed
    if k == 2:  # renormalised over the two kept: 0.3 / 0.7
        assert abs(counts[2] / 4000 - 3 / 7) < 0.03


def test_top_k_above_the_vocabulary_is_all_of_it():
    a = _draws(np.log([0.1, 0.2, 0.3, 0.4]), 1.0, 5)
    b = _draws(np.log([0.1, 0.2, 0.3, 0.4]), 1.0, 0)
    assert (a == b).all()


def test_sampling_repeats_with_a_seed_and_never_draws_banned_ids():
    model = FixedLogits([5.0, 0.0, 0.1, 0.2])  # id 0 (<unk>) would win if allowed
    a = sample_tokens(model, [1, 2], 50, block_size=8, temperature=1.0, top_k=0, seed=3, banned=[0])
    b = sample_tokens(model, [1, 2], 50, block_size=8, temperature=1.0, top_k=0, seed=3, banned=[0])
    c = sample_tokens(model, [1, 2], 50, block_size=8, temperature=1.0, top_k=0, seed=4, banned=[0])
    assert len(a) == 50 and a == b and a != c
    assert 0 not in a and set(a) <= {1, 2, 3}


def test_the_context_is_cropped_to_block_size():
    model = FixedLogits([0.0, 0.0, 9.0])
    out = sample_tokens(model, [1, 1, 1, 1, 1], 3, block_size=4, temperature=0.0, top_k=0)
    assert out == [2, 2, 2]
    assert model.seen == [[1, 1, 1, 1], [1, 1, 1, 2], [1, 1, 2, 2]]


def test_a_model_without_per_position_outputs_is_refused():
    class Pooled(ag.nn.Module):
        def forward(self, x):
            return ag.zeros(x.shape[0], 5)

    with pytest.raises(
        UserError, match=r"has shape \(1, 5\): agrad generate needs \(1, t, vocab\)"
    ):
        sample_tokens(Pooled(), [1], 2, block_size=4)


SHAKESPEARE = os.path.join(REPO, "configs", "data", "shakespeare.txt")

CHAR_MODEL = """
name: char-bigram
seed: 0
data: {{dataset: text, path: {path}, block_size: {T}, val_split: 0.1}}
model:
  - {{type: Embedding, num_embeddings: 80, embedding_dim: 48}}
  - {{type: Linear, in_features: 48, out_features: 80}}
loss: cross_entropy
optimizer: {{type: Adam, lr: 0.02}}
train: {{epochs: 2, batch_size: 128}}
"""


def _validation_targets(text: str, block_size: int, val_split: float, seed: int) -> str:
    """The characters the run scores on validation: its blocks of block_size + 1 characters
    drawn by the run's documented split (a seeded ``random_split`` of the block numbers), all
    but the first character of each block."""
    _, val = _split_blocks(text, block_size, val_split, seed)
    size = block_size + 1
    return "".join(text[r * size + 1 : (r + 1) * size] for r in val)


def _split_blocks(text: str, block_size: int, val_split: float, seed: int):
    """(training, validation) block numbers: a seeded ``random_split``, as the run splits."""
    from autogradcli.data import Generator, random_split

    n = len(text) // (block_size + 1)
    k = round(n * val_split)
    train, val = random_split(list(range(n)), [n - k, k], generator=Generator(seed))
    return list(train), list(val)


def _entropy(chars: str) -> float:
    """The unigram entropy (nats) of ``chars``: the loss of the best context-free guess."""
    counts = np.array(list(Counter(chars).values()), dtype=np.float64)
    p = counts / counts.sum()
    return float(-(p * np.log(p)).sum())


@pytest.mark.slow
def test_char_model_beats_the_unigram_entropy_and_generates(capsys, tmp_path):
    with open(SHAKESPEARE, encoding="utf-8") as fh:
        text = fh.read()
    config = tmp_path / "c.yaml"
    config.write_text(CHAR_MODEL.format(path=SHAKESPEARE, T=32))
    runs = str(tmp_path / "runs")
    code, out, err = agrad(capsys, "train", str(config), "--progress", "none", "--runs-dir", runs)
    assert code == 0, out + err
    (run,) = [str(p) for p in (tmp_path / "runs").iterdir()]
    with open(os.path.join(run, "metrics.jsonl"), encoding="utf-8") as fh:
        val_loss = json.loads(fh.read().splitlines()[-1])["val_loss"]
    targets = _validation_targets(text, 32, 0.1, seed=0)
    assert len(targets) == 32 * round(len(text) // 33 * 0.1)
    entropy = _entropy(targets)
    print(f"val_loss {val_loss:.4f}, unigram entropy of the validation text {entropy:.4f}")
    assert 3.0 < entropy < 3.6  # characters of English text: about 4.5 bits
    assert val_loss < 0.85 * entropy

    argv = ("generate", run, "--prompt", "ROMEO:", "--length", "150", "--seed", "0")
    code, first, err = agrad(capsys, *argv)
    assert code == 0, err
    assert len(first) == len("ROMEO:") + 150 + 1 and first.startswith("ROMEO:")
    assert first.endswith("\n")
    assert agrad(capsys, *argv)[1] == first
    other = agrad(capsys, *argv[:-1], "1")[1]
    assert len(other) == len(first) and other != first
    code, _, err = agrad(capsys, "generate", run, "--prompt", "Zoë", "--length", "5")
    assert code == 0 and "read as <unk>: 'ë'" in err


@pytest.mark.parametrize("name", ["char_lstm", "char_gpt"])
def test_shipped_char_configs_build_on_the_shipped_text(capsys, name):
    """The shipped configs build with `auto` sizes: the vocabulary is <unk> and the distinct
    characters of the training blocks."""
    with open(SHAKESPEARE, encoding="utf-8") as fh:
        text = fh.read()
    train, _ = _split_blocks(text, 32, 0.1, seed=0)
    vocab = 1 + len(set("".join(text[r * 33 : (r + 1) * 33] for r in train)))
    config = os.path.join(REPO, "configs", f"{name}.yaml")
    code, out, err = agrad(capsys, "train", config, "--dry-run")
    assert code == 0, out + err
    assert f"dry run: one batch (128, 32) -> (128, 32, {vocab}), loss" in out


WORD_MODEL = """
seed: 0
data: {dataset: text, path: t.txt, tokens: word, block_size: 4, val_split: 0.25}
model:
  - {type: Embedding, num_embeddings: auto, embedding_dim: 8}
  - {type: Linear, in_features: auto, out_features: auto}
loss: cross_entropy
train: {epochs: 1, batch_size: 8}
"""


def test_generate_word_tokens(capsys, tmp_path):
    (tmp_path / "t.txt").write_text("the cat sat on the mat, and the dog sat on the log.\n" * 8)
    (tmp_path / "c.yaml").write_text(WORD_MODEL)
    runs = str(tmp_path / "runs")
    code, out, err = agrad(capsys, "train", str(tmp_path / "c.yaml"), "--runs-dir", runs)
    assert code == 0, out + err
    (run,) = [str(p) for p in (tmp_path / "runs").iterdir()]
    code, out, err = agrad(capsys, "generate", run, "--prompt", "The cat", "--length", "12")
    assert code == 0, err
    assert out.startswith("The cat ") and "'The'" in err  # case kept: 'The' is not in the text
    pieces = tokenize(out[:-1], "word")  # the words rule: a newline is a token too
    assert pieces[:2] == ["The", "cat"] and len(pieces) == 2 + 12
    code, _, err = agrad(capsys, "generate", run, "--prompt", "   ")
    assert code == 2 and "has no word tokens" in err
    assert agrad(capsys, "generate", run, "--length", "1", "--temperature", "0")[0] == 0
    for flag, value in (("--length", "0"), ("--temperature", "-0.1"), ("--top-k", "-1")):
        code, _, err = agrad(capsys, "generate", run, flag, value)
        assert code == 2 and flag in err
