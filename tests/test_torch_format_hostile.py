"""Hostile and broken PyTorch-layout files: refused by autogradcli.load with a clear error before
anything runs, is allocated or inflated (no torch needed: the pickles are written op by op)."""

from __future__ import annotations

import io
import os
import pickle
import struct
import zipfile

import pytest

import autogradcli as ag
from autogradcli.serialization import SerializationError, save_torch
from autogradcli.serialization.torch_legacy import MAGIC_NUMBER, PROTOCOL_VERSION


# ---------------------------------------------------------------- a tiny pickle writer
def glob(module: str, name: str) -> bytes:
    return pickle.GLOBAL + f"{module}\n{name}\n".encode()


def val(x) -> bytes:
    if isinstance(x, bytes):  # raw opcodes
        return x
    if isinstance(x, bool):
        return pickle.NEWTRUE if x else pickle.NEWFALSE
    if isinstance(x, int):
        raw = pickle.encode_long(x)
        return pickle.LONG1 + bytes([len(raw)]) + raw
    if isinstance(x, str):
        raw = x.encode()
        return pickle.BINUNICODE + struct.pack("<I", len(raw)) + raw
    if isinstance(x, tuple):
        return pickle.MARK + b"".join(val(v) for v in x) + pickle.TUPLE
    if isinstance(x, dict):
        return (
            pickle.EMPTY_DICT
            + pickle.MARK
            + b"".join(val(k) + val(v) for k, v in x.items())
            + pickle.SETITEMS
        )
    raise TypeError(x)


def call(func: bytes, *args) -> bytes:
    return func + val(tuple(args)) + pickle.REDUCE


def tensor(key="0", numel=4, size=(4,), stride=(1,), offset=0, stype="FloatStorage") -> bytes:
    pid = val(("storage", glob("torch", stype), key, "cpu", numel)) + pickle.BINPERSID
    return call(
        glob("torch._utils", "_rebuild_tensor_v2"), pid, offset, size, stride, False, val({})
    )


def pkl(body: bytes) -> bytes:
    return pickle.PROTO + b"\x02" + body + pickle.STOP


def torch_zip(path, data_pkl: bytes, members=None, deflate=False):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED) as zf:
        zf.writestr("archive/data.pkl", data_pkl)
        zf.writestr("archive/byteorder", "little")
        for name, data in (members or {}).items():
            zf.writestr(f"archive/data/{name}", data)
        zf.writestr("archive/version", "3\n")
    return path


def legacy(path, data_pkl: bytes, keys=(), storages=b""):
    head = b"".join(
        pickle.dumps(v, protocol=2)
        for v in (MAGIC_NUMBER, PROTOCOL_VERSION, {"protocol_version": 1001, "little_endian": True})
    )
    path.write_bytes(head + data_pkl + pickle.dumps(list(keys), protocol=2) + storages)
    return path


def refused(path, *patterns, cls=SerializationError) -> str:
    with pytest.raises(cls) as info:
        ag.load(path)
    message = str(info.value)
    assert path.name in message
    for pattern in patterns:
        assert pattern in message, message
    return message


