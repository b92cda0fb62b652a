"""autogradcli.save / autogradcli.load: round trips, devices, atomic writes.

Hostile and broken files: test_serialization_errors.py."""

from __future__ import annotations

import io
import math
import os
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import autogradcli as ag
from autogradcli import backend
from autogradcli.serialization import SerializationError, archive
from autogradcli.tensor import dtype as dtypes


def roundtrip(obj, tmp_path, **kwargs):
    path = tmp_path / "ckpt.agc"
    ag.save(obj, path)
    return ag.load(path, **kwargs)


# ---------------------------------------------------------------- round trips
@pytest.mark.parametrize("dt", dtypes.ALL_DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3, 4)])
def test_every_dtype_and_shape_round_trips(tmp_path, dt, shape):
    data = np.asarray(np.random.default_rng(0).standard_normal(shape) * 50).astype(dt.np)
    t = ag.tensor(data, dtype=dt)
    out = roundtrip(t, tmp_path)
    assert isinstance(out, ag.Tensor)
    assert out.dtype == dt and tuple(out.shape) == shape and out.device == ag.device("cpu")
    np.testing.assert_array_equal(out._data, data)  # bfloat16 has no .numpy(), as in torch


def test_non_contiguous_tensor_round_trips(tmp_path):
    t = ag.randn(3, 4).t()
    out = roundtrip(t, tmp_path)
    np.testing.assert_array_equal(out.numpy(), t.numpy())


def test_nested_structure_round_trips(tmp_path):
    obj = {
        "od": OrderedDict([("z", 1), ("a", 2), ("m", 3)]),
        7: [1, -2, 2**100, -(2**80), 1.5, math.inf, -math.inf, True, False, None, "é"],
        "tuple": (1, (2, "x"), [3]),
        (1, "k"): "tuple key",
        "arr": np.arange(6, dtype=np.int16).reshape(2, 3),
        "scalar": np.float32(2.5),
        "dtype": ag.float16,
        "device": ag.device("cpu"),
        "empty": {},
    }
    out = roundtrip(obj, tmp_path)
    assert list(out["od"]) == ["z", "a", "m"]
    assert out[7][:6] == [1, -2, 2**100, -(2**80), 1.5, math.inf]
    assert out[7][6:] == [-math.inf, True, False, None, "é"]
    assert type(out[7][7]) is bool
    assert out["tuple"] == (1, (2, "x"), [3])
    assert out[(1, "k")] == "tuple key"
    np.testing.assert_array_equal(out["arr"], obj["arr"])
    assert out["arr"].dtype == np.int16
    assert out["scalar"] == np.float32(2.5) and out["scalar"].dtype == np.float32
    assert out["dtype"] is ag.float16 and out["device"] == ag.device("cpu")
    assert out["empty"] == {}
    nan = roundtrip(float("nan"), tmp_path)
    assert math.isnan(nan)


def test_requires_grad_is_restored_and_grad_is_not_saved(tmp_path):
    w = ag.randn(2, 2, requires_grad=True)
    (w * w).sum().backward()
    out = roundtrip({"w": w, "b": ag.zeros(2)}, tmp_path)
    assert out["w"].requires_grad and out["w"].is_leaf and out["w"].grad is None
    assert not out["b"].requires_grad


def test_parameter_comes_back_as_a_tensor_that_requires_grad(tmp_path):
    p = ag.nn.Parameter(ag.randn(3))
    out = roundtrip({"p": p}, tmp_path, weights_only=True)["p"]
    assert type(out) is ag.Tensor and out.requires_grad
    np.testing.assert_array_equal(out.detach().numpy(), p.detach().numpy())


def test_non_leaf_tensor_comes_back_as_a_leaf(tmp_path):
    w = ag.randn(3, requires_grad=True)
    out = roundtrip(w * 2, tmp_path)  # like torch: a leaf that requires grad, no history
    assert out.grad_fn is None and out.is_leaf and out.requires_grad
    np.testing.assert_allclose(out.detach().numpy(), (w * 2).detach().numpy())


def test_shared_tensor_is_stored_once_and_comes_back_shared(tmp_path):
    t = ag.randn(4)
    out = roundtrip({"a": t, "b": [t]}, tmp_path)
    assert out["a"] is out["b"][0]
    with zipfile.ZipFile(tmp_path / "ckpt.agc") as zf:
        assert sorted(zf.namelist()) == ["header.json", "tensors/0.npy"]


def test_optimizer_state_dict_keeps_int_keys(tmp_path):
    sd = {
        "state": {0: {"step": 3, "exp_avg": ag.randn(2)}, 1: {"step": 3, "exp_avg": ag.ones(1)}},
        "param_groups": [{"lr": 1e-3, "betas": (0.9, 0.999), "params": [0, 1]}],
    }
    out = roundtrip(sd, tmp_path)
    assert list(out["state"]) == [0, 1]
    assert out["param_groups"] == [{"lr": 1e-3, "betas": (0.9, 0.999), "params": [0, 1]}]
    np.testing.assert_array_equal(
        out["state"][0]["exp_avg"].numpy(), sd["state"][0]["exp_avg"].numpy()
    )


