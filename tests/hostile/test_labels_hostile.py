"""agrad train on class labels beyond the model's outputs: a config mistake, refused before
the run folder is made (exit 2 at the output layer's line), never a failed run (exit 1)."""

from __future__ import annotations

import os

import numpy as np
from hostile_harness import assert_refused, no_run_folder, run_agrad, write

CONFIG = """
name: labels
data:
  dataset: npz
  path: digits.npz
  val_split: 0.25
model:
  - {type: Linear, in_features: auto, out_features: 16}
  - ReLU
  - {type: Linear, in_features: auto, out_features: OUTPUTS}
loss: LOSS
train: {epochs: 1, batch_size: 16}
"""


def _setup(tmp_path, outputs: int, loss: str = "cross_entropy") -> str:
    x = np.random.default_rng(0).standard_normal((40, 4)).astype(np.float32)
    y = (np.arange(40) % 10).astype(np.int64)  # labels 0..9: ten classes
    np.savez(os.path.join(tmp_path, "digits.npz"), x=x, y=y)
    text = CONFIG.replace("OUTPUTS", str(outputs)).replace("LOSS", loss)
    return write(os.path.join(tmp_path, "c.yaml"), text)


class TestLabelsBeyondOutputs:
    """Nine outputs, label 9: exit 2 at the last Linear's line:col, no traceback, no run."""

    def test_cross_entropy(self, tmp_path):
        _setup(tmp_path, outputs=9)
        res = run_agrad("train", "c.yaml", cwd=str(tmp_path))
        assert_refused(res, "c.yaml:9:5", "has label 9 but the model gives 9 class scores")
        assert no_run_folder(str(tmp_path))

    def test_nll(self, tmp_path):
        _setup(tmp_path, outputs=9, loss="nll")
        res = run_agrad("train", "c.yaml", cwd=str(tmp_path))
        assert_refused(res, "c.yaml:9:5", "NLLLoss needs every label in that range")
        assert no_run_folder(str(tmp_path))

    def test_ten_outputs_train(self, tmp_path):
        """Just inside the limit: the same data trains with ten outputs."""
        _setup(tmp_path, outputs=10)
        res = run_agrad("train", "c.yaml", "--progress", "none", cwd=str(tmp_path))
        assert res.code == 0, res.text
        assert not no_run_folder(str(tmp_path))
