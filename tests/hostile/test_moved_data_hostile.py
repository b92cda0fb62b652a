"""A run whose training data moved away (or was replaced by garbage) after training: eval
--data, predict and inspect rebuild the run from its config and data_state.json and still
work; what does need the file (the test split, a resume) is a located exit 2; a damaged
data_state.json is named."""

from __future__ import annotations

import glob
import json
import os

import numpy as np
from hostile_harness import assert_refused, run_agrad, write

CONFIG = """
name: moved
seed: 1
data: {dataset: csv, path: data/train.csv, target_column: label, test_split: 0.25}
model:
  - {type: Linear, in_features: auto, out_features: 2}
optimizer: {type: Adam, lr: 0.05}
train: {epochs: 1, batch_size: 16}
"""


def _csv(path: str, n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3))
    y = (x[:, 0] > 0).astype(int)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("a,label,b,c\n")
        for row, lab in zip(x, y):
            fh.write(f"{row[0]:.6f},{lab},{row[1]:.6f},{row[2]:.6f}\n")


def test_a_run_whose_training_data_moved(tmp_path):
    cwd = str(tmp_path)
    os.mkdir(tmp_path / "data")
    _csv(str(tmp_path / "data" / "train.csv"), 64, 0)
    _csv(str(tmp_path / "new.csv"), 10, 5)
    write(str(tmp_path / "c.yaml"), CONFIG)
    res = run_agrad("train", "c.yaml", "--progress", "none", cwd=cwd)
    assert res.code == 0, res.text
    (run,) = glob.glob(str(tmp_path / "runs" / "moved-*"))
    os.rename(tmp_path / "data", tmp_path / "elsewhere")

    res = run_agrad("eval", run, "--data", "new.csv", "--json", cwd=cwd)
    assert res.code == 0, res.text
    assert '"samples": 10' in res.out
    res = run_agrad("predict", run, "--input", "new.csv", "--output", "p.csv", cwd=cwd)
    assert res.code == 0, res.text
    assert len((tmp_path / "p.csv").read_text().splitlines()) == 11
    res = run_agrad("inspect", run, cwd=cwd)
    assert res.code == 0, res.text

    # the test split and a resume need the rows themselves: located, exit 2
    assert_refused(run_agrad("eval", run, cwd=cwd), "data.path", "train.csv")
    res = run_agrad("train", "--resume", run, "--set", "train.epochs=2", cwd=cwd)
    assert_refused(res, "data.path", "train.csv")

    # garbage where the training file was: the same located refusal, nothing changed
    os.mkdir(tmp_path / "data")
    write(str(tmp_path / "data" / "train.csv"), b"\x00\xff garbage\n")
    before = sorted(os.listdir(run))
    assert_refused(run_agrad("eval", run, cwd=cwd), "data.path", "train.csv")
    assert sorted(os.listdir(run)) == before

    # a damaged data_state.json is named, never a traceback; one claiming a 10^18-number
    # build batch is refused before allocating it
    state = os.path.join(run, "data_state.json")
    with open(state, encoding="utf-8") as fh:
        good = json.load(fh)
    huge = {
        **good,
        "sample": {**good["sample"], "x": {"shape": [10**9, 10**9], "dtype": "float32"}},
    }
    cases = [
        ("[1, 2", "data_state.json"),
        (json.dumps(huge), "sample.x.shape [1000000000, 1000000000] is too large"),
        (json.dumps({**good, "sample": {"x": 1, "y": 2}}), "sample.x.shape must be"),
    ]
    for text, words in cases:
        write(state, text)
        res = run_agrad("predict", run, "--input", "new.csv", "--output", "q.csv", cwd=cwd)
        assert_refused(res, "data_state.json", words)
        assert not os.path.exists(tmp_path / "q.csv")
