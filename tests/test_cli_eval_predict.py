"""agrad eval, agrad predict, data.test_split/data.test and autogradcli.load_run, through the agrad
command line (in this process; one usage error through a real subprocess); every number is checked
against a forward pass of the loaded model and a loss computed here in numpy."""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
from test_cli_helpers import REPO, agrad, agrad_in_process, agrad_subprocess, write

N, FEATURES, CLASSES = 80, 4, 3


def _data(tmp_path, seed=0, n=N):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, FEATURES)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int64) + (x[:, 1] > 0.5).astype(np.int64)
    path = tmp_path / f"data{seed}.npz"
    np.savez(path, x=x, y=y)
    return str(path), x, y


CONFIG = """
name: cls
seed: 3
data: {{dataset: npz, path: {path}, test_split: 0.25, val_split: 0.2}}
model:
  - {{type: Linear, in_features: auto, out_features: 8}}
  - ReLU
  - {{type: Linear, in_features: auto, out_features: 3}}
optimizer: {{type: Adam, lr: 0.05}}
train: {{epochs: 3, batch_size: 16}}
"""


def _json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def _ce(logits, y):
    """Mean cross-entropy and accuracy, in float64 numpy."""
    z = logits.astype(np.float64)
    logp = z - z.max(1, keepdims=True)
    logp -= np.log(np.exp(logp).sum(1, keepdims=True))
    return float(-logp[np.arange(len(y)), y].mean()), float((z.argmax(1) == y).mean())


def _forward(run, x, checkpoint="best"):
    import autogradcli

    model = autogradcli.load_run(run, checkpoint=checkpoint)
    return model(autogradcli.tensor(x)).detach().numpy()


def _test_indices(n, frac, seed):
    from autogradcli import data as D

    n_test = round(n * frac)
    _, test = D.random_split(list(range(n)), [n - n_test, n_test], generator=D.Generator(seed))
    return np.array(list(test.indices))


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("evalrun")
    path, x, y = _data(tmp_path)
    cfg = write(tmp_path / "cls.yaml", CONFIG.format(path=path))
    res = agrad_in_process(
        "train", cfg, "--progress", "plain", "--runs-dir", str(tmp_path / "runs")
    )
    assert res.returncode == 0, res.stderr
    (run,) = glob.glob(str(tmp_path / "runs" / "cls-*"))
    return tmp_path, run, x, y, res.stdout


def test_test_split_is_carved_first_and_summary_has_the_best_checkpoints_test_metrics(trained):
    _, run, x, y, stdout = trained
    summary = _json(os.path.join(run, "summary.json"))
    idx = _test_indices(N, 0.25, 3)
    assert len(idx) == 20 and summary["test"]["samples"] == 20
    loss, acc = _ce(_forward(run, x[idx]), y[idx])
    assert summary["test"]["checkpoint"] == "best"
    assert summary["test"]["epoch"] == summary["best"]["epoch"]
    assert summary["test"]["test_loss"] == pytest.approx(loss, rel=1e-5)
    assert summary["test"]["test_acc"] == pytest.approx(acc, abs=1e-12)
    line = (
        f"test (best checkpoint, epoch {summary['best']['epoch']}, 20 samples): "
        f"test_loss {loss:.4f}  test_acc {acc:.4f}"
    )
    assert line in stdout.splitlines()
    # train + val are the 60 samples left: 20% of them (12) validate, 48 train
    metrics = _jsonl(os.path.join(run, "metrics.jsonl"))
    assert len(metrics) == 3


