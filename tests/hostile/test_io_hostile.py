"""The user's files through real ``agrad`` subprocesses (1 GiB address space): predictions
never written over their inputs, data files without rows refused, and files that inflate (zip
bombs, 1 MB to 1 GiB) refused on every path that reads arrays, before inflating. Each case: exit
2, the file named, no traceback, and every file the user had byte-identical afterwards."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import zipfile

import numpy as np
import pytest
from hostile_bombs import GIB, deflated_zeros, npy_header, npz_bomb, write_zip
from hostile_harness import GOOD_CONFIG, assert_refused, no_run_folder, run_agrad, write


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory) -> str:
    """A small regression run (1 input feature), trained once per module."""
    root = tmp_path_factory.mktemp("iorun")
    res = run_agrad("train", write(str(root / "c.yaml"), GOOD_CONFIG), cwd=str(root))
    assert res.code == 0, res.text
    (run,) = os.listdir(root / "runs")
    return str(root / "runs" / run)


def _snapshot(folder) -> dict[str, str]:
    """Every file under ``folder`` (links not followed) and a hash of its bytes."""
    out = {}
    for dirpath, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(dirpath, name)
            with open(path, "rb") as f:
                out[os.path.relpath(path, folder)] = hashlib.sha256(f.read()).hexdigest()
    return out


def _setup(finished_run, tmp_path) -> str:
    """A copy of the run in ``tmp_path``/run; the work folder is ``tmp_path``."""
    run = str(tmp_path / "run")
    shutil.copytree(finished_run, run)
    return run


def _csv(path, rows: int = 4, cols: int = 1) -> str:
    np.savetxt(path, np.linspace(-1, 1, rows * cols).reshape(rows, cols), delimiter=",")
    return str(path)


class TestOutputOverInput:
    """``predict --output`` naming the input, however spelt, is refused (even with
    --overwrite); an existing output needs --overwrite."""

    @pytest.mark.parametrize("spelling", ["same", "dotdot", "symlink", "hardlink"])
    def test_output_is_the_input(self, finished_run, tmp_path, spelling):
        run = _setup(finished_run, tmp_path)
        inp = _csv(tmp_path / "x.csv")
        os.mkdir(tmp_path / "d")
        out = {"same": "x.csv", "dotdot": "d/../x.csv", "symlink": "d/s.csv", "hardlink": "d/h.csv"}
        if spelling == "symlink":
            os.symlink(inp, tmp_path / "d" / "s.csv")
        elif spelling == "hardlink":
            os.link(inp, tmp_path / "d" / "h.csv")
        before = _snapshot(tmp_path)
        argv = ["--input", "x.csv", "--output", out[spelling], "--overwrite"]
        res = run_agrad("predict", run, *argv, cwd=str(tmp_path))
        assert_refused(res, f"--output {out[spelling]} is the --input file x.csv")
        assert _snapshot(tmp_path) == before

    def test_existing_output_needs_overwrite(self, finished_run, tmp_path):
        run = _setup(finished_run, tmp_path)
        _csv(tmp_path / "x.csv")
        write(str(tmp_path / "old.csv"), "my earlier work\n")
        before = _snapshot(tmp_path)
        res = run_agrad("predict", run, "-i", "x.csv", "-o", "old.csv", cwd=str(tmp_path))
        assert_refused(res, "--output old.csv already exists", "--overwrite")
        assert _snapshot(tmp_path) == before

    @pytest.mark.parametrize("out", ["/proc/x.csv", "x.csv/out.csv"])
    def test_unwritable_output_is_named_as_given(self, finished_run, tmp_path, out):
        run = _setup(finished_run, tmp_path)
        _csv(tmp_path / "x.csv")
        before = _snapshot(tmp_path)
        res = run_agrad("predict", run, "-i", "x.csv", "-o", out, cwd=str(tmp_path))
        assert_refused(res, f"--output {out}")
        assert ".tmp" not in res.text
        assert _snapshot(tmp_path) == before


def _zero_row_file(tmp_path, kind: str) -> str:
    if kind == "npz":
        np.savez(tmp_path / "z.npz", x=np.zeros((0, 1), np.float32), y=np.zeros((0, 1)))
        return "z.npz"
    if kind == "idx":
        write(str(tmp_path / "z.idx"), b"\x00\x00\x08\x03" + bytes(4) + b"\x00\x00\x00\x01" * 2)
        return "z.idx"
    write(str(tmp_path / "z.csv"), "" if kind == "csv-empty" else "x,y\n")
    return "z.csv"


class TestZeroRows:
    """A data file without a single row: "FILE has no rows", for eval and predict alike."""

    @pytest.mark.parametrize(
        "command, kind",
        [(c, k) for c in ("eval", "predict") for k in ("npz", "csv-empty", "csv-header")]
        + [("predict", "idx")],  # eval needs targets, which IDX images do not hold
    )
    def test_no_rows(self, finished_run, tmp_path, command, kind):
        run = _setup(finished_run, tmp_path)
        name = _zero_row_file(tmp_path, kind)
        before = _snapshot(tmp_path)
        argv = ["--data", name] if command == "eval" else ["--input", name, "-o", "p.csv"]
        res = run_agrad(command, run, *argv, cwd=str(tmp_path))
        assert_refused(res, f"{name} has no rows")
        assert _snapshot(tmp_path) == before


def _tensor_nodes(node):
    if isinstance(node, list):
        for v in node:
            yield from _tensor_nodes(v)
    elif isinstance(node, dict):
        if node.get("$") == "tensor":
            yield node
        else:
            for v in node.values():
                yield from _tensor_nodes(v)


def _bomb_checkpoint(path: str) -> None:
    """Make the checkpoint at ``path`` hold a 1 GiB zip bomb as its first tensor, header and
    .npy header agreeing on the size (only its compression gives it away)."""
    with zipfile.ZipFile(path) as z:
        members = {n: z.read(n) for n in z.namelist()}
    header = json.loads(members["header.json"])
    node = next(_tensor_nodes(header["root"]))
    node.update(dtype="<f4", shape=[GIB // 4])
    members["header.json"] = json.dumps(header).encode()
    members[node["file"]] = deflated_zeros(npy_header("<f4", (GIB // 4,)), GIB >> 20)
    write_zip(path, members)


class TestInflatingFiles:
    """A 1 MB file inflating to 1 GiB, on every path that reads arrays: refused before
    inflating (the process's 1 GiB could not hold it), naming the file and the member."""

    def test_train_data(self, tmp_path):
        npz_bomb(str(tmp_path / "d.npz"), np.zeros((8, 1), np.float32))
        config = GOOD_CONFIG.replace("dataset: sine\n  n: 64", "dataset: npz\n  path: d.npz")
        before = _snapshot(tmp_path)
        res = run_agrad("train", write(str(tmp_path / "c.yaml"), config), cwd=str(tmp_path))
        assert_refused(res, "d.npz", "x.npy inflates", "to 1.0 GiB")
        assert no_run_folder(str(tmp_path))
        assert {k: v for k, v in _snapshot(tmp_path).items() if k != "c.yaml"} == before

    @pytest.mark.parametrize("command", ["eval", "predict"])
    def test_data_file(self, finished_run, tmp_path, command):
        run = _setup(finished_run, tmp_path)
        npz_bomb(str(tmp_path / "b.npz"), np.zeros((8, 1), np.float32))
        before = _snapshot(tmp_path)
        argv = ["--data", "b.npz"] if command == "eval" else ["--input", "b.npz", "-o", "p.csv"]
        res = run_agrad(command, run, *argv, cwd=str(tmp_path))
        assert_refused(res, "b.npz", "x.npy inflates", "to 1.0 GiB")
        assert _snapshot(tmp_path) == before

    @pytest.mark.parametrize(
        "argv, checkpoint",
        [
            (("train", "--resume", "run"), "last"),
            (("eval", "run"), "best"),
            (("predict", "run", "--input", "x.csv", "-o", "p.csv"), "best"),
        ],
        ids=["resume", "eval", "predict"],
    )
    def test_checkpoint(self, finished_run, tmp_path, argv, checkpoint):
        run = _setup(finished_run, tmp_path)
        _csv(tmp_path / "x.csv")
        _bomb_checkpoint(os.path.join(run, "checkpoints", checkpoint))
        before = _snapshot(tmp_path)
        res = run_agrad(*argv, cwd=str(tmp_path))
        assert_refused(res, f"checkpoints/{checkpoint}", "inflates", "to 1.0 GiB")
        assert _snapshot(tmp_path) == before
