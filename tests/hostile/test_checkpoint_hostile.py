"""Hostile checkpoint files: each must be refused with a ``SerializationError`` naming the file
and what is wrong, before any large allocation, never a MemoryError, AttributeError or a pickle
that runs. In process (the loader) and through ``agrad train --resume`` (exit 2)."""

from __future__ import annotations

import json
import os
import shutil
import zipfile

import numpy as np
import pytest
from hostile_harness import GOOD_CONFIG, assert_refused, run_agrad, write

import autogradcli as ag
from autogradcli.serialization.format import SerializationError


def _good(path) -> str:
    ag.save({"w": ag.ones(2, 3), "step": 7, "name": "x"}, str(path))
    return str(path)


def _rewrite(path: str, header=None, members: dict | None = None, deflate: bool = False) -> None:
    """Rewrite the archive at ``path`` with a changed header and/or members."""
    with zipfile.ZipFile(path) as z:
        items = {n: z.read(n) for n in z.namelist()}
    if header is not None:
        items["header.json"] = json.dumps(header).encode()
    items.update(members or {})
    mode = zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED
    with zipfile.ZipFile(path, "w", compression=mode) as z:
        for n, data in items.items():
            z.writestr(n, data)


def _header(path: str) -> dict:
    with zipfile.ZipFile(path) as z:
        return json.loads(z.read("header.json"))


def _array_ref(header: dict) -> dict:
    return header["root"]["items"][0][1]


def _refused(path: str, *words: str) -> str:
    with pytest.raises(SerializationError) as info:
        ag.load(path)
    msg = str(info.value)
    assert os.path.basename(path) in msg, msg
    for w in words:
        assert w in msg, msg
    return msg


def test_array_claiming_a_trillion_elements(tmp_path):
    path = _good(tmp_path / "c.agc")
    h = _header(path)
    _array_ref(h)["shape"] = [10**6, 10**6]
    _rewrite(path, h)
    _refused(path, "3.6 TiB", "refusing to read it")


def test_array_claiming_more_bytes_than_its_member(tmp_path):
    """The member holds 24 data bytes plus its .npy header (~128): a claim of 800 is refused
    from the zip directory alone."""
    path = _good(tmp_path / "c.agc")
    h = _header(path)
    _array_ref(h)["shape"] = [2, 100]
    _rewrite(path, h)
    _refused(path, "should hold 800 bytes")


def test_array_one_element_more_than_stored(tmp_path):
    """Just outside: (2, 4) is 32 bytes, within the member's size with its .npy header, so the
    .npy header's own shape (2, 3) is what refuses it."""
    path = _good(tmp_path / "c.agc")
    h = _header(path)
    _array_ref(h)["shape"] = [2, 4]
    _rewrite(path, h)
    _refused(path, "holds <f4 [2, 3] but the header says <f4 [2, 4]")


def test_npy_header_disagreeing_with_the_json_header(tmp_path):
    """Just inside the size check (same byte count) but another shape: refused by the .npy
    header check before numpy allocates."""
    path = _good(tmp_path / "c.agc")
    h = _header(path)
    _array_ref(h)["shape"] = [3, 2]
    _rewrite(path, h)
    _refused(path, "holds <f4 [2, 3] but the header says <f4 [3, 2]")


def test_zip_bomb_is_refused_before_inflating(tmp_path):
    """A small archive whose member inflates to 256 MiB while the header claims 24 bytes."""
    path = _good(tmp_path / "c.agc")
    h = _header(path)
    name = _array_ref(h)["file"]
    zeros = bytes(1 << 20)
    with zipfile.ZipFile(path) as z:
        items = {n: z.read(n) for n in z.namelist() if n != name}
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for n, data in items.items():
            z.writestr(n, data)
        with z.open(name, "w") as member:
            for _ in range(256):
                member.write(zeros)
    assert os.path.getsize(path) < 2 << 20  # the bomb is small on disk
    _refused(path, "says it holds 256.0 MiB", "refusing to read it")


def test_member_within_npy_overhead_is_read(tmp_path):
    """The size rule's other side: a member a few bytes over its data (its .npy header) loads."""
    path = _good(tmp_path / "c.agc")
    out = ag.load(path)
    assert out["step"] == 7 and tuple(out["w"].shape) == (2, 3)


