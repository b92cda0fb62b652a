"""agrad runs: the runs folder as a table and as JSON, newest first, broken folders listed,
through real agrad subprocesses; values against each run's own summary.json."""

from __future__ import annotations

import json
import os

from test_cli_helpers import TINY_CONFIG, agrad_subprocess, write


def _summary(folder):
    with open(os.path.join(folder, "summary.json"), encoding="utf-8") as f:
        return json.load(f)


def test_runs_table_and_json_newest_first_with_broken_folders(tmp_path):
    runs = tmp_path / "runs"
    cfg = write(tmp_path / "tiny.yaml", TINY_CONFIG)
    for epochs in (1, 2):
        res = agrad_subprocess(
            "train", cfg, "--progress", "none", "--runs-dir", str(runs),
            "--set", f"train.epochs={epochs}", "--set", f"name=r{epochs}",
        )  # fmt: skip
        assert res.returncode == 0, res.stderr
    (r1,) = [p for p in runs.iterdir() if p.name.startswith("r1-")]
    (r2,) = [p for p in runs.iterdir() if p.name.startswith("r2-")]
    # started_at has a 1 s resolution: make the order certain
    s1 = _summary(r1)
    s1["started_at"] = "2020-01-01T00:00:00+00:00"
    (r1 / "summary.json").write_text(json.dumps(s1))
    broken = runs / "broken-run"
    broken.mkdir()
    (broken / "config.yaml").write_text("name: x\n")
    (broken / "summary.json").write_text("{not json")
    (runs / "notes").mkdir()  # not a run: no config, summary or checkpoints

    res = agrad_subprocess("runs", str(runs), "--json")
    assert res.returncode == 0, res.stderr
    rows = json.loads(res.stdout)
    assert [r["name"] for r in rows] == ["r2", "r1", "broken-run"]
    s2 = _summary(r2)
    assert rows[0]["status"] == "completed" and rows[0]["epochs_completed"] == 2
    assert rows[0]["best_value"] == s2["best"]["value"]
    assert rows[0]["best_monitor"] == s2["best"]["monitor"] == "val_loss"
    assert rows[0]["wall_time_s"] == s2["wall_time_s"] and rows[1]["epochs_completed"] == 1
    assert rows[2]["status"] == "broken" and "summary.json" in rows[2]["error"]

    res = agrad_subprocess("runs", str(runs))
    assert res.returncode == 0, res.stderr
    lines = [line for line in res.stdout.splitlines() if line.strip()]
    assert lines[0].split()[:4] == ["name", "status", "epochs", "best"]
    body = lines[2:5]
    assert [line.split()[0] for line in body] == ["r2", "r1", "broken-run"]
    assert f"val_loss {s2['best']['value']:.4g} (epoch {s2['best']['epoch']})" in body[0]
    assert body[2].split()[1] == "broken"
    assert lines[5].startswith("broken: broken-run: summary.json: Expecting property name")


def test_runs_on_a_missing_or_empty_folder(tmp_path):
    res = agrad_subprocess("runs", str(tmp_path / "nope"))
    assert res.returncode == 2 and "no such runs folder" in res.stderr
    res = agrad_subprocess("runs", str(tmp_path))
    assert res.returncode == 0 and "no runs in" in res.stdout
