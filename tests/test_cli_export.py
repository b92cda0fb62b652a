"""``agrad export`` (issue 20): a trained run's model out as safetensors (read back with the
``safetensors`` package), a PyTorch state dict (read by ``torch.load``) and ONNX (run in ONNX
Runtime against ``agrad predict``), and the refusals that keep the run and existing files
intact."""

from __future__ import annotations

import importlib.machinery
import json
import os
import sys
import types

import numpy as np
import pytest
import yaml
from test_cli_helpers import agrad, write

import autogradcli as ag

CONFIG = """
name: pets
seed: 0
data: {{dataset: table, path: {path}, target: label, val_split: 0.25}}
model:
  - {{type: Linear, in_features: auto, out_features: 8}}
  - Tanh
  - {{type: Linear, in_features: auto, out_features: auto}}
optimizer: {{type: Adam, lr: 0.05}}
train: {{epochs: 2, batch_size: 8}}
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A small classification run on a CSV with named classes; (run folder, features)."""
    from autogradcli.cli import main

    tmp = tmp_path_factory.mktemp("export")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((40, 2)).astype(np.float32)
    labels = np.where(x[:, 0] + x[:, 1] > 0, "dog", "cat")
    lines = ["a,b,label"] + [f"{a:.6f},{b:.6f},{c}" for (a, b), c in zip(x, labels)]
    (tmp / "pets.csv").write_text("\n".join(lines) + "\n")
    cfg = write(tmp / "pets.yaml", CONFIG.format(path="pets.csv"))
    assert main(["train", cfg, "--runs-dir", str(tmp / "runs"), "--progress", "none"]) == 0
    (folder,) = [str(p) for p in (tmp / "runs").iterdir()]
    return folder, x


def _state(folder, checkpoint="best"):
    model = ag.load_run(folder, checkpoint=checkpoint)
    return {k: v.detach().numpy() for k, v in model.state_dict().items()}


def test_safetensors_round_trip_with_config_and_class_names(run, tmp_path, capsys):
    st = pytest.importorskip("safetensors")
    from safetensors.numpy import load_file

    folder, _ = run
    out = str(tmp_path / "model.safetensors")
    code, stdout, err = agrad(capsys, "export", folder, "--format", "safetensors", "-o", out)
    assert code == 0, err
    assert "exported the best checkpoint" in stdout and "(4 tensors)" in stdout
    got, want = load_file(out), _state(folder)
    assert sorted(got) == sorted(want)
    for k in want:
        np.testing.assert_array_equal(got[k], want[k])
        assert got[k].dtype == np.float32
    with st.safe_open(out, "np") as f:
        meta = f.metadata()
    assert json.loads(meta["agrad.classes"]) == ["cat", "dog"]
    with open(os.path.join(folder, "data_state.json"), encoding="utf-8") as f:
        assert json.loads(meta["agrad.data_state"]) == json.load(f)
    with open(os.path.join(folder, "config.resolved.yaml"), encoding="utf-8") as f:
        stored = yaml.safe_load(f)
    assert yaml.safe_load(meta["agrad.config"])["model"] == stored["model"]
    # the exported file is a weights file: --checkpoint PATH and init_from read it back
    again = str(tmp_path / "again.safetensors")
    code, stdout, err = agrad(capsys, "export", folder, "--checkpoint", out, "-o", again)
    assert code == 0, err
    assert f"exported the weights of {out} of {folder} as safetensors" in stdout
    assert all(np.array_equal(load_file(again)[k], want[k]) for k in want)


