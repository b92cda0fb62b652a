"""Hostile image folders through real ``agrad`` subprocesses: an empty root, a class folder
without images, a corrupt, a truncated or an unreadable file, and a header claiming billions of
pixels are each refused with the path named and no traceback (exit 2, no run folder, when found
before training; a file that breaks mid-training fails the run naming it)."""

from __future__ import annotations

import os
import struct
import zlib

import numpy as np
import pytest
from hostile_harness import assert_refused, no_run_folder, run_agrad, write

CONFIG = """
data: {{dataset: image_folder, root: imgs, val_split: 0.25{extra}}}
model:
  - Flatten
  - {{type: Linear, in_features: auto, out_features: 2}}
loss: cross_entropy
train: {{epochs: 1, batch_size: 4}}
"""


def _png(path, seed: int) -> str:
    image = pytest.importorskip("PIL.Image")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    pixels = np.random.default_rng(seed).integers(0, 256, (6, 6), dtype=np.uint8)
    image.fromarray(pixels).save(path)
    return str(path)


def _folder(tmp_path, classes=("a", "b"), per_class: int = 4) -> str:
    for c, name in enumerate(classes):
        for i in range(per_class):
            _png(tmp_path / "imgs" / name / f"{i}.png", 10 * c + i)
    return str(tmp_path / "imgs")


def _train(tmp_path, extra: str = ""):
    write(str(tmp_path / "c.yaml"), CONFIG.format(extra=extra))
    return run_agrad("train", "c.yaml", "--progress", "none", cwd=str(tmp_path))


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _png_claiming(path, width: int, height: int) -> None:
    """A valid PNG header (IHDR) for ``width`` x ``height`` gray pixels, and one tiny IDAT."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    body = _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", zlib.compress(b"\0")) + _chunk(b"IEND", b"")
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + body)


class TestImageFolderHostile:
    def test_empty_root(self, tmp_path):
        (tmp_path / "imgs").mkdir()
        res = _train(tmp_path)
        assert_refused(res, "imgs", "has no class folders")
        assert no_run_folder(str(tmp_path))

    def test_class_folder_without_images(self, tmp_path):
        _folder(tmp_path)
        (tmp_path / "imgs" / "c").mkdir()
        (tmp_path / "imgs" / "c" / "notes.txt").write_text("no images here")
        res = _train(tmp_path)
        assert_refused(res, os.path.join("imgs", "c"), "class folder 'c' has no image files")
        assert no_run_folder(str(tmp_path))

    def test_corrupt_file(self, tmp_path):
        _folder(tmp_path)
        (tmp_path / "imgs" / "b" / "bad.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
        res = _train(tmp_path)
        assert_refused(res, os.path.join("imgs", "b", "bad.png"), "not an image Pillow can read")
        assert no_run_folder(str(tmp_path))

    def test_corrupt_file_skipped_with_skip_bad(self, tmp_path):
        _folder(tmp_path)
        (tmp_path / "imgs" / "b" / "bad.png").write_bytes(b"junk")
        res = _train(tmp_path, ", skip_bad: true")
        assert res.code == 0, res.text
        assert "skipped 1 bad image(s)" in res.text and "bad.png" in res.text

    def test_truncated_file_found_by_normalize_auto(self, tmp_path):
        _folder(tmp_path)
        bad = tmp_path / "imgs" / "a" / "t.png"
        _png(bad, 99)
        bad.write_bytes(bad.read_bytes()[:60])
        text = CONFIG.format(extra=", normalize: auto").replace("val_split: 0.25", "val_split: 0")
        write(str(tmp_path / "c.yaml"), text)  # every image a training image: fit decodes it
        res = run_agrad("train", "c.yaml", cwd=str(tmp_path))
        assert_refused(res, os.path.join("imgs", "a", "t.png"), "cannot be decoded")
        assert no_run_folder(str(tmp_path))

    def test_truncated_file_mid_training_names_it(self, tmp_path):
        """A file found bad only when its batch is decoded (validation, in a worker process):
        the run fails (exit 1, its folder kept) naming the file, with no traceback."""
        _folder(tmp_path)
        _png(tmp_path / "valimgs" / "a" / "0.png", 50)
        bad = tmp_path / "valimgs" / "b" / "t.png"
        _png(bad, 99)
        bad.write_bytes(bad.read_bytes()[:60])
        text = CONFIG.replace("val_split: 0.25", "val: {{dataset: image_folder, root: valimgs}}")
        text = text.replace("batch_size: 4", "batch_size: 4, num_workers: 1")
        write(str(tmp_path / "c.yaml"), text.format(extra=""))
        res = run_agrad("train", "c.yaml", "--progress", "none", cwd=str(tmp_path))
        assert_refused(res, os.path.join("valimgs", "b", "t.png"), "cannot be decoded", code=1)
        assert not no_run_folder(str(tmp_path))

    def test_unreadable_path(self, tmp_path):
        _folder(tmp_path)
        os.symlink(str(tmp_path / "gone.png"), str(tmp_path / "imgs" / "a" / "link.png"))
        res = _train(tmp_path)
        assert_refused(res, os.path.join("imgs", "a", "link.png"), "cannot be read")
        assert no_run_folder(str(tmp_path))

    def test_header_claiming_huge_dimensions(self, tmp_path):
        _folder(tmp_path)
        _png_claiming(tmp_path / "imgs" / "a" / "bomb.png", 100_000, 100_000)
        res = _train(tmp_path)
        assert_refused(res, os.path.join("imgs", "a", "bomb.png"), "decompression bomb")
        assert no_run_folder(str(tmp_path))

    def test_root_that_is_a_file(self, tmp_path):
        (tmp_path / "imgs").write_text("not a folder")
        res = _train(tmp_path)
        assert_refused(res, "imgs", "root must be a folder of class folders")
        assert no_run_folder(str(tmp_path))
