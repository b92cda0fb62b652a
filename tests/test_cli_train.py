"""agrad itself and agrad train: help, version, exit codes, config errors, --print-config,
--dry-run, --set, a real run, non-TTY output."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import yaml
from test_cli_helpers import REPO, TINY_CONFIG, agrad, agrad_subprocess, write
from typer.testing import CliRunner


@pytest.fixture
def tiny(tmp_path):
    return write(tmp_path / "tiny.yaml", TINY_CONFIG)


def test_help_and_version_with_clirunner():
    from autogradcli._version import __version__
    from autogradcli.cli.app import app

    runner = CliRunner()
    res = runner.invoke(app, ["--help"])
    assert res.exit_code == 0
    for cmd in ("train", "gradcheck", "inspect"):
        assert cmd in res.output
    res = runner.invoke(app, ["--version"])
    assert res.exit_code == 0 and __version__ in res.output
    res = runner.invoke(app, ["train", "--help"])
    assert res.exit_code == 0
    for key in ("data", "model", "optimizer", "scheduler", "hooks", "Config schema"):
        assert key in res.output


def test_help_loads_nothing_heavy():
    """`agrad --help` loads the package and the CLI only: not the config loader, the trainer,
    the commands' modules, YAML, or an optional heavy dependency (checked by the modules it
    imports, not by timing, which a loaded machine makes meaningless)."""
    env = dict(os.environ, PYTHONPATH=REPO)
    probe = (
        "import sys; from autogradcli.cli import main; main(['--help']); "
        "print(sorted(m for m in sys.modules if m.startswith(('autogradcli.config', "
        "'autogradcli.trainer', 'autogradcli.cli.train_cmd', 'autogradcli.cli.gradcheck_cmd', "
        "'yaml', 'torch', 'mpi4py', 'cupy', 'tensorboardX'))))"
    )
    res = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True
    )
    assert res.stdout.strip().splitlines()[-1] == "[]"


def test_print_config_fills_defaults_and_applies_set(capsys, tiny):
    code, out, _ = agrad(capsys, "train", tiny, "--print-config", "--set", "train.epochs=7")
    assert code == 0
    data = yaml.safe_load(out)
    assert data["train"]["epochs"] == 7
    assert data["train"]["eval_every"] == 1  # a default filled in
    assert data["output"] == {"dir": "runs"}
    assert [h["type"] for h in data["hooks"]] == ["Checkpoint", "NonFiniteGuard"]


def test_set_overrides_list_items(capsys, tiny):
    code, out, _ = agrad(capsys, "train", tiny, "--print-config", "-s", "model.0.out_features=5")
    assert code == 0
    assert yaml.safe_load(out)["model"][0]["out_features"] == 5


def test_dry_run_prints_the_model_table(capsys, tiny):
    code, out, err = agrad(capsys, "train", tiny, "--dry-run")
    assert code == 0, err
    assert "Layer (type)" in out and "Output Shape" in out and "Param #" in out
    assert "0 (Linear)" in out and "[B, 8]" in out
    assert "Total params: 25" in out
    assert "backward ok" in out
    assert not os.path.exists(os.path.join(os.path.dirname(tiny), "runs"))


CONFIG_ERRORS = [
    # (yaml text, key path in the message, line, words)
    (TINY_CONFIG.replace("seed: 0", "sed: 0"), "sed", 2, "did you mean 'seed'"),
    (TINY_CONFIG.replace("epochs: 2", "epochs: -1"), "train.epochs", 13, "positive integer"),
    (TINY_CONFIG.replace("Tanh", "Tahn"), "model.1.type", 9, "did you mean 'Tanh'"),
    (TINY_CONFIG.replace("dataset: sine", "dataset: sin"), "data.dataset", 4, "sine"),
    (
        TINY_CONFIG.replace(
            "{type: Linear, in_features: auto, out_features: 1}",
            "{type: Linear, in_features: 3, out_features: 1}",
        ),
        "model.2",
        10,
        "shape",
    ),
    (TINY_CONFIG.replace("lr: 0.05", "lr: fast"), "optimizer.lr", 12, "a finite number >= 0"),
    (TINY_CONFIG.replace("type: SGD", "type: nowhere.py:Opt"), "optimizer.type", 12, "not found"),
]


@pytest.mark.parametrize("text, key, line, words", CONFIG_ERRORS, ids=[c[1] for c in CONFIG_ERRORS])
def test_config_errors_point_at_file_line_and_exit_2(capsys, tmp_path, text, key, line, words):
    path = write(tmp_path / "bad.yaml", text)
    code, out, err = agrad(capsys, "train", path, "--dry-run")
    assert code == 2, out + err
    issue = next(ln for ln in err.splitlines() if f"  {key}:" in ln)
    assert issue.strip().startswith(f"{path}:{line}:"), issue
    assert words in err
    assert "Traceback" not in out + err


def test_every_issue_is_reported(capsys, tmp_path):
    text = TINY_CONFIG.replace("seed: 0", "sed: 0").replace("epochs: 2", "epochs: 0")
    path = write(tmp_path / "bad.yaml", text)
    code, _, err = agrad(capsys, "train", path)
    assert code == 2
    assert "2 problems" in err and "  sed:" in err and "  train.epochs:" in err


def test_bad_set_and_yaml_syntax_and_missing_file(capsys, tmp_path, tiny):
    code, _, err = agrad(capsys, "train", tiny, "--set", "train.epochs", "--print-config")
    assert code == 2 and "--set #1" in err and "key.path=value" in err
    path = write(tmp_path / "broken.yaml", "name: x\nmodel: [Linear\n")
    code, _, err = agrad(capsys, "train", path)
    assert code == 2 and f"{path}:" in err and "Traceback" not in err
    code, _, err = agrad(capsys, "train", str(tmp_path / "nope.yaml"))
    assert code == 2 and "nope.yaml" in err and "Traceback" not in err


def test_debug_flag_shows_the_traceback(capsys, tmp_path):
    path = write(tmp_path / "bad.yaml", TINY_CONFIG.replace("seed: 0", "sed: 0"))
    code, _, err = agrad(capsys, "--debug", "train", path)
    assert code == 2 and "Traceback" in err and "ConfigError" in err


def test_usage_errors_exit_2(capsys, tiny):
    code, _, _ = agrad(capsys, "train", tiny, "--progress", "fancy")
    assert code == 2
    code, _, _ = agrad(capsys, "frobnicate")
    assert code == 2
    code, _, err = agrad(capsys, "train")
    assert code == 2 and "missing CONFIG" in err


@pytest.mark.slow
def test_train_runs_and_exits_with_the_run_code(capsys, tmp_path, tiny):
    runs = tmp_path / "myruns"
    code, out, err = agrad(capsys, "train", tiny, "--runs-dir", str(runs), "--progress", "none")
    assert code == 0, err
    (run,) = list(runs.iterdir())
    assert (run / "summary.json").exists()
    assert f"run completed: {run}" in out
    code, out, err = agrad(capsys, "train", "--resume", str(run), "--progress", "none")
    assert code == 0, err


def test_subprocess_config_error_plain_and_no_traceback(tmp_path):
    path = write(tmp_path / "bad.yaml", TINY_CONFIG.replace("seed: 0", "sed: 0"))
    res = agrad_subprocess("train", path)
    assert res.returncode == 2
    assert f"{path}:2:1  sed:" in res.stderr
    assert "Traceback" not in res.stderr
    assert "\x1b" not in res.stdout + res.stderr
    res = agrad_subprocess("--debug", "train", path)
    assert res.returncode == 2 and "Traceback" in res.stderr


def test_subprocess_dry_run_has_no_control_characters(tiny):
    res = agrad_subprocess("train", tiny, "--dry-run")
    assert res.returncode == 0, res.stderr
    assert "\x1b" not in res.stdout + res.stderr
    assert "Layer (type)" in res.stdout


def test_interrupt_exits_130(capsys, tiny, monkeypatch):
    import autogradcli.cli.train_cmd as train_cmd

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(train_cmd, "run_train", interrupted)
    code, _, err = agrad(capsys, "train", tiny)
    assert code == 130 and "interrupted" in err
