"""agrad sweep end to end, in this process: trials as run folders, the table sorted by the
metric, best.yaml reproducing the best trial, the plots, pruning, and a study refused for
another config. Values are checked against the trial folders' own metrics.jsonl."""

from __future__ import annotations

import json
import os

import pytest
from test_cli_helpers import REPO, agrad, write
from test_sweep_space import BASE


def _history(folder) -> list[dict]:
    with open(os.path.join(folder, "metrics.jsonl"), encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _summary(folder) -> dict:
    with open(os.path.join(folder, "summary.json"), encoding="utf-8") as f:
        return json.load(f)


def _sweep_dir(runs) -> str:
    (name,) = [n for n in os.listdir(runs) if "-sweep-" in n]
    return os.path.join(runs, name)


def test_sweep_table_best_yaml_plots_and_another_config_refused(tmp_path, capsys):
    pytest.importorskip("optuna")
    cfg = write(
        tmp_path / "s.yaml",
        BASE.replace("epochs: 1", "epochs: 2")
        + "sweep: {trials: 4, sampler: random, pruner: none}\n",
    )
    runs = tmp_path / "runs"
    code, out, err = agrad(
        capsys, "sweep", cfg, "--runs-dir", str(runs), "--param", "optimizer.lr=loguniform:1e-6,0.5"
    )
    assert code == 0, err
    sweep = _sweep_dir(runs)
    assert sorted(n for n in os.listdir(sweep) if not n.startswith(".")) == sorted(
        ["best.yaml", "plot-optimizer.lr.svg", "study.db", "sweep.json"]
        + [f"trial-{i:03d}" for i in range(4)]
    )
    best_of = {}
    for i in range(4):
        folder = os.path.join(sweep, f"trial-{i:03d}")
        assert _summary(folder)["status"] == "completed"
        best_of[f"trial-{i:03d}"] = min(r["val_loss"] for r in _history(folder))
    # the table: the trials sorted by val_loss, lowest first (minimize, from the metric)
    table = [row for row in map(str.split, out.splitlines()) if row and row[0].isdigit()]
    assert [row[-1] for row in table] == sorted(best_of, key=best_of.get)
    assert all(row[1] == "completed" for row in table)
    assert "minimize val_loss" in out
    best_run = min(best_of, key=best_of.get)
    # best.yaml is that trial's resolved config: training it again gives the same numbers
    code, _, err = agrad(
        capsys, "train", os.path.join(sweep, "best.yaml"), "--progress", "none",
        "--runs-dir", str(tmp_path / "again"),
    )  # fmt: skip
    assert code == 0, err
    (again,) = os.listdir(tmp_path / "again")
    assert _history(tmp_path / "again" / again)[-1]["val_loss"] == pytest.approx(
        _history(os.path.join(sweep, best_run))[-1]["val_loss"], rel=1e-6
    )
    with open(os.path.join(sweep, "plot-optimizer.lr.svg"), encoding="utf-8") as f:
        assert f.read().count("<circle") == 4
    # the study refuses a config that did not make it; nothing is run
    other = write(tmp_path / "o.yaml", BASE.replace("out_features: 8", "out_features: 4"))
    code, _, err = agrad(
        capsys, "sweep", other, "--resume", sweep, "--param", "optimizer.lr=loguniform:1e-6,0.5"
    )
    assert code == 2 and "was made by another config or search space" in err, err
    assert len([n for n in os.listdir(sweep) if n.startswith("trial-")]) == 4


def test_pruning_stops_a_trial_far_below_the_median_before_its_last_epoch(tmp_path, capsys):
    optuna = pytest.importorskip("optuna")
    cfg = write(
        tmp_path / "s.yaml",
        BASE.replace("epochs: 1", "epochs: 4")
        + "sweep:\n  sampler: grid\n  pruner: median\n  pruner_startup: 2\n  pruner_warmup: 1\n"
        "  params:\n    optimizer.lr: {choice: [0.05, 0.04, 1.0e-7]}\n",
    )
    runs = tmp_path / "runs"
    code, out, err = agrad(capsys, "sweep", cfg, "--runs-dir", str(runs))
    assert code == 0, err
    sweep = _sweep_dir(runs)
    states = [_summary(os.path.join(sweep, f"trial-{i:03d}"))["status"] for i in range(3)]
    assert states == ["completed", "completed", "pruned"]
    pruned = os.path.join(sweep, "trial-002")
    assert _summary(pruned)["epochs_completed"] == 2 < _summary(pruned)["epochs"] == 4
    assert len(_history(pruned)) == 2  # no third epoch ran
    assert "pruned at epoch 2: val_loss" in _summary(pruned)["message"]
    study = optuna.load_study(study_name="sweep", storage=f"sqlite:///{sweep}/study.db")
    assert [t.state.name for t in study.trials] == ["COMPLETE", "COMPLETE", "PRUNED"]
    # the study's values are the trial folders' best val_loss
    for t in study.trials[:2]:
        hist = _history(os.path.join(sweep, f"trial-{t.number:03d}"))
        assert t.value == pytest.approx(min(r["val_loss"] for r in hist))
    table = [row for row in map(str.split, out.splitlines()) if row and row[0].isdigit()]
    by_value = sorted(study.trials[:2], key=lambda t: t.value)
    assert [(int(row[0]), row[1]) for row in table] == [
        (by_value[0].number, "completed"),
        (by_value[1].number, "completed"),
        (2, "pruned"),
    ]


@pytest.mark.slow
def test_six_digits_trials_over_a_bad_lr_range_find_the_good_region(tmp_path, capsys):
    """The issue's sweep: lr from 1e-6 (learns nothing) to 10 (diverges); 6 trials (TPE, its
    first 3 random) reach val_acc >= 0.95 and the pruner stops hopeless trials early."""
    pytest.importorskip("optuna")
    runs = tmp_path / "runs"
    code, _out, err = agrad(
        capsys, "sweep", os.path.join(REPO, "configs", "digits_mlp.yaml"), "--runs-dir", str(runs),
        "--set", "sweep.metric=val_acc", "--set", "sweep.trials=6", "--set", "train.epochs=5",
        "--param", "optimizer.lr=loguniform:1e-6,10",
    )  # fmt: skip
    assert code == 0, err
    sweep = _sweep_dir(runs)
    best = max(
        max(r["val_acc"] for r in _history(os.path.join(sweep, n)))
        for n in os.listdir(sweep)
        if n.startswith("trial-")
    )
    assert best >= 0.95
    with open(os.path.join(sweep, "best.yaml"), encoding="utf-8") as f:
        head = f.readline()
    assert f"val_acc {best:.6g}" in head


INTERRUPT_ONCE = """
import os, signal
from autogradcli.trainer import Callback


class InterruptOnce(Callback):
    def __init__(self, marker: str = "") -> None:
        self.marker = marker

    def on_epoch_end(self, trainer) -> None:
        if not os.path.exists(self.marker):  # the first time only: as a person's Ctrl-C
            open(self.marker, "w").close()
            os.kill(os.getpid(), signal.SIGINT)
"""


def test_ctrl_c_stops_cleanly_and_resume_reruns_the_cut_trial_and_may_raise_the_count(
    tmp_path, capsys
):
    optuna = pytest.importorskip("optuna")
    write(tmp_path / "hooks.py", INTERRUPT_ONCE)
    marker = tmp_path / "interrupted"
    cfg = write(
        tmp_path / "s.yaml",
        BASE.replace("epochs: 1", "epochs: 2")
        + f"hooks: [{{type: hooks.py:InterruptOnce, marker: {marker}}}]\n"
        + "sweep: {trials: 2, sampler: random, pruner: none}\n",
    )
    runs = tmp_path / "runs"
    argv = ("sweep", cfg, "--runs-dir", str(runs), "--param", "optimizer.lr=loguniform:1e-3,0.1")
    code, out, err = agrad(capsys, *argv)
    assert code == 130, err
    sweep = _sweep_dir(runs)
    assert f"interrupted: continue with agrad sweep --resume {sweep}" in out
    assert _summary(os.path.join(sweep, "trial-000"))["status"] == "interrupted"
    assert not os.path.exists(os.path.join(sweep, "trial-001"))  # stopped: no new trial
    code, out, err = agrad(capsys, "sweep", "--resume", sweep, "--set", "sweep.trials=3")
    assert code == 0, err
    assert "trial 0 was interrupted: it runs again" in out
    study = optuna.load_study(study_name="sweep", storage=f"sqlite:///{sweep}/study.db")
    states = [t.state.name for t in study.trials]
    assert states == ["FAIL", "COMPLETE", "COMPLETE", "COMPLETE"]  # resumed to 3 trials
    assert study.trials[1].user_attrs["retry_of"] == 0
    assert study.trials[1].params == study.trials[0].params


def test_a_sweep_whose_every_trial_fails_exits_1_with_the_reason(tmp_path, capsys):
    pytest.importorskip("optuna")
    cfg = write(tmp_path / "s.yaml", BASE + "sweep: {trials: 1, pruner: none}\n")
    runs = tmp_path / "runs"
    code, out, _ = agrad(
        capsys, "sweep", cfg, "--runs-dir", str(runs), "--param", "optimizer.lr=choice:1e30"
    )
    assert code == 1
    sweep = _sweep_dir(runs)
    assert _summary(os.path.join(sweep, "trial-000"))["status"] == "failed"
    assert "trial 0: failed (non-finite loss" in out and "no trial completed: no best.yaml" in out
    assert not os.path.exists(os.path.join(sweep, "best.yaml"))