def test_agrad_eval_on_the_test_data_and_on_a_file(trained):
    tmp_path, run, x, y, _ = trained
    idx = _test_indices(N, 0.25, 3)
    res = agrad_in_process("eval", run, "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    loss, acc = _ce(_forward(run, x[idx]), y[idx])
    assert doc["test_loss"] == pytest.approx(loss, rel=1e-5) and doc["test_acc"] == acc
    assert _json(os.path.join(run, "eval", "best-test.json")) == doc

    other, x2, y2 = _data(tmp_path, seed=7, n=33)
    res = agrad_in_process("eval", run, "--checkpoint", "last", "--data", other)
    assert res.returncode == 0, res.stderr
    assert "last checkpoint (epoch 3) on data7 (33 samples)" in res.stdout
    doc = _json(os.path.join(run, "eval", "last-data7.json"))
    loss, acc = _ce(_forward(run, x2, "last"), y2)
    assert doc["test_loss"] == pytest.approx(loss, rel=1e-5) and doc["test_acc"] == acc
    assert doc["epoch"] == 3 and doc["samples"] == 33


def test_agrad_predict_csv_and_npz_equal_a_forward_pass(trained):
    tmp_path, run, x, _, _ = trained
    inputs = tmp_path / "new.csv"
    np.savetxt(inputs, x[:7], delimiter=",", fmt="%.9g")
    logits = _forward(run, np.loadtxt(inputs, delimiter=",", dtype=np.float32))
    prob = np.exp(logits - logits.max(1, keepdims=True))
    prob /= prob.sum(1, keepdims=True)
    out_csv = tmp_path / "pred.csv"
    res = agrad_in_process("predict", run, "--input", str(inputs), "--output", str(out_csv))
    assert res.returncode == 0, res.stderr
    lines = out_csv.read_text().splitlines()
    assert lines[0] == "pred,prob_0,prob_1,prob_2" and len(lines) == 8
    table = np.array([[float(c) for c in line.split(",")] for line in lines[1:]])
    assert (table[:, 0] == prob.argmax(1)).all()
    np.testing.assert_allclose(table[:, 1:], prob, rtol=1e-5, atol=1e-7)

    npz_in = tmp_path / "new.npz"
    np.savez(npz_in, x=x[:5])
    out_npz = tmp_path / "pred.npz"
    res = agrad_in_process(
        "predict", run, "--input", str(npz_in), "--output", str(out_npz), "--checkpoint", "last"
    )
    assert res.returncode == 0, res.stderr
    got = np.load(out_npz)
    logits = _forward(run, x[:5], "last")
    assert got["pred"].dtype == np.int64 and (got["pred"] == logits.argmax(1)).all()
    np.testing.assert_allclose(got["prob"].sum(1), 1.0, rtol=1e-6)


def test_usage_errors_exit_2_without_traceback(trained, tmp_path):
    _, run, _, _, _ = trained
    cases = [
        (("eval", str(tmp_path / "nope")), "does not exist"),
        (("predict", run, "--input", str(tmp_path / "missing.csv")), "no such data file"),
        (("predict", run, "--input", run + "/summary.json", "--output", "p.txt"), ".csv or .npz"),
    ]
    bad = tmp_path / "wide.npz"
    np.savez(bad, x=np.zeros((2, 5), np.float32))
    cases.append((("predict", run, "--input", str(bad)), "trained on samples of shape (4,)"))
    for i, argv_message in enumerate(cases):
        argv, message = argv_message
        # the last through the console script's real process: nothing escapes to the interpreter
        res = agrad_subprocess(*argv) if i == len(cases) - 1 else agrad_in_process(*argv)
        assert res.returncode == 2, (argv, res.stderr)
        assert message in res.stderr and "Traceback" not in res.stderr


def test_eval_without_test_data_names_the_fix(tmp_path):
    path, _, _ = _data(tmp_path)
    cfg = write(
        tmp_path / "c.yaml",
        CONFIG.format(path=path)
        .replace("test_split: 0.25, ", "")
        .replace("epochs: 3", "epochs: 1"),
    )
    res = agrad_in_process("train", cfg, "--progress", "none", "--runs-dir", str(tmp_path / "r"))
    assert res.returncode == 0, res.stderr
    (run,) = glob.glob(str(tmp_path / "r" / "cls-*"))
    assert "test" not in _json(os.path.join(run, "summary.json"))
    res = agrad_in_process("eval", run)
    assert res.returncode == 2 and "has no test data" in res.stderr and "--data FILE" in res.stderr
    # never a split: any test_split of this run's data re-draws rows it trained or validated on
    assert "test_split=" not in res.stderr and "--set" not in res.stderr


def test_test_split_limits_and_test_source(tmp_path):
    from autogradcli.config import ConfigError, build_experiment, load_config

    path, _, _ = _data(tmp_path, n=4)
    base = CONFIG.format(path=path).replace("val_split: 0.2", "val_split: 0.0")
    # 4 samples: 0.125 rounds to 0 test samples (refused), 0.15 to 1 (kept)
    for frac, ok in ((0.125, False), (0.15, True), (0.9, False)):
        cfg = write(tmp_path / "s.yaml", base.replace("test_split: 0.25", f"test_split: {frac}"))
        if ok:
            assert len(build_experiment(load_config(cfg)).test_loader.dataset) == 1
        else:
            with pytest.raises(ConfigError, match="test_split"):
                build_experiment(load_config(cfg))
    other, _, _ = _data(tmp_path, seed=5, n=9)
    spec = f"test: {{dataset: npz, path: {os.path.basename(other)}}}"
    cfg = write(tmp_path / "t.yaml", base.replace("test_split: 0.25", spec))
    exp = build_experiment(load_config(cfg))
    assert len(exp.test_loader.dataset) == 9 and len(exp.train_loader.dataset) == 4
    both = base.replace("test_split: 0.25", f"test_split: 0.25, {spec}")
    with pytest.raises(ConfigError, match="either 'test_split' or 'test'"):
        load_config(write(tmp_path / "b.yaml", both))


def test_import_autogradcli_does_not_import_the_trainer():
    code = (
        "import sys, autogradcli; assert callable(autogradcli.load_run); "
        "print(sorted(m for m in sys.modules if m.startswith(('autogradcli.trainer', "
        "'autogradcli.config'))))"
    )
    env = dict(os.environ, PYTHONPATH=REPO)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_agrad_predict_reads_idx_images(trained):
    tmp_path, run, _, _, _ = trained
    images = np.random.default_rng(4).integers(0, 256, size=(5, 2, 2), dtype=np.uint8)
    idx_file = tmp_path / "new-images-idx3-ubyte"
    header = bytes([0, 0, 0x08, 3]) + np.array([5, 2, 2], ">i4").tobytes()
    idx_file.write_bytes(header + images.tobytes())
    out = tmp_path / "idx_pred.npz"
    res = agrad_in_process("predict", run, "--input", str(idx_file), "--output", str(out))
    assert res.returncode == 0, res.stderr
    # (5, 1, 2, 2) images scaled to [0, 1], reshaped to the model's 4 inputs
    logits = _forward(run, images.reshape(5, 4).astype(np.float32) / np.float32(255))
    got = np.load(out)
    assert (got["pred"] == logits.argmax(1)).all()
    e = np.exp(logits - logits.max(1, keepdims=True))
    np.testing.assert_allclose(got["prob"], e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_eval_refuses_an_override_that_redraws_the_split(trained):
    """--set data.* or seed would re-draw the split (0.5 of this run: rows it trained and
    validated on): refused, naming the key and --data; a --set that does not touch the data
    (batch size) is accepted and gives the same test numbers."""
    _, run, x, y, _ = trained
    for text in ("data.test_split=0.5", "data.val_split=0.1", "seed=1", "data.path=x.npz"):
        res = agrad_in_process("eval", run, "--set", text)
        assert res.returncode == 2, (text, res.stderr)
        key = text.partition("=")[0]
        assert f"eval cannot change {key}" in res.stderr and "--data FILE" in res.stderr
        assert "Traceback" not in res.stderr
    res = agrad_in_process("eval", run, "--set", "train.batch_size=7", "--json")
    assert res.returncode == 0, res.stderr
    idx = _test_indices(N, 0.25, 3)
    loss, acc = _ce(_forward(run, x[idx]), y[idx])
    doc = json.loads(res.stdout)
    assert doc["samples"] == 20 and doc["test_loss"] == pytest.approx(loss, rel=1e-5)
    assert doc["test_acc"] == acc


def test_eval_and_predict_work_after_the_training_data_moved(trained, tmp_path):
    """eval --data and predict rebuild the run from config.resolved.yaml + data_state.json:
    the training file is never read again."""
    src, run, _, _, _ = trained
    run = _copy_run(run, tmp_path)
    state = _json(os.path.join(run, "data_state.json"))
    assert state["dataset"] == "npz" and state["state"] == {"classes": 3}
    moved = str(src / "data0.npz")
    os.rename(moved, moved + ".away")
    try:
        other, x2, y2 = _data(tmp_path, seed=5, n=21)
        res = agrad_in_process("eval", run, "--data", other, "--json")
        assert res.returncode == 0, res.stderr
        loss, acc = _ce(_forward(run, x2), y2)
        doc = json.loads(res.stdout)
        assert doc["test_loss"] == pytest.approx(loss, rel=1e-5) and doc["test_acc"] == acc
        inp, _ = _inputs_csv(tmp_path, x2)
        out = str(tmp_path / "p.csv")
        res = agrad_in_process("predict", run, "--input", inp, "--output", out)
        assert res.returncode == 0, res.stderr
        got = np.loadtxt(out, delimiter=",", skiprows=1)
        assert (got[:, 0] == _forward(run, x2[:5]).argmax(1)).all()
        res = agrad_in_process("eval", run)  # the test split lives in the moved file
        assert res.returncode == 2 and "data0.npz" in res.stderr and "Traceback" not in res.stderr
    finally:
        os.rename(moved + ".away", moved)


def test_eval_data_is_read_with_the_runs_target_column(tmp_path):
    """A csv run with target_column 0 (not the last column): eval --data reads the file with
    it, as training did, instead of taking the last column as the target."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=(60, 3)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int64)
    table = np.column_stack([y, x, rng.integers(2000, 2010, size=60)])  # a `year` last
    head = "label,a,b,c,year"
    np.savetxt(tmp_path / "t.csv", table, delimiter=",", fmt="%.9g", header=head, comments="")
    np.savetxt(tmp_path / "e.csv", table[:25], delimiter=",", fmt="%.9g", header=head, comments="")
    cfg = write(
        tmp_path / "c.yaml",
        CONFIG.format(path="t.csv")
        .replace("dataset: npz", "dataset: csv, target_column: label")
        .replace("test_split: 0.25, ", "")
        .replace("out_features: 3}", "out_features: 2}"),
    )
    res = agrad_in_process("train", cfg, "--progress", "none", "--runs-dir", str(tmp_path / "r"))
    assert res.returncode == 0, res.stderr
    (run,) = glob.glob(str(tmp_path / "r" / "cls-*"))
    res = agrad_in_process("eval", run, "--data", str(tmp_path / "e.csv"), "--json")
    assert res.returncode == 0, res.stderr
    loss, acc = _ce(_forward(run, table[:25, 1:].astype(np.float32)), y[:25])
    doc = json.loads(res.stdout)
    assert doc["samples"] == 25 and doc["test_loss"] == pytest.approx(loss, rel=1e-5)
    assert doc["test_acc"] == acc
    # predict takes the file with or without the target column
    for name, cols, names in (("with.csv", table[:4], head), ("without.csv", table[:4, 1:], "")):
        np.savetxt(tmp_path / name, cols, delimiter=",", fmt="%.9g", header=names, comments="")
        out = str(tmp_path / f"p-{name}")
        res = agrad_in_process("predict", run, "--input", str(tmp_path / name), "--output", out)
        assert res.returncode == 0, res.stderr
        got = np.loadtxt(out, delimiter=",", skiprows=1)
        assert (got[:, 0] == _forward(run, table[:4, 1:].astype(np.float32)).argmax(1)).all()


# ------------------------------------------------- the user's files are never lost (issue 17)
def _copy_run(run, tmp_path) -> str:
    """A copy of the module's run without the eval/ and predict/ results other tests wrote."""
    dst = str(tmp_path / "run")
    shutil.copytree(run, dst, ignore=shutil.ignore_patterns("eval", "predict"))
    return dst


def _read(path, mode="r"):
    with open(path, mode) as f:
        return f.read()


def _inputs_csv(tmp_path, x) -> tuple[str, bytes]:
    path = tmp_path / "x.csv"
    np.savetxt(path, x[:5], delimiter=",", fmt="%.9g")
    return str(path), path.read_bytes()


@pytest.mark.parametrize("spelling", ["same", "dotdot", "hardlink", "symlink"])
def test_predict_refuses_an_output_that_is_the_input(trained, tmp_path, capsys, spelling):
    """Even with --overwrite: the input survives byte for byte, both flags and paths named."""
    _, run, x, _, _ = trained
    inp, before = _inputs_csv(tmp_path, x)
    (tmp_path / "sub").mkdir()
    out = {
        "same": inp,
        "dotdot": str(tmp_path / "sub" / ".." / "x.csv"),
        "hardlink": str(tmp_path / "sub" / "link.csv"),
        "symlink": str(tmp_path / "sub" / "sym.csv"),
    }[spelling]
    if spelling == "hardlink":
        os.link(inp, out)
    elif spelling == "symlink":
        os.symlink(inp, out)
    code, _, err = agrad(capsys, "predict", run, "--input", inp, "--output", out, "--overwrite")
    assert code == 2, err
    assert f"--output {out} is the --input file {inp}" in err and "Traceback" not in err
    assert _read(inp, "rb") == before


def test_predict_refuses_an_existing_output_unless_overwrite(trained, tmp_path, capsys):
    _, run, x, _, _ = trained
    run = _copy_run(run, tmp_path)
    inp, _ = _inputs_csv(tmp_path, x)
    out = tmp_path / "pred.csv"
    out.write_text("precious\n")
    code, _, err = agrad(capsys, "predict", run, "--input", inp, "--output", str(out))
    assert code == 2 and f"--output {out} already exists: pass --overwrite" in err
    assert out.read_text() == "precious\n"
    code, _, err = agrad(capsys, "predict", run, "-i", inp, "-o", str(out), "--overwrite")
    assert code == 0, err
    assert out.read_text().splitlines()[0] == "pred,prob_0,prob_1,prob_2"
    # the default output in the run folder: written once, then refused, then replaced
    default = os.path.join(run, "predict", "best-x.csv")
    assert agrad(capsys, "predict", run, "--input", inp)[0] == 0 and os.path.isfile(default)
    code, _, err = agrad(capsys, "predict", run, "--input", inp)
    assert code == 2 and f"{default} already exists: pass --overwrite" in err
    assert agrad(capsys, "predict", run, "--input", inp, "--overwrite")[0] == 0


@pytest.mark.parametrize("where", ["under-a-file", "missing-folder", "proc", "folder"])
def test_predict_output_errors_name_the_output(trained, tmp_path, capsys, where):
    """A bad --output is named as given (never a hidden temporary file), exit 2, no file left."""
    _, run, x, _, _ = trained
    inp, _ = _inputs_csv(tmp_path, x)
    (tmp_path / "file.txt").write_text("a file\n")
    if where == "proc" and not os.path.isdir("/proc/self"):
        pytest.skip("no /proc here")
    out, words = {
        "under-a-file": (str(tmp_path / "file.txt" / "out.csv"), "is not a folder"),
        "missing-folder": (str(tmp_path / "nope" / "out.csv"), "does not exist"),
        "proc": ("/proc/x.csv", "cannot write --output /proc/x.csv"),
        "folder": (str(tmp_path / "d.csv"), "is a folder"),
    }[where]
    if where == "folder":
        os.mkdir(out)
    before = sorted(os.listdir(tmp_path))
    code, _, err = agrad(capsys, "predict", run, "--input", inp, "--output", out)
    assert code == 2, err
    assert f"--output {out}" in err and words in err
    assert ".tmp" not in err and "Traceback" not in err
    assert sorted(os.listdir(tmp_path)) == before and not os.path.exists("/proc/x.csv")


def test_eval_results_are_named_by_their_data_and_never_overwrite_others(trained, tmp_path, capsys):
    """Each data file gets its own eval/<ckpt>-<stem>.json (-2, -3... for another file with the
    same stem); re-evaluating the same data replaces its own result only."""
    _, run, _, _, _ = trained
    run = _copy_run(run, tmp_path)
    ev = os.path.join(run, "eval")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, x1, y1 = _data(tmp_path / "a", seed=1, n=11)
    second, _, _ = _data(tmp_path / "b", seed=1, n=13)  # the same name, other data
    assert agrad(capsys, "eval", run)[0] == 0
    assert agrad(capsys, "eval", run, "--data", first)[0] == 0
    assert agrad(capsys, "eval", run, "--data", second)[0] == 0
    docs = {n: _json(os.path.join(ev, n)) for n in sorted(os.listdir(ev))}
    assert sorted(docs) == ["best-data1-2.json", "best-data1.json", "best-test.json"]
    assert docs["best-data1.json"]["data"] == os.path.realpath(first)
    assert docs["best-data1.json"]["samples"] == 11
    assert docs["best-data1-2.json"]["samples"] == 13 and docs["best-test.json"]["data"] == "test"
    # re-evaluating the first file (spelt differently) replaces its own result
    np.savez(first, x=x1[:7], y=y1[:7])
    spelt = os.path.join(str(tmp_path / "b"), "..", "a", "data1.npz")
    code, out, _ = agrad(capsys, "eval", run, "--data", spelt)
    assert code == 0 and f"written to {os.path.join(ev, 'best-data1.json')}" in out
    assert _json(os.path.join(ev, "best-data1.json"))["samples"] == 7
    assert _json(os.path.join(ev, "best-data1-2.json")) == docs["best-data1-2.json"]
    # a data file named like the test split does not replace it; a foreign file is kept
    named_test, _, _ = _data(tmp_path / "a", seed=2, n=5)
    os.rename(named_test, tmp_path / "a" / "test.npz")
    with open(os.path.join(ev, "best-test-2.json"), "w") as f:
        f.write("not json")
    assert agrad(capsys, "eval", run, "--data", str(tmp_path / "a" / "test.npz"))[0] == 0
    assert _json(os.path.join(ev, "best-test.json")) == docs["best-test.json"]
    assert _read(os.path.join(ev, "best-test-2.json")) == "not json"
    assert _json(os.path.join(ev, "best-test-3.json"))["samples"] == 5


def _zero_rows(tmp_path, fmt: str, rows: int = 0, targets: bool = True) -> str:
    x = np.random.default_rng(0).normal(size=(rows, FEATURES)).astype(np.float32)
    y = np.zeros(rows, np.int64)
    if fmt == "npz":
        np.savez(tmp_path / "d.npz", x=x, y=y)
        return str(tmp_path / "d.npz")
    if fmt in ("csv-empty", "csv-header"):
        (tmp_path / "d.csv").write_text("" if fmt == "csv-empty" else "a,b,c,d,y\n")
        return str(tmp_path / "d.csv")
    if fmt == "csv":
        table = np.column_stack([x, y]) if targets else x
        np.savetxt(tmp_path / "d.csv", table, delimiter=",", fmt="%.9g")
        return str(tmp_path / "d.csv")
    header = bytes([0, 0, 0x08, 3]) + np.array([rows, 2, 2], ">i4").tobytes()
    (tmp_path / "d-idx3-ubyte").write_bytes(header + bytes(rows * 4))
    return str(tmp_path / "d-idx3-ubyte")


@pytest.mark.parametrize("fmt", ["npz", "csv-empty", "csv-header", "idx"])
def test_zero_rows_are_refused_naming_the_file(trained, tmp_path, capsys, fmt):
    """0 rows: exit 2, 'FILE has no rows', nothing written; 1 row (just inside) is fine."""
    _, run, _, _, _ = trained
    run = _copy_run(run, tmp_path)
    path = _zero_rows(tmp_path, fmt)
    commands = [("predict", run, "--input", path, "--output", str(tmp_path / "p.csv"))]
    if fmt != "idx":  # IDX files hold no targets: eval refuses them for that
        commands.append(("eval", run, "--data", path))
    for argv in commands:
        code, _, err = agrad(capsys, *argv)
        assert code == 2, (argv, err)
        assert f"{path} has no rows" in err and "Traceback" not in err
    assert not os.path.exists(tmp_path / "p.csv") and not os.path.exists(os.path.join(run, "eval"))
    fmt = "csv" if fmt.startswith("csv") else fmt
    one = _zero_rows(tmp_path, fmt, rows=1, targets=False)
    code, out, err = agrad(capsys, "predict", run, "--input", one, "-o", str(tmp_path / "p.csv"))
    assert code == 0 and "1 predictions" in out, err
    if fmt != "idx":
        one = _zero_rows(tmp_path, fmt, rows=1)
        code, out, err = agrad(capsys, "eval", run, "--data", one)
        assert code == 0 and "(1 samples)" in out, err