def test_rng_state_with_big_ints_restores_the_exact_stream(tmp_path):
    ag.manual_seed(1234)
    ag.randn(5)
    state = ag.get_rng_state()
    assert state["state"] >= 2**64 or state["inc"] >= 2**64  # PCG64 state is 128-bit
    ag.save({"rng": state}, tmp_path / "rng.agc")
    expected = ag.randn(8).numpy().copy()
    ag.manual_seed(99)
    ag.randn(3)
    restored = ag.load(tmp_path / "rng.agc")["rng"]
    assert restored == state
    ag.set_rng_state(restored)
    np.testing.assert_array_equal(ag.randn(8).numpy(), expected)


def test_file_like_objects(tmp_path):
    buf = io.BytesIO()
    ag.save({"x": ag.arange(3)}, buf)
    buf.seek(0)
    out = ag.load(buf)
    assert out["x"].tolist() == [0, 1, 2]


def test_unsupported_object_names_where_it_is():
    with pytest.raises(TypeError, match=r"object at obj\['model'\]\[1\]"):
        ag.save({"model": [1, object()]}, io.BytesIO())
    with pytest.raises(TypeError, match="dict key"):
        ag.save({frozenset(): 1}, io.BytesIO())
    with pytest.raises(TypeError, match="pickle"):
        ag.save(np.array([None]), io.BytesIO())


# ---------------------------------------------------------------- devices
class FakeCudaArray(np.ndarray):
    """A host array that the backend treats as a CUDA array (a stand-in for cupy)."""


class FakeCupy:
    __name__ = "fakecupy"

    @staticmethod
    def asarray(x):
        return np.array(x, copy=True).view(FakeCudaArray)

    @staticmethod
    def asnumpy(x):
        return np.array(x, copy=True).view(np.ndarray)


@pytest.fixture
def fake_cuda():
    backend.use_cuda_module(FakeCupy, FakeCudaArray)
    yield
    backend.use_cuda_module(None)


def test_cuda_tensor_restores_on_cuda_by_default(tmp_path, fake_cuda):
    t = ag.tensor(FakeCupy.asarray([1.0, 2.0]))
    assert t.device == ag.device("cuda:0")
    out = roundtrip(t, tmp_path)
    assert out.device == ag.device("cuda:0") and type(out._data) is FakeCudaArray
    assert out.tolist() == [1.0, 2.0]


@pytest.mark.parametrize("loc", ["cpu", ag.device("cpu"), {"cuda:0": "cpu"}, lambda d: "cpu"])
def test_map_location_sends_cuda_tensors_to_cpu(tmp_path, fake_cuda, loc):
    t = ag.tensor(FakeCupy.asarray([[1, 2]]))
    out = roundtrip({"t": t}, tmp_path, map_location=loc)
    assert out["t"].device == ag.device("cpu") and type(out["t"]._data) is np.ndarray
    assert out["t"].tolist() == [[1, 2]]


def test_cuda_checkpoint_without_cuda_asks_for_map_location(tmp_path):
    backend.use_cuda_module(FakeCupy, FakeCudaArray)
    try:
        ag.save({"t": ag.tensor(FakeCupy.asarray([1.0]))}, tmp_path / "gpu.agc")
    finally:
        backend.use_cuda_module(None)
    saved_import = backend.registry.cuda_module
    try:
        backend.registry.cuda_module = _no_cuda
        with pytest.raises(SerializationError, match=r"gpu\.agc.*map_location='cpu'"):
            ag.load(tmp_path / "gpu.agc")
    finally:
        backend.registry.cuda_module = saved_import
    assert ag.load(tmp_path / "gpu.agc", map_location="cpu")["t"].tolist() == [1.0]


def _no_cuda():
    raise RuntimeError("a CUDA tensor was requested but cupy is not installed")


# ---------------------------------------------------------------- atomic writes
def test_crash_mid_write_keeps_the_previous_file_and_leaves_no_temp(tmp_path, monkeypatch):
    path = tmp_path / "model.agc"
    ag.save({"version": "old", "w": ag.ones(3)}, path)
    before = path.read_bytes()
    real_write = archive._write_array
    calls = []

    def crashing_write(zf, name, arr):
        calls.append(name)
        if len(calls) % 2 == 0:
            raise KeyboardInterrupt("simulated crash mid-write")
        real_write(zf, name, arr)

    monkeypatch.setattr(archive, "_write_array", crashing_write)
    with pytest.raises(KeyboardInterrupt):
        ag.save({"version": "new", "a": ag.zeros(100), "b": ag.zeros(100)}, path)
    assert path.read_bytes() == before
    assert ag.load(path)["version"] == "old"
    assert sorted(os.listdir(tmp_path)) == ["model.agc"]

    with pytest.raises(KeyboardInterrupt):
        ag.save({"a": ag.zeros(1), "b": ag.zeros(1)}, tmp_path / "fresh.agc")
    assert sorted(os.listdir(tmp_path)) == ["model.agc"]


def test_overwrite_replaces_and_keeps_permissions(tmp_path):
    path = tmp_path / "m.agc"
    ag.save(1, path)
    os.chmod(path, 0o640)
    ag.save(2, path)
    assert ag.load(path) == 2
    assert os.stat(path).st_mode & 0o777 == 0o640
    assert os.listdir(tmp_path) == ["m.agc"]
