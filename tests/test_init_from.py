"""``init_from`` (issue 20): a run starts from pretrained weights (safetensors, a state dict,
a checkpoint, a run folder, a PyTorch file once the reader exists), renames keys by prefix,
reports matched / missing / unexpected keys, freezes parameters, and records the source and its
sha256. Values are checked against the files written here."""

from __future__ import annotations

import hashlib
import json
import os

import numpy as np
import pytest
from test_cli_helpers import REPO, TINY_CONFIG, agrad, write

import autogradcli as ag

INIT_LINE = len(TINY_CONFIG.strip().splitlines()) + 1  # where _config writes init_from


def _weights(seed=1):
    rng = np.random.default_rng(seed)
    return {
        "body.weight": rng.standard_normal((8, 1)).astype(np.float32),
        "body.bias": rng.standard_normal(8).astype(np.float32),
        "fc.weight": rng.standard_normal((1, 8)).astype(np.float32),
        "fc.bias": rng.standard_normal(1).astype(np.float32),
    }


def _config(tmp_path, init_from: str, name="ft.yaml"):
    return write(tmp_path / name, TINY_CONFIG + init_from)


def _build(cfg, *overrides):
    from autogradcli.config import build_experiment, load_config

    return build_experiment(load_config(cfg, list(overrides)))


def _params(model):
    return {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}


def _only_run(runs):
    (run,) = [os.path.join(runs, d) for d in os.listdir(runs)]
    return run


def _json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def test_safetensors_source_with_map_loads_the_weights_and_reports_the_keys(tmp_path):
    st = pytest.importorskip("safetensors.numpy")
    w = _weights()
    w["extra.scale"] = np.ones(3, np.float32)
    st.save_file(w, str(tmp_path / "w.safetensors"))
    cfg = _config(
        tmp_path,
        "init_from: {path: w.safetensors, strict: false, "
        "map: {'body.': '0.', 'fc.': '2.', 'extra.': null}}\n",
    )
    exp = _build(cfg)
    got = _params(exp.model)
    for src, dst in [("body", "0"), ("fc", "2")]:
        for p in ("weight", "bias"):
            np.testing.assert_array_equal(got[f"{dst}.{p}"], w[f"{src}.{p}"])
            assert got[f"{dst}.{p}"].dtype == np.float32
    rep = exp.init_from
    assert rep["matched"] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert rep["missing"] == [] and rep["unexpected"] == [] and rep["dropped"] == ["extra.scale"]
    assert rep["format"] == "safetensors"
    assert rep["sha256"] == _sha256(tmp_path / "w.safetensors")


def test_strict_lists_missing_and_unexpected_keys_at_the_line(tmp_path, capsys):
    ag.save({"0.weight": ag.zeros(8, 1), "head.weight": ag.zeros(1, 8)}, str(tmp_path / "w.ag"))
    cfg = _config(tmp_path, "init_from:\n  path: w.ag\n")
    code, _, err = agrad(capsys, "train", cfg, "--runs-dir", str(tmp_path / "runs"))
    assert code == 2 and "Traceback" not in err
    assert f"ft.yaml:{INIT_LINE}:1  init_from.strict: " in err
    assert "missing from the source: 0.bias, 2.weight, 2.bias" in err
    assert "unexpected in the source: head.weight" in err
    assert not os.path.exists(tmp_path / "runs")  # nothing written
    # strict: false loads the one key that matches and keeps the rest as built
    exp = _build(cfg, "init_from.strict=false")
    assert exp.init_from["matched"] == ["0.weight"]
    assert not exp.model.state_dict()["0.weight"].detach().numpy().any()


def test_a_shape_mismatch_names_the_key_and_both_shapes_even_when_not_strict(tmp_path, capsys):
    ag.save({"0.weight": ag.zeros(4, 1)}, str(tmp_path / "w.ag"))
    cfg = _config(tmp_path, "init_from: {path: w.ag, strict: false}\n")
    code, _, err = agrad(capsys, "train", cfg, "--runs-dir", str(tmp_path / "runs"))
    assert code == 2
    assert "0.weight: the source has shape (4, 1), the model (8, 1)" in err
    assert f"ft.yaml:{INIT_LINE}:" in err and "init_from.path: size mismatch" in err


