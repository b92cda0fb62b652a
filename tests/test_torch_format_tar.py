"""PyTorch's tar format (``torch.save`` before 0.4), which today's torch still reads with
``weights_only=False`` but no longer writes: files are built here record by record, checked with
``torch.load`` itself, and read by autogradcli with its allow-list."""

from __future__ import annotations

import io
import pickle
import struct
import tarfile

import numpy as np
import pytest
from lazy_torch import torch
from test_torch_format_hostile import Payload, glob, pkl, refused, val

import autogradcli as ag


def tar_file(path, storages, tensors, body: bytes, views=()):
    """``storages``: (key, type, values); ``tensors``: (key, storage key, size, stride, offset)."""
    st = pickle.dumps(len(storages), protocol=2)
    for key, stype, values in storages:
        raw = np.asarray(values, dtype={"FloatStorage": "<f4", "LongStorage": "<i8"}[stype])
        st += pkl(val((key, "cpu", glob("torch", stype)))) + struct.pack("<q", raw.size)
        st += raw.tobytes()
    st += pickle.dumps(list(views), protocol=2)
    ts = pickle.dumps(len(tensors), protocol=2)
    for key, skey, size, stride, offset in tensors:
        ts += pkl(val((key, skey, glob("torch", "FloatTensor")))) + struct.pack("<i", len(size))
        ts += b"\0" * 4 + struct.pack(f"<{2 * len(size) + 1}q", *size, *stride, offset)
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in (("sys_info", b""), ("storages", st), ("tensors", ts), ("pickle", body)):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def pid(key) -> bytes:
    return val(key) + pickle.BINPERSID


def test_tar_files_read_as_torch_reads_them(tmp_path):
    path = tar_file(
        tmp_path / "old.pt",
        storages=[(1, "FloatStorage", range(12))],
        tensors=[(10, 1, (3, 4), (4, 1), 0), (11, 1, (2, 2), (1, 4), 5), (12, 2, (3,), (1,), 1)],
        views=[(2, 1, 4, 4)],  # storage 2: elements 4..7 of storage 1
        body=pkl(val({"w": pid(10), "t": pid(11), "row": pid(12), "epoch": 7})),
    )
    want = torch.load(path, weights_only=False)  # the file is what torch's reader expects
    got = ag.load(path)  # read with the allow-list
    assert set(got) == set(want) and got["epoch"] == 7
    for name in ("w", "t", "row"):
        np.testing.assert_array_equal(got[name].numpy(), want[name].numpy())
    got["w"][1, 1] = -1.0  # element 5: one storage, shared by the view storage too
    assert got["t"][0, 0].item() == -1.0 and got["row"][0].item() == -1.0


def test_tar_files_that_lie_or_run_code_are_refused(tmp_path):
    storages = [(1, "FloatStorage", range(4))]
    marker = tmp_path / "PWNED"
    evil = pickle.dumps({"w": Payload(str(marker))}, protocol=2)
    refused(tar_file(tmp_path / "evil.pt", storages, [], evil), "Unsupported global")
    assert not marker.exists()
    outside = [(10, 1, (3,), (2,), 0)]
    refused(tar_file(tmp_path / "out.pt", storages, outside, pkl(pid(10))), "needs 5 elements")
    refused(tar_file(tmp_path / "key.pt", storages, [], pkl(pid(99))), "not stored")
    view = [(2, 1, 2, 3)]
    refused(tar_file(tmp_path / "view.pt", storages, [], pkl(val(1)), view), "reaches outside")
    path = tar_file(tmp_path / "cut.pt", storages, [(10, 1, (4,), (1,), 0)], pkl(pid(10)))
    data = path.read_bytes()
    cut = data.index(struct.pack("<4f", 0, 1, 2, 3)) + 8
    path.write_bytes(data[:cut] + bytes(len(data) - cut))  # data and records after it zeroed
    with pytest.raises(ag.serialization.SerializationError, match=r"cut\.pt"):
        ag.load(path)
