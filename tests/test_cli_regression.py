"""Regression the obvious way: targets (N,) against a model output (N, 1) are refused at
config time with the fix; with `- Squeeze` the run trains, and its logged MAE and `agrad
predict`'s values equal a forward pass of the loaded model computed here."""

from __future__ import annotations

import glob
import json
import os

import numpy as np
import pytest
from test_cli_helpers import agrad_in_process, write

CONFIG = """
name: reg
seed: 1
data: {{dataset: npz, path: reg.npz, val_split: 0.25}}
model:
  - {{type: Linear, in_features: auto, out_features: 1}}
{extra}
loss: mse
optimizer: {{type: SGD, lr: 0.1}}
train: {{epochs: 3, batch_size: 8}}
"""


def _data(tmp_path, y_shape):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 3)).astype(np.float32)
    y = (x @ np.array([1.0, -2.0, 0.5], np.float32) + 0.3).astype(np.float32)
    np.savez(tmp_path / "reg.npz", x=x, y=y.reshape(y_shape))
    return x, y


def test_targets_n_against_output_n1_are_refused_with_the_fix(tmp_path):
    _data(tmp_path, (40,))
    cfg = write(tmp_path / "reg.yaml", CONFIG.format(extra=""))
    res = agrad_in_process("train", cfg, "--progress", "none", "--runs-dir", str(tmp_path / "r"))
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert (
        "reg.yaml:7:1  loss: MSELoss compares the model's output (8, 1) with the targets (8,) "
        "element by element; they would broadcast to (8, 8) and train on the wrong loss: add "
        "`- Squeeze` (removes the last dim) at the end of the model, or give targets of shape "
        "(8, 1)"
    ) in res.stderr
    assert not os.path.exists(tmp_path / "r")
    # targets (N, 1, 1) against (N, 1): the Unsqueeze fix
    _data(tmp_path, (40, 1, 1))
    res = agrad_in_process("train", cfg, "--progress", "none", "--runs-dir", str(tmp_path / "r"))
    assert res.returncode == 2 and "add `- Unsqueeze`" in res.stderr


@pytest.mark.parametrize("y_shape, extra", [((40,), "  - Squeeze"), ((40, 1), "")])
def test_squeezed_regression_trains_and_predicts_a_forward_pass(tmp_path, y_shape, extra):
    import autogradcli
    from autogradcli import data as D

    x, y = _data(tmp_path, y_shape)
    cfg = write(tmp_path / "reg.yaml", CONFIG.format(extra=extra))
    res = agrad_in_process("train", cfg, "--progress", "none", "--runs-dir", str(tmp_path / "r"))
    assert res.returncode == 0, res.stderr
    (run,) = glob.glob(str(tmp_path / "r" / "reg-*"))
    with open(os.path.join(run, "metrics.jsonl"), encoding="utf-8") as f:
        last = [json.loads(line) for line in f][-1]
    _, val = D.random_split(list(range(40)), [30, 10], generator=D.Generator(1))
    idx = np.array(list(val.indices))
    model = autogradcli.load_run(run, checkpoint="last")
    pred = model(autogradcli.tensor(x)).detach().numpy().reshape(-1)
    assert last["val_mae"] == pytest.approx(float(np.abs(pred[idx] - y[idx]).mean()), rel=1e-5)
    out = tmp_path / "pred.npz"
    np.savez(tmp_path / "new.npz", x=x[:6])
    res = agrad_in_process(
        "predict", run, "--input", str(tmp_path / "new.npz"), "--output", str(out),
        "--checkpoint", "last",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    got = np.load(out)
    assert set(got.files) == {"pred"}
    np.testing.assert_allclose(got["pred"].reshape(-1), pred[:6], rtol=1e-6)


def test_squeeze_and_unsqueeze_layers():
    import autogradcli as ag

    x = ag.randn(4, 1)
    assert ag.nn.Squeeze()(x).shape == (4,)
    assert ag.nn.Squeeze(0)(x).shape == (4, 1)  # size 4: unchanged, as Tensor.squeeze(0)
    assert ag.nn.Unsqueeze(1)(ag.randn(4)).shape == (4, 1)
    assert repr(ag.nn.Squeeze(-1)) == "Squeeze(dim=-1)"
    assert repr(ag.nn.Unsqueeze(0)) == "Unsqueeze(dim=0)"
    x.requires_grad_(True)
    ag.nn.Squeeze()(x).sum().backward()
    assert x.grad.shape == (4, 1)
