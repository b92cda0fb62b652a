"""The TensorBoard hook through agrad (in this process): the event file's scalars read back
(records parsed here, events decoded with tensorboardX's own protobuf classes) equal
metrics.jsonl; without tensorboardX (a real process) a clear config error (exit 2)."""

from __future__ import annotations

import glob
import json
import os
import struct
import subprocess
import sys

import pytest
from test_cli_helpers import REPO, TINY_CONFIG, agrad_in_process, write


def _records(path):
    """The payloads of a TFRecord file: u64 length, u32 crc, data, u32 crc, repeated."""
    with open(path, "rb") as f:
        blob = f.read()
    pos, out = 0, []
    while pos < len(blob):
        (n,) = struct.unpack("<Q", blob[pos : pos + 8])
        out.append(blob[pos + 12 : pos + 12 + n])
        pos += 12 + n + 4
    assert pos == len(blob)
    return out


def test_tensorboard_scalars_equal_metrics_jsonl(tmp_path):
    pytest.importorskip("tensorboardX")
    from tensorboardX.proto import event_pb2

    cfg = write(tmp_path / "tiny.yaml", TINY_CONFIG)
    res = agrad_in_process(
        "train", cfg, "--progress", "none", "--runs-dir", str(tmp_path / "runs"),
        "--set", "hooks=[TensorBoard, LRLogger]", "--set", "train.epochs=3",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    (run,) = glob.glob(str(tmp_path / "runs" / "tiny-*"))
    (events,) = glob.glob(os.path.join(run, "tensorboard", "events.out.tfevents.*"))
    scalars: dict[tuple[str, int], float] = {}
    for payload in _records(events):
        event = event_pb2.Event.FromString(payload)
        for value in event.summary.value:
            scalars[(value.tag, event.step)] = value.simple_value
    with open(os.path.join(run, "metrics.jsonl"), encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    expected = {
        (k, r["epoch"]): v
        for r in rows
        for k, v in r.items()
        if k not in ("epoch", "step", "time") and isinstance(v, (int, float))
    }
    assert {"train_loss", "val_loss", "val_mae", "lr"} <= {k for k, _ in expected}
    assert set(scalars) == set(expected) and len(expected) >= 3 * 4
    for key, value in expected.items():
        assert scalars[key] == pytest.approx(value, rel=1e-6), key  # float32 in the file


def test_missing_tensorboardx_is_a_config_error(tmp_path):
    fake = tmp_path / "fake" / "tensorboardX"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('No module named tensorboardX')\n")
    cfg = write(tmp_path / "tiny.yaml", TINY_CONFIG + "hooks: [LRLogger, TensorBoard]\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path / "fake"), REPO]))
    res = subprocess.run(
        [sys.executable, "-m", "autogradcli.cli", "train", cfg, "--runs-dir", str(tmp_path / "r")],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert "tiny.yaml:14:" in res.stderr and "hooks.1" in res.stderr
    assert 'pip install "autogradcli[tensorboard]"' in res.stderr
    assert not glob.glob(str(tmp_path / "r" / "*"))  # no run folder left behind