def test_freeze_keeps_weights_bit_identical_and_the_run_records_the_source(tmp_path, capsys):
    w = {k.replace("body", "0").replace("fc", "2"): ag.tensor(v) for k, v in _weights().items()}
    ag.save({"model": w, "epoch": 3}, str(tmp_path / "ckpt"))  # a checkpoint-shaped dict
    cfg = _config(tmp_path, "init_from: {path: ckpt, freeze: ['0.*']}\n")
    runs = str(tmp_path / "runs")
    code, out, err = agrad(capsys, "train", cfg, "--runs-dir", runs, "--progress", "plain")
    assert code == 0, err
    assert "4 keys loaded, 0 missing, 0 unexpected" in out
    assert "frozen: 2 parameters (0.weight, 0.bias); the optimizer trains the other 2" in out
    run = _only_run(runs)
    after = ag.load(os.path.join(run, "checkpoints", "last"))["model"]
    for k in ("0.weight", "0.bias"):
        np.testing.assert_array_equal(after[k].numpy(), w[k].numpy())  # frozen: bit-identical
    assert not np.array_equal(after["2.weight"].numpy(), w["2.weight"].numpy())  # trained
    record = _json(os.path.join(run, "init_from.json"))
    assert record["sha256"] == _sha256(tmp_path / "ckpt")
    assert record["source"] == str(tmp_path / "ckpt") and record["frozen"] == ["0.weight", "0.bias"]
    summary = _json(os.path.join(run, "summary.json"))["init_from"]
    assert summary == {
        "source": str(tmp_path / "ckpt"),
        "sha256": record["sha256"],
        "matched": 4,
        "missing": 0,
        "unexpected": 0,
        "frozen": 2,
    }
    os.remove(tmp_path / "ckpt")  # the run no longer needs its source: resume, load_run
    code, _, err = agrad(capsys, "train", "--resume", run, "--set", "train.epochs=3")
    assert code == 0, err
    resumed = ag.load_run(run, checkpoint="last").state_dict()
    assert _json(os.path.join(run, "summary.json"))["epochs_completed"] == 3
    for k in ("0.weight", "0.bias"):
        np.testing.assert_array_equal(resumed[k].numpy(), w[k].numpy())  # still frozen


def test_set_init_from_path_is_relative_to_the_working_directory(tmp_path, monkeypatch):
    ag.save({"2.bias": ag.tensor([0.5])}, str(tmp_path / "w.ag"))
    sub = tmp_path / "cfg"
    sub.mkdir()
    cfg = write(sub / "ft.yaml", TINY_CONFIG)
    monkeypatch.chdir(tmp_path)
    exp = _build(cfg, "init_from.path=w.ag", "init_from.strict=false")
    assert exp.model.state_dict()["2.bias"].item() == 0.5
    assert exp.init_from["source"] == str(tmp_path / "w.ag")


def test_config_errors_are_reported_together_at_their_lines(tmp_path, capsys):
    cfg = _config(
        tmp_path,
        "init_from:\n  path: missing.pt\n  stict: false\n  checkpoint: middle\n"
        "  map: [a]\n  freeze: ['nothing.*']\n",
    )
    code, _, err = agrad(capsys, "train", cfg)
    assert code == 2
    at = [f"ft.yaml:{INIT_LINE + i}:3  init_from." for i in (2, 3, 4)]
    assert at[0] + "stict: unknown key 'stict'" in err and "'strict'" in err
    assert at[1] + "checkpoint: expected best or last, got 'middle'" in err
    assert at[2] + "map: expected a mapping of key prefixes" in err
    cfg = _config(tmp_path, "init_from: {path: missing.pt, freeze: ['nothing.*']}\n", "b.yaml")
    code, _, err = agrad(capsys, "train", cfg)
    assert code == 2
    assert f"init_from.path: no such file or run folder: {tmp_path / 'missing.pt'}" in err
    assert "init_from.freeze.0: 'nothing.*' matches no parameter" in err


