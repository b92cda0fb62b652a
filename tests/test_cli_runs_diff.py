"""agrad runs over hand-made run folders (their summary.json and config.resolved.yaml, as a run
writes them): the differing settings as columns, --sort, --filter, sweep trials grouped, and
--diff; every value checked against what the folders hold."""

from __future__ import annotations

import json

import pytest
import yaml
from test_cli_helpers import agrad


def _run(folder, *, lr, hidden, val_acc, status="completed", started="2026-01-01T00:00:00"):
    folder.mkdir(parents=True)
    config = {
        "name": folder.name,
        "seed": 0,
        "model": [{"type": "Linear", "out_features": hidden}],
        "optimizer": {"type": "Adam", "lr": lr},
        "output": {"dir": str(folder.parent)},
    }
    (folder / "config.resolved.yaml").write_text(yaml.safe_dump(config))
    metrics = {"epoch": 2, "val_loss": 1.0 - val_acc, "val_acc": val_acc}
    summary = {
        "name": folder.name, "status": status, "epochs": 2, "epochs_completed": 2,
        "best": {"epoch": 2, "monitor": "val_loss", "value": 1.0 - val_acc, "metrics": metrics},
        "wall_time_s": 1.5, "started_at": started,
    }  # fmt: skip
    (folder / "summary.json").write_text(json.dumps(summary))


@pytest.fixture
def runs(tmp_path):
    root = tmp_path / "runs"
    _run(root / "a", lr=0.1, hidden=32, val_acc=0.80, started="2026-01-01T00:00:01")
    _run(root / "b", lr=0.01, hidden=32, val_acc=0.95, started="2026-01-01T00:00:02")
    sweep = root / "s-sweep"
    _run(sweep / "trial-000", lr=0.001, hidden=64, val_acc=0.90, started="2026-01-01T00:00:03")
    _run(sweep / "trial-001", lr=0.05, hidden=64, val_acc=0.97, status="pruned")
    (sweep / "sweep.json").write_text("{}")
    (sweep / "study.db").write_text("")
    (sweep / "best.yaml").write_text("name: x\n")
    return root


def _json(capsys, *argv):
    code, out, err = agrad(capsys, "runs", *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def test_differing_settings_sort_filter_and_sweep_grouping(runs, capsys):
    rows = _json(capsys, str(runs))
    # newest first, the sweep's trials together where its newest stands
    assert [r["folder"] for r in rows] == ["s-sweep/trial-000", "s-sweep/trial-001", "b", "a"]
    assert [r.get("sweep") for r in rows] == ["s-sweep", "s-sweep", None, None]
    assert rows[0]["settings"] == {"model.0.out_features": 64, "optimizer.lr": 0.001}
    assert rows[3]["settings"] == {"model.0.out_features": 32, "optimizer.lr": 0.1}
    by_acc = _json(capsys, str(runs), "--sort", "-val_acc")
    assert [r["metrics"]["val_acc"] for r in by_acc] == [0.97, 0.9, 0.95, 0.80]  # grouped
    no_sweep = _json(capsys, str(runs), "--sort", "optimizer.lr", "--filter", "sweep=null")
    assert [r["folder"] for r in no_sweep] == ["b", "a"]
    desc = _json(capsys, str(runs), "--sort", "optimizer.lr", "--desc", "--filter", "sweep=")
    assert [r["folder"] for r in desc] == ["a", "b"]
    done = _json(capsys, str(runs), "--filter", "status=completed", "--filter", "val_acc>0.85")
    assert [r["folder"] for r in done] == ["s-sweep/trial-000", "b"]
    edge = _json(capsys, str(runs), "--filter", "val_acc>=0.95", "--filter", "val_acc<0.97")
    assert [r["folder"] for r in edge] == ["b"]  # just inside both limits
    assert _json(capsys, str(runs), "--filter", "optimizer.lr!=0.1", "--filter", "model.0.out_features=32")[0]["folder"] == "b"  # fmt: skip

    code, out, _ = agrad(capsys, "runs", str(runs))
    assert code == 0
    lines = [line for line in out.splitlines() if line.strip()]
    head = lines[0].split()
    assert head[:4] == ["name", "status", "epochs", "best"]
    assert head[4:6] == ["model.0.out_features", "optimizer.lr"]
    assert lines[2].split()[:3] == ["s-sweep/", "(sweep,", "2"]
    assert lines[3].split()[:2] == ["trial-000", "completed"] and lines[4].split()[1] == "pruned"
    assert lines[3].split()[7:9] == ["64", "0.001"]  # after "val_loss 0.1 (epoch 2)"


def test_unknown_keys_and_bad_filters_exit_2(runs, capsys):
    code, _, err = agrad(capsys, "runs", str(runs), "--sort", "val_accc")
    assert code == 2 and "no run has 'val_accc' (did you mean 'val_acc'?)" in err
    code, _, err = agrad(capsys, "runs", str(runs), "--filter", "optimizer.lrr=1")
    assert code == 2 and "(did you mean 'optimizer.lr'?)" in err
    code, _, err = agrad(capsys, "runs", str(runs), "--filter", "val_acc")
    assert code == 2 and "expected KEY=VALUE" in err and "Traceback" not in err


def test_diff_two_runs(runs, capsys):
    d = _json(capsys, str(runs), "--diff", "a", "s-sweep/trial-000")
    assert d["config"] == [
        {"key": "model.0.out_features", "a": 32, "b": 64},  # in the file's order
        {"key": "name", "a": "a", "b": "trial-000"},
        {"key": "optimizer.lr", "a": 0.1, "b": 0.001},
    ]
    assert d["metrics"]["val_acc"]["delta"] == pytest.approx(0.90 - 0.80)
    assert d["metrics"]["val_loss"] == {
        "a": pytest.approx(0.2),
        "b": pytest.approx(0.1),
        "delta": pytest.approx(-0.1),
    }
    code, out, _ = agrad(capsys, "runs", str(runs), "--diff", str(runs / "a"), "b")
    assert code == 0
    assert "  optimizer.lr: 0.1 -> 0.01" in out and "  val_acc: 0.8 -> 0.95 (+0.15)" in out
    assert "model.0.out_features" not in out  # the same in both
    code, _, err = agrad(capsys, "runs", str(runs), "--diff", "a", "nope")
    assert code == 2 and "--diff nope: not a run folder" in err
