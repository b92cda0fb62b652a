"""The config paths rule, through agrad (in this process, in the working directory given): a path
written in the config file (data files, output.dir) is relative to the config file's folder; one
given with --set or --runs-dir, or output.dir's default (runs), is relative to the working directory."""

from __future__ import annotations

import glob
import os

import numpy as np
import yaml
from test_cli_helpers import agrad_in_process, write

CONFIG = """
name: p
data: {dataset: npz, path: d.npz, val_split: 0.25}
model:
  - {type: Linear, in_features: auto, out_features: 1}
loss: mse
train: {epochs: 1, batch_size: 8}
"""


def _setup(tmp_path, extra=""):
    folder = tmp_path / "cfgdir"
    folder.mkdir()
    rng = np.random.default_rng(0)
    np.savez(folder / "d.npz", x=rng.normal(size=(16, 2)).astype(np.float32),
             y=rng.normal(size=(16, 1)).astype(np.float32))  # fmt: skip
    work = tmp_path / "work"
    work.mkdir()
    return write(folder / "c.yaml", CONFIG + extra), str(work)


def _runs(pattern):
    return glob.glob(os.path.join(pattern, "p-*"))


def test_output_dir_written_in_the_file_is_relative_to_the_file(tmp_path):
    cfg, work = _setup(tmp_path, "output: {dir: out}\n")
    res = agrad_in_process("train", cfg, "--progress", "none", cwd=work)
    assert res.returncode == 0, res.stderr
    (run,) = _runs(str(tmp_path / "cfgdir" / "out"))
    assert not os.path.exists(os.path.join(work, "out"))
    with open(os.path.join(run, "config.resolved.yaml"), encoding="utf-8") as f:
        resolved = yaml.safe_load(f)
    assert resolved["output"]["dir"] == str(tmp_path / "cfgdir" / "out")
    assert resolved["data"]["path"] == str(tmp_path / "cfgdir" / "d.npz")
    # --set and --runs-dir: the working directory
    res = agrad_in_process("train", cfg, "--progress", "none", "--set", "output.dir=o2", cwd=work)
    assert res.returncode == 0, res.stderr
    assert len(_runs(os.path.join(work, "o2"))) == 1
    res = agrad_in_process("train", cfg, "--progress", "none", "--runs-dir", "o3", cwd=work)
    assert res.returncode == 0, res.stderr
    assert len(_runs(os.path.join(work, "o3"))) == 1


def test_default_output_dir_is_runs_in_the_working_directory(tmp_path):
    cfg, work = _setup(tmp_path)
    res = agrad_in_process("train", cfg, "--progress", "none", cwd=work)
    assert res.returncode == 0, res.stderr
    assert len(_runs(os.path.join(work, "runs"))) == 1
    assert not os.path.exists(tmp_path / "cfgdir" / "runs")