def test_a_folder_that_is_not_a_run_and_a_run_without_the_checkpoint(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    cfg = _config(tmp_path, "init_from: {path: empty}\n")
    code, _, err = agrad(capsys, "train", cfg)
    assert code == 2 and "is a folder but not a run folder" in err
    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    (run / "config.resolved.yaml").write_text("name: x\n")
    cfg = _config(tmp_path, "init_from: {path: run, checkpoint: last}\n", "c.yaml")
    code, _, err = agrad(capsys, "train", cfg)
    assert code == 2 and "init_from.checkpoint:" in err and "has no checkpoints/last" in err


def test_fine_tuning_digits_from_a_run_beats_training_from_scratch(tmp_path, capsys):
    runs = str(tmp_path / "runs")
    base = os.path.join(REPO, "configs", "digits_mlp.yaml")
    code, _, err = agrad(capsys, "train", base, "--runs-dir", runs, "--set", "train.epochs=3")
    assert code == 0, err
    pretrained = _only_run(runs)
    head = """
name: digits-ft
data: {dataset: digits, val_split: 0.2}
model:
  - Flatten
  - {type: Linear, in_features: auto, out_features: 64}
  - ReLU
  - {type: Linear, in_features: auto, out_features: 10, name: head}
optimizer: {type: Adam, lr: 0.01}
train: {epochs: 1}
"""
    cfg = write(tmp_path / "ft.yaml", head)
    acc = {}
    for label, extra in [
        ("scratch", []),
        ("tuned", ["--set", f"init_from={{path: {pretrained}, strict: false, freeze: ['1.*']}}"]),
    ]:
        out_dir = str(tmp_path / label)
        code, _, err = agrad(capsys, "train", cfg, "--runs-dir", out_dir, *extra)
        assert code == 0, err
        with open(os.path.join(_only_run(out_dir), "metrics.jsonl"), encoding="utf-8") as f:
            (line,) = f.read().splitlines()
        acc[label] = json.loads(line)["val_acc"]
    assert acc["tuned"] > acc["scratch"] + 0.02, acc


def test_a_pytorch_state_dict_file_fine_tuned_with_a_frozen_body(tmp_path, capsys):
    from autogradcli import serialization

    if not hasattr(serialization, "save_torch"):
        pytest.skip("the PyTorch file reader is not on this branch yet")
    torch = pytest.importorskip("torch")
    net = torch.nn.Sequential(torch.nn.Linear(1, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    torch.save(net.state_dict(), str(tmp_path / "w.pt"))
    exp = _build(_config(tmp_path, "init_from: w.pt\n"))
    x = np.linspace(-1, 1, 5, dtype=np.float32).reshape(5, 1)
    want = net(torch.from_numpy(x)).detach().numpy()
    # torch.testing.assert_close's float32 tolerances: the two engines' tanh differ by ulps
    np.testing.assert_allclose(
        exp.model(ag.tensor(x)).detach().numpy(), want, rtol=1.3e-6, atol=1e-5
    )
    # a new head (the file's 2.* dropped), the body frozen: bit-identical after training
    cfg = _config(
        tmp_path, "init_from: {path: w.pt, map: {'2.': null}, strict: false, freeze: ['0.*']}\n"
    )
    runs = str(tmp_path / "runs")
    code, _, err = agrad(capsys, "train", cfg, "--runs-dir", runs, "--progress", "none")
    assert code == 0, err
    after = ag.load(os.path.join(_only_run(runs), "checkpoints", "last"))["model"]
    for k in ("0.weight", "0.bias"):
        np.testing.assert_array_equal(after[k].numpy(), net.state_dict()[k].numpy())
    assert not np.array_equal(after["2.weight"].numpy(), net.state_dict()["2.weight"].numpy())


def test_float64_weights_load_into_a_float32_model_as_float32(tmp_path):
    st = pytest.importorskip("safetensors.numpy")
    w = {k: v.astype(np.float64) / 3 for k, v in _weights().items()}
    st.save_file(w, str(tmp_path / "w.safetensors"))
    cfg = _config(tmp_path, "init_from: {path: w.safetensors, map: {'body.': '0.', 'fc.': '2.'}}\n")
    got = _params(_build(cfg).model)
    assert {v.dtype for v in got.values()} == {np.dtype(np.float32)}
    np.testing.assert_array_equal(got["0.weight"], w["body.weight"].astype(np.float32))


def test_a_device_run_loads_and_freezes_on_the_cpu_then_exports(strict_cuda, tmp_path, capsys):
    """On the strict CUDA stand-in: the weights are loaded before the model moves, frozen
    parameters stay frozen there, and ``agrad export`` of the device run works without one."""
    pytest.importorskip("safetensors")
    ag.save({"0.weight": ag.ones(8, 1), "0.bias": ag.zeros(8)}, str(tmp_path / "w.ag"))
    text = TINY_CONFIG.replace("name: tiny", "name: tiny\ndevice: cuda")
    cfg = write(
        tmp_path / "c.yaml", text + "init_from: {path: w.ag, strict: false, freeze: ['0.*']}\n"
    )
    runs = str(tmp_path / "runs")
    code, _, err = agrad(capsys, "train", cfg, "--runs-dir", runs, "--progress", "none")
    assert code == 0, err
    run = _only_run(runs)
    after = ag.load(os.path.join(run, "checkpoints", "last"))["model"]
    assert (after["0.weight"].cpu().numpy() == 1).all() and not after["0.bias"].cpu().numpy().any()
    out = str(tmp_path / "m.ag.safetensors")
    code, _, err = agrad(capsys, "export", run, "-o", out)
    assert code == 0, err
