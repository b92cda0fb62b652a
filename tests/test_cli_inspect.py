"""agrad inspect on a config and on a run folder; --json, --depth."""

from __future__ import annotations

import json

import pytest
from test_cli_helpers import FUNCS, FUNCTION_CONFIG, TINY_CONFIG, agrad, agrad_subprocess, write


def test_inspect_config_table(capsys, tmp_path):
    cfg = write(tmp_path / "tiny.yaml", TINY_CONFIG)
    code, out, err = agrad(capsys, "inspect", cfg)
    assert code == 0, err
    for words in ("Layer (type)", "Output Shape", "Param #", "Trainable", "├─0 (Linear)"):
        assert words in out
    assert "[B, 8]" in out and "[B, 1]" in out
    assert "Total params: 25" in out and "Trainable params: 25" in out
    assert "MACs per sample: 16" in out
    assert "Activations saved for backward" in out and "measured" in out


def test_inspect_json_and_depth(capsys, tmp_path):
    cfg = write(tmp_path / "tiny.yaml", TINY_CONFIG)
    code, out, _ = agrad(capsys, "inspect", cfg, "--json")
    assert code == 0
    doc = json.loads(out)
    s = doc["summary"]
    assert s["total_params"] == 25 and s["macs_per_sample"] == 16
    assert [r["name"] for r in s["rows"]] == ["", "0", "1", "2"]
    assert s["rows"][1]["output_shape"] == ["B", 8]
    code, out, _ = agrad(capsys, "inspect", cfg, "--json", "--depth", "0")
    rows = json.loads(out)["summary"]["rows"]
    assert len(rows) == 1 and rows[0]["params"] == 25


def test_inspect_marks_function_layers(capsys, tmp_path):
    write(tmp_path / "funcs.py", FUNCS)
    cfg = write(tmp_path / "f.yaml", FUNCTION_CONFIG.format(name="Linear"))
    code, out, err = agrad(capsys, "inspect", cfg)
    assert code == 0, err
    assert "0 (Linear [Function])" in out
    code, out, _ = agrad(capsys, "inspect", cfg, "--json")
    rows = json.loads(out)["summary"]["rows"]
    assert rows[1]["is_function"] is True and rows[1]["params"] == 8


def test_inspect_errors_exit_2(capsys, tmp_path):
    code, _, err = agrad(capsys, "inspect", str(tmp_path / "nothing"))
    assert code == 2 and "no such file" in err
    code, _, err = agrad(capsys, "inspect", str(tmp_path))
    assert code == 2 and "not a run folder" in err
    bad = write(tmp_path / "bad.yaml", TINY_CONFIG.replace("seed: 0", "sed: 0"))
    code, _, err = agrad(capsys, "inspect", bad)
    assert code == 2 and f"{bad}:2:1" in err and "Traceback" not in err


@pytest.mark.slow
def test_inspect_run_folder(capsys, tmp_path):
    pytest.importorskip("autogradcli.trainer")
    from autogradcli.trainer import train_from_config

    cfg = write(tmp_path / "tiny.yaml", TINY_CONFIG)
    result = train_from_config(cfg, progress="none", runs_dir=str(tmp_path / "runs"))
    assert result.status == "completed"
    code, out, err = agrad(capsys, "inspect", str(result.run_dir))
    assert code == 0, err
    assert "status: completed" in out
    assert "best (epoch" in out and "val_loss" in out
    assert "Total params: 25" in out
    code, out, _ = agrad(capsys, "inspect", str(result.run_dir), "--json")
    doc = json.loads(out)
    assert doc["run"]["status"] == "completed"
    assert doc["summary"]["total_params"] == 25
    res = agrad_subprocess("inspect", str(result.run_dir))
    assert res.returncode == 0 and "\x1b" not in res.stdout
