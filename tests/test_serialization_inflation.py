"""The checked array reader's limits, in process: how far a member may inflate (just inside and
just outside the ratio and the grace size), the memory limit, and reads in bounded chunks; for
checkpoints (``autogradcli.load``), ``.npz`` data and gzipped IDX files alike."""

from __future__ import annotations

import gzip
import io
import zipfile

import numpy as np
import pytest

import autogradcli as ag
from autogradcli.data import load_npz, read_idx
from autogradcli.serialization import SerializationError
from autogradcli.serialization import npy_member as nm

RATIO, GRACE = nm.MAX_INFLATE_RATIO, nm.INFLATE_GRACE


def test_ratio_and_grace_limits_just_inside_and_outside():
    nm.check_inflation("m.npy", RATIO * 50_000, 50_000)  # exactly the ratio: read
    with pytest.raises(ValueError, match=r"m\.npy inflates from 48\.8 KiB to 4\.8 MiB \(100x\)"):
        nm.check_inflation("m.npy", RATIO * 50_000 + 1, 50_000)
    nm.check_inflation("m.npy", GRACE, 1)  # within the grace size any ratio is read
    with pytest.raises(ValueError, match="refusing to read it"):
        nm.check_inflation("m.npy", GRACE + 1, 1)
    with pytest.raises(ValueError, match="from nothing"):
        nm.check_inflation("m.npy", GRACE + 1, 0)


def test_memory_limit_just_inside_and_outside(monkeypatch):
    monkeypatch.setattr(nm, "memory_limit", lambda: 4096)
    nm.check_memory("m.npy", 4096)
    with pytest.raises(ValueError, match=r"m\.npy holds 4\.0 KiB, more than this process may use"):
        nm.check_memory("m.npy", 4097)


def test_reads_in_bounded_chunks():
    """No read asks for more than CHUNK bytes, so inflating never holds a second copy."""
    asked = []

    class Source(io.BytesIO):
        def readinto(self, b):
            asked.append(len(b))
            return super().readinto(b)

    data = nm.read_exactly(Source(bytes(range(256)) * 10_000), 2_560_000, "m")
    assert bytes(data) == bytes(range(256)) * 10_000
    assert max(asked) == nm.CHUNK and len(asked) == 3
    with pytest.raises(EOFError, match="m is truncated"):
        nm.read_exactly(Source(bytes(10)), 11, "m")


def _deflated_checkpoint(path, value: np.ndarray) -> str:
    """A checkpoint of ``{"w": value}`` whose members are deflated (ours are stored)."""
    ag.save({"w": ag.tensor(value)}, str(path))
    with zipfile.ZipFile(path) as z:
        items = {n: z.read(n) for n in z.namelist()}
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, data in items.items():
            z.writestr(name, data)
    return str(path)


def test_checkpoint_member_inflating_past_the_ratio_is_refused(tmp_path):
    """Zeros of 2 MiB deflate ~1000x: a consistent header does not make them readable; random
    data of the same size (deflating ~1.1x) loads as saved."""
    bomb = _deflated_checkpoint(tmp_path / "bomb.agc", np.zeros(1 << 19, np.float32))
    with pytest.raises(SerializationError) as info:
        ag.load(bomb)
    msg = str(info.value)
    assert "bomb.agc" in msg and "tensors/0.npy inflates" in msg and "2.0 MiB" in msg
    value = np.random.default_rng(0).random(1 << 19, dtype=np.float32)
    fine = _deflated_checkpoint(tmp_path / "fine.agc", value)
    np.testing.assert_array_equal(ag.load(fine)["w"].numpy(), value)


def test_npz_member_inflating_past_the_ratio_is_refused(tmp_path):
    np.savez_compressed(tmp_path / "bomb.npz", x=np.zeros((1 << 17, 4), np.float32))
    with pytest.raises(ValueError, match=r"bomb\.npz.*x\.npy inflates from .* to 2\.0 MiB"):
        load_npz(tmp_path / "bomb.npz", y_key=None)
    x = np.random.default_rng(0).random((1 << 17, 4), dtype=np.float32)
    np.savez_compressed(tmp_path / "fine.npz", x=x)
    np.testing.assert_array_equal(load_npz(tmp_path / "fine.npz", y_key=None).tensors[0].numpy(), x)


def test_gzipped_idx_inflating_past_the_ratio_is_refused(tmp_path):
    header = b"\x00\x00\x08\x03" + np.array([512, 64, 64], ">i4").tobytes()  # 2 MiB of uint8
    with gzip.open(tmp_path / "bomb.idx.gz", "wb") as f:
        f.write(header + bytes(512 * 64 * 64))
    with pytest.raises(ValueError, match=r"bomb\.idx\.gz' inflates from .* to 2\.0 MiB"):
        read_idx(tmp_path / "bomb.idx.gz")
    images = np.random.default_rng(0).integers(0, 256, (512, 64, 64), dtype=np.uint8)
    with gzip.open(tmp_path / "fine.idx.gz", "wb") as f:
        f.write(header + images.tobytes())
    np.testing.assert_array_equal(read_idx(tmp_path / "fine.idx.gz"), images)


def test_plain_idx_claiming_more_than_the_file_is_refused_before_reading(tmp_path):
    """A 24-byte file whose header claims 1 GiB: refused from the file's size, no allocation."""
    path = tmp_path / "img.idx"
    path.write_bytes(b"\x00\x00\x08\x03" + np.array([1024, 1024, 1024], ">i4").tobytes() + bytes(8))
    with pytest.raises(ValueError, match=r"holds 8 data bytes .* \(1073741824 bytes\)"):
        read_idx(path)