def test_torch_state_dict_loads_into_a_torch_model_with_equal_outputs(run, tmp_path, capsys):
    from autogradcli import serialization

    if not hasattr(serialization, "save_torch"):
        pytest.skip("serialization.save_torch is not on this branch yet")
    torch = pytest.importorskip("torch")
    folder, x = run
    out = str(tmp_path / "w.pt")
    code, _, err = agrad(capsys, "export", folder, "-o", out, "--checkpoint", "last")
    assert code == 0, err
    net = torch.nn.Sequential(torch.nn.Linear(2, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
    net.load_state_dict(torch.load(out))  # weights_only=True, the default
    want = ag.load_run(folder, "last")(ag.tensor(x)).detach().numpy()
    got = net(torch.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_onnx_in_onnx_runtime_equals_agrad_predict(run, tmp_path, capsys):
    try:
        from autogradcli import onnx as _
    except ImportError:
        pytest.skip("autogradcli.onnx is not on this branch yet")
    ort = pytest.importorskip("onnxruntime")
    folder, x = run
    out = str(tmp_path / "m.onnx")
    code, _, err = agrad(capsys, "export", folder, "-o", out)
    assert code == 0, err
    (tmp_path / "x.csv").write_text("a,b\n" + "".join(f"{a:.6f},{b:.6f}\n" for a, b in x))
    preds = str(tmp_path / "p.npz")
    code, _, err = agrad(capsys, "predict", folder, "-i", str(tmp_path / "x.csv"), "-o", preds)
    assert code == 0, err
    from autogradcli.cli.eval_cmd import inputs_from_file
    from autogradcli.trainer.load_run import open_run

    # the model's inputs: the file's rows as the run's data kind prepares them (standardized)
    _, inputs = inputs_from_file(open_run(folder).experiment, str(tmp_path / "x.csv"))
    xs = np.stack([inputs[i][0].numpy() for i in range(len(inputs))])
    session = ort.InferenceSession(out, providers=["CPUExecutionProvider"])
    for n in (1, len(xs)):  # the batch dim is dynamic
        (logits,) = session.run(None, {"input": xs[:n]})
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        np.testing.assert_allclose(
            e / e.sum(axis=1, keepdims=True), np.load(preds)["prob"][:n], atol=1e-5
        )


def test_onnx_is_given_the_runs_input_shape_and_a_dynamic_batch(run, tmp_path, monkeypatch):
    calls = []
    fake = types.ModuleType("autogradcli.onnx")
    fake.__spec__ = importlib.machinery.ModuleSpec("autogradcli.onnx", None)

    def export(model, args, f, input_names=None, output_names=None, dynamic_axes=None):
        calls.append((tuple(args[0].shape), str(args[0].dtype), input_names, dynamic_axes))
        with open(f, "wb") as fh:
            fh.write(b"onnx")

    fake.export = export
    monkeypatch.setitem(sys.modules, "autogradcli.onnx", fake)
    monkeypatch.setattr(ag, "onnx", fake, raising=False)
    from autogradcli.cli import main

    out = tmp_path / "m.onnx"
    assert main(["export", run[0], "-o", str(out)]) == 0
    assert calls == [
        ((2, 2), "autogradcli.float32", ["input"], {"input": {0: "batch"}, "output": {0: "batch"}})
    ]
    assert out.read_bytes() == b"onnx" and os.listdir(tmp_path) == ["m.onnx"]


def test_refusals_exit_2_and_leave_every_file_as_it_was(run, tmp_path, capsys):
    pytest.importorskip("safetensors")
    folder, _ = run
    existing = tmp_path / "old.safetensors"
    existing.write_bytes(b"keep me")
    config = os.path.join(folder, "config.yaml")
    ckpt = os.path.join(folder, "checkpoints", "best")
    before = {p: open(p, "rb").read() for p in (config, ckpt)}  # noqa: SIM115
    cases = [
        (["-o", str(existing)], "already exists: pass --overwrite"),
        (["-o", config, "-f", "torch", "--overwrite"], "is the run's config.yaml"),
        (["-o", ckpt, "-f", "onnx", "--overwrite"], "is the run's checkpoints"),
        (["-o", str(tmp_path / "m.txt")], "give --format, or a file ending in .onnx"),
        (["-o", str(tmp_path / "m.x"), "-f", "xml"], "'xml' is not one of"),
        (["-o", str(tmp_path), "-f", "onnx"], "is a folder"),
        (["-o", str(tmp_path / "no" / "m.onnx")], "does not exist"),
        (["-o", str(tmp_path / "m.onnx"), "--checkpoint", "latest"], "best, last or a"),
    ]
    for args, message in cases:
        code, _, err = agrad(capsys, "export", folder, *args)
        assert code == 2 and message in err, (args, err)
        assert "Traceback" not in err
    code, _, err = agrad(capsys, "export", str(tmp_path / "nope"), "-o", str(tmp_path / "m.onnx"))
    assert code == 2 and "nope' does not exist" in err
    assert existing.read_bytes() == b"keep me"
    assert all(open(p, "rb").read() == b for p, b in before.items())  # noqa: SIM115
    code, _, err = agrad(capsys, "export", folder, "-o", str(existing), "--overwrite")
    assert code == 0, err
    assert existing.read_bytes() != b"keep me"
    assert sorted(os.listdir(tmp_path)) == ["old.safetensors"]  # no temporary file left


def test_a_failing_writer_keeps_the_old_file_and_leaves_no_temporary(run, tmp_path, capsys):
    from autogradcli.cli import export_cmd

    def broken(loaded, path):
        with open(path, "wb") as fh:
            fh.write(b"half")
        raise OSError(28, "No space left on device")

    existing = tmp_path / "w.safetensors"
    existing.write_bytes(b"keep me")
    saved = export_cmd._WRITERS["safetensors"]
    export_cmd._WRITERS["safetensors"] = broken
    try:
        code, _, err = agrad(capsys, "export", run[0], "-o", str(existing), "--overwrite")
    finally:
        export_cmd._WRITERS["safetensors"] = saved
    assert code == 2 and f"cannot write --output {existing}: No space left on device" in err
    assert existing.read_bytes() == b"keep me" and os.listdir(tmp_path) == ["w.safetensors"]


def test_the_exported_file_gets_the_permissions_open_would_give(run, tmp_path, capsys):
    pytest.importorskip("safetensors")
    folder, _ = run
    umask = os.umask(0o022)
    try:
        out = tmp_path / "w.safetensors"
        code, _, err = agrad(capsys, "export", folder, "--output", str(out))
        assert code == 0, err
        assert out.stat().st_mode & 0o777 == 0o644  # not the temporary file's 0600
        out.chmod(0o640)
        code, _, err = agrad(capsys, "export", folder, "--output", str(out), "--overwrite")
        assert code == 0, err
        assert out.stat().st_mode & 0o777 == 0o640  # a replaced file keeps its own
    finally:
        os.umask(umask)
