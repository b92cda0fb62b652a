"""Decoded images kept across epochs (data/image/cache.py): each file decoded once, by the main
process or a forked worker, read back bit for bit what a fresh decode gives; a pickled copy
decodes for itself; a bad file is still named when it is first decoded."""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest

from autogradcli.data import DataLoader
from autogradcli.data.image import cache
from autogradcli.data.image.decode import decode
from autogradcli.data.kinds import KINDS, DataError
from autogradcli.data.transforms import Normalize


def _folder(tmp_path, per_class: int = 3) -> str:
    image = pytest.importorskip("PIL.Image")
    rng = np.random.default_rng(0)
    for c in ("a", "b"):
        os.makedirs(tmp_path / c)
        for i in range(per_class):
            pixels = rng.integers(0, 256, (7, 5, 3), dtype=np.uint8)
            image.fromarray(pixels).save(tmp_path / c / f"{i}.png")
    return str(tmp_path)


def _counting(monkeypatch) -> list[str]:
    calls: list[str] = []
    real = cache.decode_uint8
    monkeypatch.setattr(cache, "decode_uint8", lambda p, *a: calls.append(p) or real(p, *a))
    return calls


def test_each_image_decoded_once_over_fit_epochs_and_splits(tmp_path, monkeypatch):
    kind = KINDS["image_folder"](root=_folder(tmp_path), size=4, normalize="auto")
    source = kind.read()
    calls = _counting(monkeypatch)
    state = kind.fit(source, [0, 1, 2, 3])
    train = kind.samples(source, state, [0, 1, 2, 3], train=True)
    val = kind.samples(source, state, [4, 5])
    for _ in range(3):
        got = [train[i][0] for i in range(4)] + [val[i][0] for i in range(2)]
    assert sorted(calls) == sorted(source.files)  # once each: fit's four, then val's two
    norm = Normalize(state["mean"], state["std"])
    for i, x in enumerate(got):  # bit for bit a fresh decode, normalized
        assert x.dtype == np.float32
        np.testing.assert_array_equal(x, norm(decode(source.files[i], (4, 4), 3)))


def test_forked_workers_fill_the_store_for_later_epochs(tmp_path, monkeypatch):
    kind = KINDS["image_folder"](root=_folder(tmp_path, per_class=4), size=3)
    source = kind.read()
    state = kind.fit(source, range(len(source)))
    ds = kind.samples(source, state)
    first = np.concatenate([x for x, _ in DataLoader(ds, batch_size=3, num_workers=2)])
    calls = _counting(monkeypatch)  # the main process now: every image must be read back
    again = np.concatenate([x for x, _ in DataLoader(ds, batch_size=3)])
    assert calls == []
    np.testing.assert_array_equal(first, again)


def test_pickled_store_decodes_for_itself(tmp_path):
    root = _folder(tmp_path)
    files = sorted(
        os.path.join(root, c, n) for c in "ab" for n in os.listdir(os.path.join(root, c))
    )
    store = cache.DecodedImages(files, (4, 4), 1)
    kept = store.pixels(0)
    copy = pickle.loads(pickle.dumps(store))
    np.testing.assert_array_equal(copy.pixels(0), kept)
    np.testing.assert_array_equal(copy.pixels(0), cache.decode_uint8(files[0], (4, 4), 1))


def test_bad_file_named_at_first_decode_and_every_later_one(tmp_path):
    root = _folder(tmp_path)
    bad = os.path.join(root, "a", "1.png")
    with open(bad, "r+b") as fh:
        fh.truncate(60)  # the header survives, the pixels do not
    kind = KINDS["image_folder"](root=root, size=4)
    source = kind.read()
    ds = kind.samples(source, kind.fit(source, range(len(source))))
    for _ in range(2):  # a failed decode is not kept as if it were pixels
        with pytest.raises(DataError, match=r"1\.png: cannot be decoded"):
            ds[source.files.index(bad)]


