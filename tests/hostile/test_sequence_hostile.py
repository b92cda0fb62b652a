"""Hostile sequence-model configs (issue 18): a recurrent layer's output, a causal flag, a
position table shorter than the data, a tie to nothing, one class per sequence against
per-position targets, token ids beyond the vocabulary. Each is a real ``agrad train``
subprocess that must exit 2 at the layer's ``file:line:col``, with no traceback and no run
folder."""

from __future__ import annotations

import numpy as np
import pytest
from hostile_harness import assert_refused, no_run_folder, run_agrad, write

SEQ = """
name: seq
data: {dataset: npz, path: tokens.npz, val_split: 0.25}
model:
  - {type: Embedding, num_embeddings: 12, embedding_dim: 16, name: tok}
  - {type: PositionalEmbedding, num_embeddings: 16, embedding_dim: 16}
  - {type: LSTM, input_size: auto, hidden_size: 16, batch_first: true}
  - {type: TransformerEncoderLayer, d_model: 16, nhead: 2, batch_first: true, causal: true}
  - {type: Linear, in_features: auto, out_features: 12}
loss: CrossEntropyLoss
train: {epochs: 1, batch_size: 8}
"""

CASES = [
    (
        "output-typo",
        ("hidden_size: 16,", "hidden_size: 16, output: lst,"),
        ["c.yaml:6:", "model.2.output", "'sequence' or 'last'"],
    ),
    (
        "causal-string",
        ("causal: true", "causal: yes please"),
        ["c.yaml:7:", "model.3.causal", "true or false"],
    ),
    (
        "positions-short",
        ("num_embeddings: 16", "num_embeddings: 15"),
        ["c.yaml:5:", "model.1", "16 positions", "only 15"],
    ),
    (
        "tie-unknown",
        ("out_features: 12}", "out_features: 12, tie: tk}"),
        ["c.yaml:8:", "model.4.tie", "did you mean 'tok'?"],
    ),
    (
        "tie-shape",
        ("out_features: 12}", "out_features: 12, tie: 1}"),
        ["c.yaml:8:", "model.4.tie", "(16, 16)", "(12, 16)"],
    ),
    (
        "last-vs-positions",
        ("hidden_size: 16,", "hidden_size: 16, output: last,"),
        ["CrossEntropyLoss", "(8, 12)", "(8, 16)"],
    ),
    (
        "vocab-short",
        ("out_features: 12}", "out_features: 11}"),
        ["c.yaml:8:", "model.4", "label 11", "11 class scores"],
    ),
]


@pytest.mark.parametrize("change, words", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_sequence_config_refused_at_its_layer(tmp_path, change, words):
    ids = (np.random.default_rng(0).integers(0, 12, (32, 1)) + np.arange(17)) % 12
    np.savez(tmp_path / "tokens.npz", x=ids[:, :-1], y=ids[:, 1:])
    old, new = change
    assert old in SEQ
    write(str(tmp_path / "c.yaml"), SEQ.replace(old, new, 1))
    res = run_agrad("train", "c.yaml", cwd=str(tmp_path))
    assert_refused(res, *words)
    assert no_run_folder(str(tmp_path))
