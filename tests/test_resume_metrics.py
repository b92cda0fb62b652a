"""A run stopped mid-epoch (as Ctrl-C stops it: at the next step boundary) and resumed writes
the same ``metrics.jsonl`` as the run that never stopped, in every field but the timings."""

from __future__ import annotations

import json
import os

import pytest

from autogradcli.trainer import resume, train_from_config

CONFIG = """\
name: lrs
seed: 1
data: {dataset: spirals, n_per_class: 16, classes: 2, val_split: 0.25}
model:
  - {type: Linear, in_features: auto, out_features: 8}
  - Tanh
  - {type: Linear, in_features: auto, out_features: 2}
loss: CrossEntropyLoss
optimizer: {type: SGD, lr: 0.1, momentum: 0.9}
scheduler: {type: StepLR, step_size: 2, gamma: 0.5, interval: step}
hooks:
  - LRLogger
  - GradNormLogger
  - {type: EarlyStopping, monitor: val_loss, patience: 50}
  - STOP
train: {epochs: 3, batch_size: 4, shuffle: true}
"""
STEPS_PER_EPOCH = 6  # 24 training samples / batch 4

STOP = """\
from autogradcli.trainer import Callback


class CtrlC(Callback):
    '''Do what Ctrl-C's handler does (``trainer.interrupt``) after global step ``at``.'''

    def __init__(self, at=-1):
        self.at = at

    def on_batch_end(self, trainer):
        if trainer.global_step == self.at:
            trainer.interrupt.requested = True
"""

TIME_FIELDS = ("time",)


def _metrics(run_dir: str) -> list[dict]:
    if not os.path.exists(os.path.join(run_dir, "metrics.jsonl")):  # no epoch finished yet
        return []
    with open(os.path.join(run_dir, "metrics.jsonl"), encoding="utf-8") as f:
        rows = [json.loads(line) for line in f.read().splitlines()]
    return [{k: v for k, v in r.items() if k not in TIME_FIELDS} for r in rows]


def _run(tmp_path, at: int):
    (tmp_path / "stop.py").write_text(STOP)
    cfg = tmp_path / f"c{at}.yaml"
    cfg.write_text(CONFIG.replace("STOP", f"{{type: stop.py:CtrlC, at: {at}}}"))
    return train_from_config(str(cfg), progress="none", runs_dir=str(tmp_path / "runs"))


@pytest.mark.parametrize("at", [1, 3, STEPS_PER_EPOCH + 4, 2 * STEPS_PER_EPOCH + 5])
def test_resumed_mid_epoch_metrics_equal_the_uninterrupted_runs(tmp_path, at):
    straight = _run(tmp_path, -1)
    assert straight.status == "completed"
    expected = _metrics(straight.run_dir)
    assert all("lr_min" in r and "lr_max" in r for r in expected)  # the lr changes each epoch

    stopped = _run(tmp_path, at)
    assert stopped.status == "interrupted", stopped.message
    assert len(_metrics(stopped.run_dir)) == at // STEPS_PER_EPOCH  # stopped mid-epoch
    done = resume(stopped.run_dir, progress="none")
    assert done.status == "completed", done.message
    got = _metrics(stopped.run_dir)
    assert [sorted(r) for r in got] == [sorted(r) for r in expected]
    for g, e in zip(got, expected):
        for key in e:
            assert g[key] == e[key], (g["epoch"], key, g[key], e[key])
