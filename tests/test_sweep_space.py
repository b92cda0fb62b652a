"""agrad sweep's search space: every problem (a bad path, an empty choice, a range whose low is
not below its high, a log range reaching 0, a value the config refuses) is found before any
trial runs, at its line:col (or --param #N), exit 2, and no sweep folder is made."""

from __future__ import annotations

import sys

import pytest
from test_cli_helpers import TINY_CONFIG, agrad, write

from autogradcli.config import ConfigError, load_config_text

BASE = TINY_CONFIG.replace("n: 64", "n: 32").replace("epochs: 2", "epochs: 1")


def _issues(sweep: str) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_config_text(BASE.lstrip() + sweep, "s.yaml")
    return [str(i) for i in info.value.issues]


def test_section_limits_just_inside_pass_and_just_outside_are_located():
    ok = BASE.lstrip() + (
        "sweep:\n  trials: 1\n  params:\n"
        "    a: {uniform: [0.0, 1.0e-9]}\n"  # low just below high
        "    b: {loguniform: [1.0e-300, 1.0]}\n"  # low just above 0
        "    c: {int: [1, 2], step: 1}\n"
        "    d: {choice: [1]}\n"
    )
    section = load_config_text(ok, "s.yaml").data["sweep"]
    assert section["params"]["b"] == {
        "type": "float", "low": 1e-300, "high": 1.0, "step": None, "log": True,
    }  # fmt: skip
    assert section["params"]["d"] == {"type": "choice", "values": [1]}
    assert section["mode"] == "auto" and section["sampler"] == "tpe"
    issues = _issues(
        "sweep:\n  trials: 0\n  params:\n"
        "    a: {uniform: [1.0, 1.0]}\n"
        "    b: {loguniform: [0.0, 1.0]}\n"
        "    c: {int: [1, 2], step: 0}\n"
        "    d: {choice: []}\n"
        "    e: {uniform: [0, 1], log: true, step: 0.5}\n"
        "    f: {normal: [0, 1]}\n"
    )
    assert issues == [
        "s.yaml:15:3  sweep.trials: expected a positive integer, got 0 (int)",
        "s.yaml:17:9  sweep.params.a.uniform: low must be below high, got [1.0, 1.0]",
        "s.yaml:18:9  sweep.params.b.loguniform: a log range needs low > 0, got [0.0, 1.0]",
        "s.yaml:19:22  sweep.params.c.step: expected a positive integer, got 0 (int)",
        "s.yaml:20:9  sweep.params.d.choice: expected a non-empty list of values, an empty choice",
        "s.yaml:21:37  sweep.params.e.step: step and log cannot be combined",
        "s.yaml:22:5  sweep.params.f: expected one of loguniform, uniform, int, choice "
        "({loguniform: [low, high]}, {uniform: [low, high]}, {int: [low, high]} or "
        "{choice: [...]}); found none",
    ]


def test_metric_mode_is_the_hooks_rule():
    issues = _issues("sweep:\n  metric: val_acc\n  mode: min\n")
    assert len(issues) == 1 and issues[0].startswith("s.yaml:16:3  sweep.mode: ")
    assert "contradicts val_acc" in issues[0]
    assert "sweep.metric" in _issues("sweep:\n  metric: val_accuracy\n")[0]
    unlogged = _issues("metrics: [mae]\nsweep:\n  metric: val_acc\n")
    assert unlogged == [
        "s.yaml:16:3  sweep.metric: val_acc is not logged: add accuracy to metrics (metrics: "
        "['mae'])"
    ]


def test_hostile_params_exit_2_located_before_any_trial(tmp_path, capsys):
    pytest.importorskip("optuna")
    cfg = write(
        tmp_path / "s.yaml",
        BASE
        + """
sweep:
  params:
    optimizer.lrr: {loguniform: [1.0e-4, 1.0e-1]}
    modle.0.out_features: {choice: [4, 8]}
    model.7.out_features: {choice: [4, 8]}
    model.0.out_features: {choice: [8, 0]}
""",
    )
    space = write(tmp_path / "space.yaml", "params:\n  optimizer.lr: {uniform: [0.5, 0.1]}\n")
    runs = tmp_path / "runs"
    code, _out, err = agrad(
        capsys, "sweep", cfg, "--runs-dir", str(runs), "--space", space,
        "--param", "optimizer.momentum=loguniform:-1,1", "--param", "train.epochs=choice:",
        "--param", "x=gauss:1,2",
    )  # fmt: skip
    assert code == 2, err
    lines = err.splitlines()
    assert lines[0] == "agrad: error: 8 problems in the config:"
    body = sorted(line.strip() for line in lines[1:])
    assert body == sorted(
        [
            f"{cfg}:17:5  sweep.params.optimizer.lrr: with optimizer.lrr=0.0001: SGD got an "
            "unexpected argument 'lrr' (did you mean 'lr'?)",
            f"{cfg}:18:5  sweep.params.modle.0.out_features: the config has no key 'modle' "
            "(did you mean 'model'?)",
            f"{cfg}:19:5  sweep.params.model.7.out_features: model is a list of 3 items: '7' "
            "is not an index of it",
            f"{cfg}:20:5  sweep.params.model.0.out_features: with model.0.out_features=0: "
            "expected a positive integer, got 0 (int)",
            f"{space}:2:18  params.optimizer.lr.uniform: low must be below high, got [0.5, 0.1]",
            "--param #1  optimizer.momentum.loguniform: a log range needs low > 0, got [-1, 1]",
            "--param #2  train.epochs.choice: expected a non-empty list of values, an empty choice",
            "--param #3  expected key.path=KIND:VALUES with KIND one of loguniform, uniform, "
            "int, choice (optimizer.lr=loguniform:1e-4,1e-1), got 'x=gauss:1,2'",
        ]
    )
    assert "Traceback" not in err and not runs.exists()  # nothing made, nothing ran


def test_grid_needs_discrete_values_and_nothing_to_search_is_an_error(tmp_path, capsys):
    pytest.importorskip("optuna")
    cfg = write(tmp_path / "s.yaml", BASE + "sweep: {sampler: grid}\n")
    code, _, err = agrad(capsys, "sweep", cfg, "--param", "optimizer.lr=uniform:0.01,0.1")
    assert code == 2 and "--param #1  sweep.params.optimizer.lr: sampler grid needs" in err
    code, _, err = agrad(capsys, "sweep", cfg)
    assert code == 2 and f"{cfg}:14:1  nothing to search" in err


def test_without_optuna_the_install_command_is_named_and_nothing_is_made(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.setitem(sys.modules, "optuna", None)  # import optuna raises ImportError
    cfg = write(tmp_path / "s.yaml", BASE + "sweep: {params: {optimizer.lr: {choice: [0.1]}}}\n")
    code, _, err = agrad(capsys, "sweep", cfg, "--runs-dir", str(tmp_path / "runs"))
    assert code == 2
    assert err == "agrad: error: agrad sweep needs Optuna: pip install 'autogradcli[sweep]'\n"
    assert not (tmp_path / "runs").exists()
