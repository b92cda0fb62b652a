"""agrad sweep across processes: a sweep killed part-way resumes to its trial count without
running a finished trial again (the one cut off is run again), and --jobs 2 runs the same grid
trials as --jobs 1. Real subprocesses: what is under test is the process boundary."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
import yaml
from test_cli_helpers import REPO, agrad, write
from test_sweep_runs import _summary, _sweep_dir
from test_sweep_space import BASE


def _trials(sweep) -> dict[str, dict]:
    out = {}
    for name in sorted(os.listdir(sweep)):
        if name.startswith("trial-") and os.path.isfile(os.path.join(sweep, name, "summary.json")):
            out[name] = _summary(os.path.join(sweep, name))
    return out


def test_killed_sweep_resumes_to_its_count_without_rerunning_finished_trials(tmp_path, capsys):
    optuna = pytest.importorskip("optuna")
    cfg = write(
        tmp_path / "s.yaml",
        BASE.replace("epochs: 1", "epochs: 3")
        + "sweep: {trials: 6, sampler: random, pruner: none}\n",
    )
    runs = tmp_path / "runs"
    env = dict(os.environ, PYTHONPATH=REPO)
    cmd = [sys.executable, "-m", "autogradcli.cli", "sweep", cfg, "--runs-dir", str(runs)]
    cmd += ["--param", "optimizer.lr=loguniform:1e-3,0.1"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 60
    try:
        while time.time() < deadline:
            # the sweep folder appears only once it is made (staged, then renamed): poll for it
            names = [n for n in os.listdir(runs) if n[0] != "."] if runs.exists() else []
            done = names and _completed(_trials(os.path.join(runs, names[0])))
            if done and len(done) >= 3:
                break
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    sweep = _sweep_dir(runs)
    before = {k: v["started_at"] for k, v in _trials(sweep).items() if v["status"] == "completed"}
    assert 3 <= len(before) < 6, before
    code, out, err = agrad(capsys, "sweep", "--resume", sweep)
    assert code == 0, err
    after = _trials(sweep)
    assert len(_completed(after)) == 6
    for name, started in before.items():  # not run again
        assert after[name]["started_at"] == started and after[name]["status"] == "completed"
    study = optuna.load_study(study_name="sweep", storage=f"sqlite:///{sweep}/study.db")
    complete = [t for t in study.trials if t.state.name == "COMPLETE"]
    assert len(complete) == 6
    cut = [t for t in study.trials if t.state.name == "FAIL"]
    assert all(t.user_attrs.get("interrupted") for t in cut)  # killed mid-trial ...
    retried = {t.user_attrs.get("retry_of"): t for t in study.trials if "retry_of" in t.user_attrs}
    assert set(retried) == {t.number for t in cut}  # ... and run again with its parameters
    for t in cut:
        if t.params:
            assert (
                retried[t.number].params == t.params and retried[t.number].state.name == "COMPLETE"
            )
    for line in out.splitlines():
        if line.startswith("trial ") and "was interrupted" in line:
            assert int(line.split()[1]) in {t.number for t in cut}


def _completed(trials: dict[str, dict]) -> list[str]:
    return [k for k, v in trials.items() if v["status"] == "completed"]


def test_jobs_2_runs_the_same_grid_trials_as_jobs_1(tmp_path, capsys):
    pytest.importorskip("optuna")
    cfg = write(tmp_path / "s.yaml", BASE + "sweep: {sampler: random, trials: 9}\n")
    space = write(  # a --space file replaces the config's sampler and gives the params
        tmp_path / "space.yaml",
        "sampler: grid\npruner: none\nparams:\n"
        "  optimizer.lr: {choice: [0.01, 0.05]}\n  model.0.out_features: {int: [4, 8], step: 4}\n",
    )
    found = []
    for jobs in ("1", "2"):
        runs = tmp_path / f"runs{jobs}"
        code, _out, err = agrad(
            capsys, "sweep", cfg, "--space", space, "--runs-dir", str(runs), "--jobs", jobs
        )
        assert code == 0, err
        sweep = _sweep_dir(runs)
        trials = _trials(sweep)
        assert len(trials) == 4 and all(v["status"] == "completed" for v in trials.values())
        with open(os.path.join(sweep, "sweep.json"), encoding="utf-8") as f:
            assert json.load(f)["params"] == []
        points = set()
        for name in trials:
            with open(os.path.join(sweep, name, "config.resolved.yaml"), encoding="utf-8") as f:
                data = yaml.safe_load(f)
            points.add((data["optimizer"]["lr"], data["model"][0]["out_features"]))
        found.append(points)
    assert found[0] == found[1] == {(0.01, 4), (0.01, 8), (0.05, 4), (0.05, 8)}