def test_device_banana(tmp_path):
    path = _good(tmp_path / "c.agc")
    h = _header(path)
    _array_ref(h)["device"] = "banana"
    _rewrite(path, h)
    _refused(path, "unknown device 'banana'")


@pytest.mark.parametrize(
    "dtype, words",
    [("|O", "would need pickle"), ("<V0", "holds nothing"), ("banana", "unknown dtype")],
)
def test_bad_dtypes(tmp_path, dtype, words):
    path = _good(tmp_path / "c.agc")
    h = _header(path)
    _array_ref(h)["dtype"] = dtype
    _rewrite(path, h)
    _refused(path, words)


@pytest.mark.parametrize("shape", [[-1, 3], [2.0, 3], "big", None, [True, 3]])
def test_bad_shapes(tmp_path, shape):
    path = _good(tmp_path / "c.agc")
    h = _header(path)
    _array_ref(h)["shape"] = shape
    _rewrite(path, h)
    _refused(path, "invalid shape")


def test_missing_member(tmp_path):
    path = _good(tmp_path / "c.agc")
    h = _header(path)
    _array_ref(h)["file"] = "tensors/99.npy"
    _rewrite(path, h)
    _refused(path, "tensors/99.npy, which is missing")


def test_deeply_nested_header(tmp_path):
    path = _good(tmp_path / "c.agc")
    text = '{"format": "autogradcli", "version": 1, "root": ' + "[" * 10**5 + "]" * 10**5 + "}"
    _rewrite(path, None, {"header.json": text.encode()})
    _refused(path, "corrupted")


def test_truncated_member(tmp_path):
    path = _good(tmp_path / "c.agc")
    h = _header(path)
    name = _array_ref(h)["file"]
    with zipfile.ZipFile(path) as z:
        data = z.read(name)
    arr = np.ones((2, 3), np.float32)
    assert len(data) > arr.nbytes
    _rewrite(path, None, {name: data[:-4]})
    _refused(path, "truncated")


def test_pickle_object_array_inside(tmp_path):
    """An .npy member with dtype object (which numpy would unpickle) is never loaded."""
    path = _good(tmp_path / "c.agc")
    h = _header(path)
    name = _array_ref(h)["file"]
    import io

    buf = io.BytesIO()
    np.save(buf, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    _rewrite(path, None, {name: buf.getvalue()})
    _refused(path)


# ------------------------------------------------------------------ through agrad --resume
@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("run")
    config = write(str(root / "c.yaml"), GOOD_CONFIG)
    res = run_agrad("train", config, cwd=str(root))
    assert res.code == 0, res.text
    (run,) = os.listdir(root / "runs")
    return str(root / "runs" / run)


def _copy(run: str, tmp_path) -> str:
    dst = str(tmp_path / "run")
    shutil.copytree(run, dst)
    return dst


@pytest.mark.parametrize(
    "damage, words",
    [
        ("junk", "not a zip archive"),
        ("empty", "is empty"),
        ("pickle", "pickle"),
        ("huge-shape", "refusing to read it"),
        ("banana", "unknown device 'banana'"),
    ],
)
def test_resume_from_a_hostile_last(finished_run, tmp_path, damage, words):
    run = _copy(finished_run, tmp_path)
    last = os.path.join(run, "checkpoints", "last")
    if damage == "junk":
        write(last, "junk")
    elif damage == "empty":
        write(last, b"")
    elif damage == "pickle":
        write(last, b"\x80\x04\x95" + b"cos\nsystem\n(S'echo pwned'\ntR.")
    else:
        text = json.dumps(_header(last))
        if damage == "huge-shape":
            text = text.replace('"shape": [', '"shape": [1000000, 1000000, ', 1)
        else:
            text = text.replace('"device": "cpu"', '"device": "banana"', 1)
        _rewrite(last, json.loads(text))
    with open(last, "rb") as f:
        before = f.read()
    res = run_agrad("train", "--resume", run, cwd=str(tmp_path))
    assert_refused(res, "checkpoints/last", words)
    with open(last, "rb") as f:
        assert f.read() == before  # nothing was overwritten
