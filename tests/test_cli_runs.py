"""agrad runs: the runs folder as a table and as JSON, newest first, broken folders listed,
through agrad in this process; values against each run's own summary.json."""

from __future__ import annotations

import json
import os
import re

from test_cli_helpers import TINY_CONFIG, agrad_in_process, write


def _summary(folder):
    with open(os.path.join(folder, "summary.json"), encoding="utf-8") as f:
        return json.load(f)


def test_runs_table_and_json_newest_first_with_broken_folders(tmp_path):
    runs = tmp_path / "runs"
    cfg = write(tmp_path / "tiny.yaml", TINY_CONFIG)
    for epochs in (1, 2):
        res = agrad_in_process(
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

    res = agrad_in_process("runs", str(runs), "--json")
    assert res.returncode == 0, res.stderr
    rows = json.loads(res.stdout)
    assert [r["name"] for r in rows] == ["r2", "r1", "broken-run"]
    s2 = _summary(r2)
    assert rows[0]["status"] == "completed" and rows[0]["epochs_completed"] == 2
    assert rows[0]["best_value"] == s2["best"]["value"]
    assert rows[0]["best_monitor"] == s2["best"]["monitor"] == "val_loss"
    assert rows[0]["wall_time_s"] == s2["wall_time_s"] and rows[1]["epochs_completed"] == 1
    assert rows[2]["status"] == "broken" and "summary.json" in rows[2]["error"]

    res = agrad_in_process("runs", str(runs))
    assert res.returncode == 0, res.stderr
    lines = [line for line in res.stdout.splitlines() if line.strip()]
    assert lines[0].split()[:4] == ["name", "status", "epochs", "best"]
    body = lines[2:5]
    assert [line.split()[0] for line in body] == ["r2", "r1", "broken-run"]
    assert f"val_loss {s2['best']['value']:.4g} (epoch {s2['best']['epoch']})" in body[0]
    assert body[2].split()[1] == "broken"
    assert lines[5].startswith("broken: broken-run: summary.json: Expecting property name")


def test_runs_on_a_missing_or_empty_folder(tmp_path):
    res = agrad_in_process("runs", str(tmp_path / "nope"))
    assert res.returncode == 2 and "no such runs folder" in res.stderr
    res = agrad_in_process("runs", str(tmp_path))
    assert res.returncode == 0 and "no runs in" in res.stdout


def _hand_made_run(runs, name: str, status: str = "running", lock: str | None = None):
    """A run folder as a run leaves it at epoch 3 of 12: summary.json saying ``status`` and,
    when given, a ``.lock`` holding ``lock``."""
    folder = runs / name
    (folder / "checkpoints").mkdir(parents=True)
    (folder / "config.yaml").write_text("name: x\n")
    summary = {"name": name, "status": status, "epochs": 12, "epochs_completed": 3}
    summary["started_at"] = "2026-01-01T00:00:00+00:00"
    (folder / "summary.json").write_text(json.dumps(summary))
    if lock is not None:
        (folder / ".lock").write_text(lock)
    return folder


def _dead_pid() -> int:
    """The pid of a process that has ended (and been reaped)."""
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_runs_tells_a_dead_run_from_a_live_one(tmp_path, capsys):
    """summary.json says running: the run is ``dead`` when its lock's pid is gone or its lock
    is missing, ``running`` while a live process holds the lock; the folders are only read."""
    from autogradcli.cli.runs_cmd import list_runs, run_runs
    from autogradcli.trainer import RunDir

    runs = tmp_path / "runs"
    pid = _dead_pid()
    gone = _hand_made_run(runs, "gone", lock=str(pid))
    _hand_made_run(runs, "nolock")
    live = RunDir(str(_hand_made_run(runs, "live")))
    live.lock()  # this process holds it, as a training process does
    _hand_made_run(runs, "done", status="completed")
    before = {p: p.read_bytes() for p in runs.rglob("*") if p.is_file()}
    try:
        rows = {r["name"]: r for r in list_runs(str(runs))}
        assert run_runs(str(runs), as_json=False) == 0
    finally:
        live.unlock()
    assert rows["gone"]["status"] == "dead"
    assert rows["gone"]["reason"] == f"process gone, pid {pid}"
    assert (rows["nolock"]["status"], rows["nolock"]["reason"]) == ("dead", "no lock")
    assert rows["live"]["status"] == "running" and "reason" not in rows["live"]
    assert rows["done"]["status"] == "completed"
    table = {line.split()[0]: line for line in capsys.readouterr().out.splitlines() if line.strip()}
    assert re.search(rf"  dead \(process gone, pid {pid}\) +3/12  ", table["gone"])
    assert re.search(r"  dead \(no lock\) +3/12  ", table["nolock"])
    assert re.search(r"  running +3/12  ", table["live"])
    assert (gone / ".lock").read_text() == str(pid)  # nothing changed, nothing removed
    assert {p: p.read_bytes() for p in runs.rglob("*") if p.is_file() and p.name != ".lock"} == {
        p: b for p, b in before.items() if p.name != ".lock"
    }


def test_a_lock_whose_pid_lives_but_holds_no_lock_is_dead(tmp_path):
    """A pid reused by another program (here: this test's own) without the run's lock."""
    from autogradcli.cli.runs_cmd import list_runs

    runs = tmp_path / "runs"
    _hand_made_run(runs, "reused", lock=str(os.getpid()))
    (row,) = list_runs(str(runs))
    assert (row["status"], row["reason"]) == ("dead", f"process gone, pid {os.getpid()}")