class Payload:
    """Unpickling this creates a marker file: proof that code ran."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


# ---------------------------------------------------------------- the writer above is sound
def test_the_hand_written_pickle_loads(tmp_path):
    path = torch_zip(
        tmp_path / "ok.pt", pkl(val({"w": tensor()})), {"0": struct.pack("<4f", 1, 2, 3, 4)}
    )
    assert ag.load(path)["w"].tolist() == [1.0, 2.0, 3.0, 4.0]


# ---------------------------------------------------------------- code in the pickle
@pytest.mark.parametrize("layout", ["zip", "legacy"])
def test_os_system_is_refused_by_name_and_never_runs(tmp_path, layout):
    marker = tmp_path / "PWNED"
    payload = pickle.dumps({"w": Payload(str(marker))}, protocol=2)
    path = tmp_path / "evil.pt"
    torch_zip(path, payload) if layout == "zip" else legacy(path, payload)
    message = refused(
        path,
        "Weights only load failed",
        f"GLOBAL {os.system.__module__}.system",
        "weights_only",
        cls=pickle.UnpicklingError,
    )
    assert "add_safe_globals" in message
    assert not marker.exists()
    # allow-listing other classes changes nothing
    with ag.serialization.safe_globals([ag.nn.Linear]):
        refused(path, "Unsupported global")
    assert not marker.exists()


def test_unknown_globals_reduce_build_and_newobj_are_refused(tmp_path):
    cases = {
        "defaultdict": (call(glob("collections", "defaultdict")), "GLOBAL collections.defaultdict"),
        "getattr": (call(glob("builtins", "getattr"), "x", "y"), "GLOBAL builtins.getattr"),
        "build_set": (
            call(glob("builtins", "set"), ()) + val({"a": 1}) + pickle.BUILD,
            "Can only build",
        ),
        "bytearray_bomb": (call(glob("builtins", "bytearray"), 10**12), "bytearray"),
        "codec": (call(glob("_codecs", "encode"), "x", "rot13"), "rot13"),
        "tensor_ctor": (call(glob("torch", "Tensor"), 10**12), "unrecognized function"),
        "newobj": (glob("builtins", "complex") + val((1, 2)) + pickle.NEWOBJ, "Can only create"),
        "not_a_storage": (
            call(glob("torch._utils", "_rebuild_tensor_v2"), "s", 0, (1,), (1,)),
            "not a storage",
        ),
    }
    for name, (body, pattern) in cases.items():
        refused(torch_zip(tmp_path / f"{name}.pt", pkl(body)), pattern)


def test_a_plain_pickle_is_not_a_pytorch_file(tmp_path):
    marker = tmp_path / "PWNED"
    path = tmp_path / "raw.pkl"
    path.write_bytes(pickle.dumps({"w": Payload(str(marker))}, protocol=2))
    refused(path, "pickle", "not a PyTorch file")
    assert not marker.exists()


def test_a_tar_without_pytorch_members_is_refused(tmp_path):
    import tarfile

    path = tmp_path / "old.pt"
    with tarfile.open(path, "w") as tar:
        info = tarfile.TarInfo("sys_info")
        tar.addfile(info, io.BytesIO(b""))
    refused(path, "no 'storages' member")


# ---------------------------------------------------------------- storages that lie
def test_storages_that_lie_about_their_size_or_are_missing(tmp_path):
    four = {"0": struct.pack("<4f", 1, 2, 3, 4)}
    refused(torch_zip(tmp_path / "missing.pt", pkl(tensor(key="7")), four), "'7'", "archive/data/7")
    huge = pkl(tensor(numel=10**12, size=(10**12,)))
    refused(torch_zip(tmp_path / "huge.pt", huge, four), "1000000000000 elements")
    outside = pkl(tensor(size=(3,), stride=(2,)))  # needs elements 0, 2, 4 of 4
    refused(torch_zip(tmp_path / "outside.pt", outside, four), "needs 5 elements")
    refused(torch_zip(tmp_path / "offset.pt", pkl(tensor(offset=1)), four), "needs 5 elements")
    broadcast = pkl(tensor(size=(10**15,), stride=(0,)))  # one element, seen 10**15 times
    refused(torch_zip(tmp_path / "broadcast.pt", broadcast, four), "more than this process may use")
    negative = pkl(tensor(stride=(-1,)))
    refused(torch_zip(tmp_path / "negative.pt", negative, four), "invalid stride")
    # just inside: the last element is element 3
    fits = pkl(tensor(size=(2,), stride=(3,)))
    assert ag.load(torch_zip(tmp_path / "fits.pt", fits, four)).tolist() == [1.0, 4.0]


def test_legacy_storages_that_lie(tmp_path):
    body = pkl(val({"w": tensor(key="k")}))
    data = struct.pack("<q", 4) + struct.pack("<4f", 1, 2, 3, 4)
    assert ag.load(legacy(tmp_path / "ok.pt", body, ["k"], data))["w"].tolist() == [1, 2, 3, 4]
    refused(legacy(tmp_path / "short.pt", body, ["k"], data[:-1]), "holds only 15 bytes")
    refused(legacy(tmp_path / "count.pt", body, ["k"], struct.pack("<q", 5) + data[8:]), "holds 5")
    refused(legacy(tmp_path / "unnamed.pt", body, ["x"], data), "never names")
    refused(legacy(tmp_path / "nodata.pt", body, [], b""), "has no data")


def test_truncated_and_bomb_archives(tmp_path):
    path = tmp_path / "cut.pt"
    save_torch({"w": ag.randn(64, 64)}, path)
    data = path.read_bytes()
    for keep in (len(data) // 2, len(data) - 30, 100):
        path.write_bytes(data[:keep])
        refused(path)
    # 8 MiB of zeros deflated ~1000x: refused before it is inflated
    zeros = 2 * 2**20
    bomb = torch_zip(
        tmp_path / "bomb.pt",
        pkl(tensor(numel=zeros, size=(zeros,))),
        {"0": bytes(4 * zeros)},
        deflate=True,
    )
    refused(bomb, "zip bomb")
