"""safetensors through the ``safetensors`` package's numpy API: ``save_safetensors`` files read by
torch's safetensors loader into a torch model, ``load_safetensors``/``autogradcli.load`` of files
written by torch's, bfloat16 kept as bfloat16, and the error when the package is missing."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from lazy_torch import torch

import autogradcli as ag
from autogradcli.serialization import SerializationError, load_safetensors, save_safetensors


@pytest.fixture
def st_torch():
    pytest.importorskip("safetensors")
    return pytest.importorskip("safetensors.torch")


def test_our_file_feeds_a_torch_model_with_identical_weights(tmp_path, st_torch):
    net = ag.nn.Sequential(ag.nn.Linear(3, 4), ag.nn.BatchNorm1d(4))
    path = tmp_path / "w.safetensors"
    save_safetensors(net.state_dict(), path, metadata={"config": "mlp.yaml"})
    tnet = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    tnet.load_state_dict(st_torch.load_file(str(path)))
    for name, value in net.state_dict().items():
        np.testing.assert_array_equal(tnet.state_dict()[name].numpy(), value.numpy())
    from safetensors import safe_open

    with safe_open(str(path), framework="np") as f:
        assert f.metadata() == {"config": "mlp.yaml"}


def test_torch_written_file_loads_through_load_and_load_safetensors(tmp_path, st_torch):
    tensors = {
        "w": torch.randn(2, 3),
        "i": torch.tensor([1, -2], dtype=torch.int64),
        "h": torch.ones(2, dtype=torch.float16),
        "m": torch.tensor([True, False]),
    }
    path = tmp_path / "t.safetensors"
    st_torch.save_file(tensors, str(path))
    for out in (ag.load(path), load_safetensors(path)):
        assert set(out) == set(tensors)
        for name, t in tensors.items():
            assert out[name].dtype.name == str(t.dtype).removeprefix("torch.")
            np.testing.assert_array_equal(out[name].numpy(), t.numpy())


def test_bfloat16_stays_bfloat16(tmp_path, st_torch):
    path = tmp_path / "bf.safetensors"
    st_torch.save_file({"emb": torch.tensor([1.5, -3.0], dtype=torch.bfloat16)}, str(path))
    out = ag.load(path)
    assert out["emb"].dtype == ag.bfloat16 and out["emb"].tolist() == [1.5, -3.0]
    back = tmp_path / "back.safetensors"
    save_safetensors(out, back)
    assert torch.equal(st_torch.load_file(str(back))["emb"], torch.tensor([1.5, -3.0]).bfloat16())


def test_bad_input_and_files(tmp_path):
    pytest.importorskip("safetensors")
    with pytest.raises(TypeError, match="'n' is a int"):
        save_safetensors({"n": 3}, tmp_path / "x.safetensors")
    with pytest.raises(TypeError, match="metadata"):
        save_safetensors({"w": ag.ones(1)}, tmp_path / "x.safetensors", metadata={"a": 1})
    assert not (tmp_path / "x.safetensors").exists()
    path = tmp_path / "cut.safetensors"
    save_safetensors({"w": ag.ones(100)}, path)
    path.write_bytes(path.read_bytes()[:-8])  # header intact, data short
    with pytest.raises(SerializationError, match=r"cut\.safetensors"):
        ag.load(path)


def test_missing_package_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "safetensors.numpy", None)  # import fails
    with pytest.raises(ImportError, match=r"pip install 'autogradcli\[safetensors\]'"):
        save_safetensors({"w": ag.ones(1)}, tmp_path / "x.safetensors")
