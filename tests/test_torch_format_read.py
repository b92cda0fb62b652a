"""autogradcli.load of files written by the real ``torch.save`` (zip and legacy layouts): state
dicts of real models give the same outputs, every dtype, views and shared storages come back as
views, optimizer state dicts and nested containers, bfloat16 kept bit for bit."""

from __future__ import annotations

import warnings
from collections import OrderedDict

import numpy as np
import pytest
from lazy_torch import torch

import autogradcli as ag

LAYOUTS = pytest.mark.parametrize("legacy", [False, True], ids=["zip", "legacy"])


def save(obj, path, legacy):
    torch.save(obj, path, _use_new_zipfile_serialization=not legacy)
    return path


def loaded(path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing to warn about
        return ag.load(path, **kw)


@LAYOUTS
def test_cnn_state_dict_gives_the_same_outputs(tmp_path, legacy):
    torch.manual_seed(0)

    def net(m):
        return m.nn.Sequential(
            m.nn.Conv2d(2, 3, 3),
            m.nn.BatchNorm2d(3),
            m.nn.ReLU(),
            m.nn.Flatten(),
            m.nn.Linear(12, 2),
        )

    tnet = net(torch)
    tnet.train()
    tnet(torch.randn(4, 2, 4, 4))  # running stats move away from their init
    tnet.eval()
    sd = loaded(save(tnet.state_dict(), tmp_path / "w.pt", legacy))
    assert isinstance(sd, OrderedDict) and list(sd) == list(tnet.state_dict())
    assert sd._metadata == tnet.state_dict()._metadata
    assert sd["1.num_batches_tracked"].dtype == ag.int64
    anet = net(ag)
    anet.load_state_dict(sd)
    anet.eval()
    x = np.random.default_rng(0).standard_normal((5, 2, 4, 4)).astype(np.float32)
    want = tnet(torch.from_numpy(x)).detach().numpy()
    got = anet(ag.tensor(x)).detach().numpy()
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@LAYOUTS
def test_every_dtype_and_parameters(tmp_path, legacy):
    values = {
        "float32": torch.randn(2, 3),
        "float64": torch.randn(3, dtype=torch.float64),
        "float16": torch.randn(3).half(),
        "int8": torch.tensor([-128, 0, 127], dtype=torch.int8),
        "int16": torch.tensor([-(2**15), 2**15 - 1], dtype=torch.int16),
        "int32": torch.tensor([-(2**31), 2**31 - 1], dtype=torch.int32),
        "int64": torch.tensor([-(2**63), 2**63 - 1]),
        "uint8": torch.tensor([0, 255], dtype=torch.uint8),
        "bool": torch.tensor([True, False]),
        "scalar": torch.tensor(2.5),
        "empty": torch.zeros(0, 4),
    }
    obj = {
        **values,
        "param": torch.nn.Parameter(torch.ones(2)),
        "frozen": torch.ones(2).requires_grad_(),
    }
    out = loaded(save(obj, tmp_path / "d.pt", legacy))
    for name, t in values.items():
        assert out[name].dtype.name == str(t.dtype).removeprefix("torch."), name
        assert out[name].shape == tuple(t.shape)
        np.testing.assert_array_equal(out[name].numpy(), t.numpy())
    assert isinstance(out["param"], ag.nn.Parameter) and out["param"].requires_grad
    assert not isinstance(out["frozen"], ag.nn.Parameter) and out["frozen"].requires_grad
    assert not out["float32"].requires_grad


@LAYOUTS
def test_views_and_shared_storage_stay_shared(tmp_path, legacy):
    base = torch.arange(24.0).reshape(4, 6)
    obj = {"base": base, "cols": base[1:, ::2], "t": base.t(), "again": base, "row": base[2]}
    out = loaded(save(obj, tmp_path / "v.pt", legacy))
    for name in ("cols", "t", "row"):
        np.testing.assert_array_equal(out[name].numpy(), obj[name].numpy())
    assert out["again"] is out["base"]
    out["base"][2, 2] = -1.0  # one storage: every view sees the write, as in torch
    assert out["cols"][1, 1].item() == -1.0 and out["t"][2, 2].item() == -1.0
    assert out["row"][2].item() == -1.0


@LAYOUTS
def test_optimizer_state_and_nested_containers(tmp_path, legacy):
    # Adam's state_dict as torch.optim writes it (built by hand: torch.optim costs 4 s to import)
    want = {
        "state": {
            i: {"step": torch.tensor(1.0), "exp_avg": torch.randn(*s), "exp_avg_sq": torch.rand(*s)}
            for i, s in enumerate([(2, 3), (2,)])
        },
        "param_groups": [
            {
                "lr": 0.01,
                "betas": (0.9, 0.999),
                "eps": 1e-08,
                "weight_decay": 0,
                "amsgrad": False,
                "maximize": False,
                "foreach": None,
                "capturable": False,
                "differentiable": False,
                "fused": None,
                "params": [0, 1],
            }
        ],
    }
    nested = {
        "optimizer": want,
        "epoch": 3,
        "misc": [1, 2.5, None, "text", b"\x00\xffbytes", (True, {4: "four"}), {1, 2}, 1 + 2j],
        "meta": (torch.float16, torch.device("cpu"), torch.Size([2, 3])),
        "big": 2**80,
    }
    out = loaded(save(nested, tmp_path / "o.pt", legacy))
    assert out["optimizer"]["param_groups"] == want["param_groups"]
    for i in (0, 1):
        for key in ("step", "exp_avg", "exp_avg_sq"):
            got, expected = out["optimizer"]["state"][i][key], want["state"][i][key]
            np.testing.assert_array_equal(got.numpy(), expected.numpy())
    assert out["epoch"] == 3 and out["big"] == 2**80
    assert out["misc"] == nested["misc"]
    assert out["meta"] == (ag.float16, ag.device("cpu"), (2, 3))
    assert isinstance(out["meta"][2], ag.Size)
    # the optimizer state feeds autogradcli's Adam
    amodel = ag.nn.Linear(3, 2)
    aopt = ag.optim.Adam(amodel.parameters(), lr=0.01)
    aopt.load_state_dict(out["optimizer"])
    state = aopt.state_dict()["state"][0]
    np.testing.assert_array_equal(state["exp_avg"].numpy(), want["state"][0]["exp_avg"].numpy())


@LAYOUTS
def test_bfloat16_stays_bfloat16_bit_for_bit(tmp_path, legacy):
    obj = {"w": torch.tensor([1.5, -2.25, 3e38], dtype=torch.bfloat16), "b": torch.ones(2)}
    path = save(obj, tmp_path / "bf.pt", legacy)
    out = loaded(path)  # no warning: autogradcli has bfloat16
    assert out["w"].dtype == ag.bfloat16 and out["b"].dtype == ag.float32
    assert out["w"].tolist() == obj["w"].tolist()
    back = tmp_path / "back.pt"
    ag.serialization.save_torch(out, back)
    assert torch.equal(torch.load(back)["w"], obj["w"])


def test_file_objects_and_map_location(tmp_path):
    import io

    buf = io.BytesIO()
    torch.save({"w": torch.ones(2)}, buf)
    buf.seek(0)
    out = ag.load(buf, map_location="cpu", weights_only=True, mmap=None)
    assert out["w"].device == ag.device("cpu") and out["w"].tolist() == [1.0, 1.0]


@pytest.mark.parametrize("family", ["lstm", "transformer"])
def test_sequence_model_state_dicts_give_the_same_outputs(tmp_path, family):
    torch.manual_seed(0)

    def build(m):
        if family == "lstm":
            return m.nn.LSTM(3, 4, num_layers=2, batch_first=True)
        return m.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)

    tnet = build(torch).eval()
    torch.save(tnet.state_dict(), tmp_path / "seq.pt")
    anet = build(ag).eval()
    anet.load_state_dict(loaded(tmp_path / "seq.pt"))
    x = np.random.default_rng(1).standard_normal((2, 5, 3 if family == "lstm" else 8))
    x = x.astype(np.float32)
    want, got = tnet(torch.from_numpy(x)), anet(ag.tensor(x))
    if family == "lstm":
        want, got = want[0], got[0]
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_mmap_maps_storages_copy_on_write(tmp_path):
    import mmap

    base = torch.arange(10.0)
    path = tmp_path / "m.pt"
    torch.save({"w": base, "v": base[2:5], "empty": torch.zeros(0)}, path)
    before = path.read_bytes()
    out = ag.load(path, mmap=True)
    arr = out["w"]._data
    while arr is not None and not isinstance(arr, mmap.mmap):
        arr = getattr(arr, "base", None)
    assert isinstance(arr, mmap.mmap)  # mapped from the file, not read
    out["w"][3] = 100.0
    assert out["v"].tolist() == [2.0, 100.0, 4.0]  # still one storage
    assert path.read_bytes() == before  # copy-on-write: the file is untouched
    assert out["empty"].shape == (0,)


def test_complex_tensors_load_with_their_dtype(tmp_path):
    z = torch.tensor([1 + 2j, -3j], dtype=torch.complex64)
    torch.save({"z": z, "w": z.to(torch.complex128)}, tmp_path / "z.pt")
    out = ag.load(tmp_path / "z.pt")
    assert out["z"].dtype is ag.complex64 and out["w"].dtype is ag.complex128
    assert out["z"].tolist() == z.tolist() == out["w"].tolist()


@LAYOUTS
@pytest.mark.parametrize("protocol", [4, 5])
def test_newer_pickle_protocols(tmp_path, legacy, protocol):
    obj = {"w": torch.arange(3.0), "meta": [torch.float16, {1, 2}]}
    path = tmp_path / "p.pt"
    torch.save(obj, path, pickle_protocol=protocol, _use_new_zipfile_serialization=not legacy)
    out = loaded(path)
    assert out["w"].tolist() == [0.0, 1.0, 2.0] and out["meta"] == [ag.float16, {1, 2}]