@pytest.mark.parametrize(
    "augment", [["RandomHorizontalFlip"], [{"type": "ColorJitter", "brightness": 0.5}]]
)
def test_batched_fetch_equals_item_by_item(tmp_path, augment):
    """The DataLoader's ``__getitems__``: the samples ``ds[i]`` gives under the same seed."""
    import autogradcli as ag

    kind = KINDS["image_folder"](root=_folder(tmp_path), size=4, augment=augment, normalize="auto")
    source = kind.read()
    ds = kind.samples(source, kind.fit(source, range(6)), range(6), train=True)
    ag.manual_seed(5)
    one = [ds[i] for i in (4, 0, 2)]
    ag.manual_seed(5)
    batch = ds.__getitems__([4, 0, 2])
    for (a, ya), (b, yb) in zip(one, batch):
        assert ya == yb and b.dtype == np.float32 and b.flags.c_contiguous
        np.testing.assert_array_equal(a, b)


def test_full_temporary_folder_or_too_many_pixels_decode_each_time(tmp_path, monkeypatch):
    """A failed write (ENOSPC), no usable temporary folder and a store over MAX_BYTES all fall
    back to decoding: the run goes on with the same pixels."""
    import errno

    root = _folder(tmp_path)
    files = [os.path.join(root, "a", f"{i}.png") for i in range(3)]
    want = [cache.decode_uint8(f, (4, 4), 3) for f in files]

    def full(*args):
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as m:
        m.setattr(os, "pwrite", full)
        store = cache.DecodedImages(files, (4, 4), 3)
        for _ in range(2):
            for i, w in enumerate(want):
                np.testing.assert_array_equal(store.pixels(i), w)
        m.setattr(cache.tempfile, "TemporaryFile", lambda **kw: full())  # no temporary folder
        nowhere = cache.DecodedImages(files, (4, 4), 3)
        np.testing.assert_array_equal(nowhere.pixels(0), want[0])
    record = 1 + 3 * 4 * 4
    monkeypatch.setattr(cache, "MAX_BYTES", 3 * record)  # just enough: kept
    calls = _counting(monkeypatch)
    kept = cache.DecodedImages(files, (4, 4), 3)
    for i, w in enumerate(want * 2):
        np.testing.assert_array_equal(kept.pixels(i % 3), w)
    assert len(calls) == 3
    monkeypatch.setattr(cache, "MAX_BYTES", 3 * record - 1)  # one byte over: decoded each time
    calls.clear()
    over = cache.DecodedImages(files, (4, 4), 3)
    for i, w in enumerate(want * 2):
        np.testing.assert_array_equal(over.pixels(i % 3), w)
    assert len(calls) == 6


def test_size_and_channels_set_decode_each_file_while_its_header_is_read(tmp_path, monkeypatch):
    """With ``size`` and ``channels`` given, ``read`` opens each file once for its header and
    pixels together: fit and the epochs read the pixels back (no second opening), bit for bit
    a fresh decode; a file whose data is bad still reads, and fails when first decoded."""
    from PIL import Image

    root = _folder(tmp_path)
    opened: list[str] = []
    real_open = Image.open
    monkeypatch.setattr(Image, "open", lambda p, *a, **k: opened.append(p) or real_open(p, *a, **k))
    kind = KINDS["image_folder"](root=root, size=4, channels=3, normalize="auto")
    source = kind.read()
    assert sorted(opened) == sorted(source.files)
    state = kind.fit(source, [0, 1, 2, 3])
    ds = kind.samples(source, state, range(6))
    got = [ds[i][0] for i in range(6)]
    assert sorted(opened) == sorted(source.files)  # nothing opened again
    norm = Normalize(state["mean"], state["std"])
    for i, x in enumerate(got):
        np.testing.assert_array_equal(x, norm(decode(source.files[i], (4, 4), 3)))

    bad = os.path.join(root, "a", "0.png")
    with open(bad, "r+b") as fh:
        fh.truncate(60)  # the header survives, the pixels do not
    source = KINDS["image_folder"](root=root, size=4, channels=3).read()
    with pytest.raises(DataError, match=r"0\.png: cannot be decoded"):
        kind.samples(source, kind.fit(source, [1, 2]), [0])[0]
