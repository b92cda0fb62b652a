"""autogradcli.load on hostile and broken files: truncated, corrupted, foreign, bad headers,
pickles (rejected without running)."""

from __future__ import annotations

import io
import json
import pickle
import zipfile

import numpy as np
import pytest

import autogradcli as ag
from autogradcli.serialization import SerializationError


def load_error(path) -> str:
    with pytest.raises(SerializationError) as info:
        ag.load(path)
    assert str(path.name) in str(info.value)
    return str(info.value)


def test_truncated_file(tmp_path):
    path = tmp_path / "cut.agc"
    ag.save({"w": ag.randn(50, 50)}, path)
    data = path.read_bytes()
    for keep in (len(data) // 2, len(data) - 10, 10):
        path.write_bytes(data[:keep])
        load_error(path)


def test_corrupted_array_bytes_fail_the_crc(tmp_path):
    path = tmp_path / "flip.agc"
    ag.save({"w": ag.zeros(1000)}, path)
    data = bytearray(path.read_bytes())
    pos = data.index(b"tensors/0.npy") + 500  # inside the array's payload
    data[pos] ^= 0xFF
    path.write_bytes(bytes(data))
    assert "corrupted" in load_error(path)


def test_foreign_files(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("hello, I am not a checkpoint\n")
    assert "not a zip" in load_error(text)
    empty = tmp_path / "empty.agc"
    empty.write_bytes(b"")
    assert "empty" in load_error(empty)
    other_zip = tmp_path / "other.zip"
    with zipfile.ZipFile(other_zip, "w") as zf:
        zf.writestr("readme.md", "hi")
    assert "header.json" in load_error(other_zip)
    missing = tmp_path / "missing.agc"
    with pytest.raises(SerializationError, match=r"missing\.agc"):
        ag.load(missing)


def write_header(path, header, members=()):
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("header.json", header if isinstance(header, str) else json.dumps(header))
        for name, data in members:
            zf.writestr(name, data)


def test_bad_headers(tmp_path):
    cases = {
        "newer.agc": ({"format": "autogradcli", "version": 99, "root": 1}, "newer"),
        "other.agc": ({"format": "safetensors", "version": 1, "root": 1}, "not an autogradcli"),
        "nover.agc": ({"format": "autogradcli", "root": 1}, "version"),
        "json.agc": ("{not json", "not valid JSON"),
        "tag.agc": ({"format": "autogradcli", "version": 1, "root": {"$": "evil"}}, "tag"),
        "ref.agc": (
            {"format": "autogradcli", "version": 1, "root": {"$": "ndarray", "file": "x.npy"}},
            "missing",
        ),
    }
    for name, (header, message) in cases.items():
        write_header(tmp_path / name, header)
        assert message in load_error(tmp_path / name), name


class Payload:
    """Unpickling this creates a marker file: proof that code ran."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_pickles_are_rejected_without_running(tmp_path):
    marker = tmp_path / "PWNED"
    raw = tmp_path / "raw.pt"
    raw.write_bytes(pickle.dumps({"w": Payload(str(marker))}, protocol=2))
    assert "pickle" in load_error(raw)

    # A pickled object array smuggled in as a tensor member of an otherwise valid archive.
    buf = io.BytesIO()
    np.save(buf, np.array([Payload(str(marker))], dtype=object), allow_pickle=True)
    node = {"$": "ndarray", "file": "tensors/0.npy", "dtype": "|O", "shape": [1]}
    write_header(
        tmp_path / "smuggled.agc",
        {"format": "autogradcli", "version": 1, "root": node},
        [("tensors/0.npy", buf.getvalue())],
    )
    load_error(tmp_path / "smuggled.agc")
    assert not marker.exists()


def test_torch_style_zip_checkpoint_is_rejected(tmp_path):
    # torch.save's zip layout (importing torch would cost seconds): a pickle in archive/data.pkl.
    marker = tmp_path / "PWNED"
    path = tmp_path / "model.pt"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("archive/data.pkl", pickle.dumps(Payload(str(marker)), protocol=2))
        zf.writestr("archive/version", "3\n")
    assert "PyTorch" in load_error(path)
    assert not marker.exists()
