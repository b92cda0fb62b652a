"""``dataset: image_folder`` through its DataKind methods: listing, decoding against Pillow's
own decode, fitting on the training images only, training-only seeded augmentation, bad files
named by path, prediction inputs, and memory that does not grow with the number of images."""

from __future__ import annotations

import os
import textwrap

import numpy as np
import pytest
from peak_rss import peak_rss_kib

import autogradcli as ag
from autogradcli.data import DataLoader
from autogradcli.data.kinds import KINDS, DataError
from autogradcli.data.transforms import (
    ColorJitter,
    RandomCrop,
    RandomHorizontalFlip,
    RandomRotation,
    rotate,
)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _pil():
    return pytest.importorskip("PIL.Image")


def _kind(**settings):
    return KINDS["image_folder"](**settings)


def _save(path, pixels: np.ndarray, fmt: str | None = None) -> str:
    """Write uint8 ``pixels`` (h, w) or (h, w, 3) to ``path``; the path."""
    image = _pil()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    image.fromarray(pixels).save(path, format=fmt)
    return str(path)


def _pixels(seed: int, shape=(6, 5)) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, shape, dtype=np.uint8)


def _folder(tmp_path, classes=("cat", "dog"), per_class=3, shape=(6, 5)) -> str:
    root = tmp_path / "root"
    for c, name in enumerate(classes):
        for i in range(per_class):
            _save(str(root / name / f"{i}.png"), _pixels(10 * c + i, shape))
    return str(root)


# ------------------------------------------------------------------ listing
def test_classes_sorted_hidden_and_non_images_skipped(tmp_path):
    root = tmp_path / "root"
    for name in ("b", "a", "10", "2"):
        _save(str(root / name / "x.png"), _pixels(0))
    _save(str(root / "a" / "nested" / "deep.PNG"), _pixels(1))  # recursive, any case
    _save(str(root / ".hidden" / "h.png"), _pixels(2))  # a hidden folder is no class
    _save(str(root / "a" / ".secret.png"), _pixels(3))  # a hidden file is skipped
    (root / "a" / "notes.txt").write_text("not an image")
    _save(str(root / "loose.png"), _pixels(4))  # files directly in root are not read
    kind = _kind(root=str(root))
    source = kind.read()
    state = kind.fit(source, range(len(source)))
    assert state["classes"] == ["10", "2", "a", "b"]  # sorted as strings, as torchvision
    rel = [os.path.relpath(f, root) for f in kind.names(source)]
    assert rel == ["10/x.png", "2/x.png", "a/x.png", "a/nested/deep.PNG", "b/x.png"]
    targets = kind.samples(source, state).targets
    assert targets == [0, 1, 2, 2, 3]
    assert kind.sizes(state) == {"classes": 4}
    assert kind.class_names(state) == ["10", "2", "a", "b"]


def test_every_format_decodes_as_pillow_does(tmp_path):
    """PNG, JPEG, BMP and GIF, gray and colour, resized and normalized: equal to a direct
    Pillow computation of the same steps."""
    image = _pil()
    root = tmp_path / "root"
    rgb = _pixels(5, (9, 7, 3))
    gray = _pixels(6, (9, 7))
    paths = [
        _save(str(root / "a" / "1.png"), rgb),
        _save(str(root / "a" / "2.jpg"), rgb),
        _save(str(root / "b" / "3.bmp"), gray),
        _save(str(root / "b" / "4.gif"), rgb),
    ]
    mean, std = [0.5, 0.4, 0.3], [0.2, 0.25, 0.3]
    kind = _kind(root=str(root), size=[4, 6], channels=3, normalize={"mean": mean, "std": std})
    source = kind.read()
    state = kind.fit(source, range(4))
    ds = kind.samples(source, state)
    for i, path in enumerate(paths):
        with image.open(path) as img:
            direct = img.convert("RGB").resize((6, 4), image.Resampling.BILINEAR)
        want = np.asarray(direct, np.float32).transpose(2, 0, 1) / np.float32(255)
        want = (want - np.float32(mean).reshape(3, 1, 1)) / np.float32(std).reshape(3, 1, 1)
        x, y = ds[i]
        assert x.shape == (3, 4, 6) and x.dtype == np.float32
        np.testing.assert_allclose(x, want, rtol=0, atol=1e-6)
        assert y == (0 if i < 2 else 1)


def test_png_pixels_exact_without_resize(tmp_path):
    pixels = _pixels(7, (5, 4))
    root = tmp_path / "root"
    _save(str(root / "only" / "p.png"), pixels)
    kind = _kind(root=str(root))
    source = kind.read()
    state = kind.fit(source, [0])
    assert state["size"] == [5, 4] and state["channels"] == 1  # gray: one channel
    x, _ = kind.samples(source, state)[0]
    np.testing.assert_array_equal(x[0], pixels.astype(np.float32) / 255)


# ------------------------------------------------------------------ fitting
def test_normalize_auto_fits_on_training_images_only(tmp_path, monkeypatch):
    root = _folder(tmp_path, per_class=4)
    kind = _kind(root=root, normalize="auto")
    source = kind.read()
    train = [0, 2, 5, 7]
    import autogradcli.data.image.cache as module

    decoded = []
    real = module.decode_uint8
    monkeypatch.setattr(module, "decode_uint8", lambda p, *a: decoded.append(p) or real(p, *a))
    state = kind.fit(source, train)
    assert sorted(decoded) == sorted(source.files[i] for i in train)
    # the truth: the pixels written, as numbers in [0, 1]
    seeds = [0, 1, 2, 3, 10, 11, 12, 13]
    pixels = np.stack([_pixels(seeds[i]) for i in train]).astype(np.float64) / 255
    assert state["mean"] == pytest.approx([pixels.mean()], rel=1e-6)
    assert state["std"] == pytest.approx([pixels.std()], rel=1e-6)
    import json

    assert json.loads(json.dumps(state)) == state  # plain JSON
    x, _ = kind.samples(source, state, [1])[0]
    want = (_pixels(seeds[1]).astype(np.float32) / 255 - state["mean"][0]) / state["std"][0]
    np.testing.assert_allclose(x[0], want, atol=1e-5)


def test_given_normalize_must_match_channels(tmp_path):
    root = _folder(tmp_path)
    kind = _kind(root=root, channels=3, normalize={"mean": [0.5, 0.5], "std": [0.2, 0.2]})
    source = kind.read()
    with pytest.raises(DataError, match="normalize: has 2 values for images of 3 channel"):
        kind.fit(source, [0])
    one = _kind(root=root, channels=3, normalize={"mean": [0.5], "std": [0.5]})
    assert one.fit(one.read(), [0])["mean"] == [0.5, 0.5, 0.5]  # one value: every channel


def test_images_of_different_sizes_need_size(tmp_path):
    root = tmp_path / "root"
    _save(str(root / "a" / "1.png"), _pixels(0, (6, 5)))
    _save(str(root / "a" / "2.png"), _pixels(1, (7, 5)))
    kind = _kind(root=str(root))
    with pytest.raises(DataError, match=r"2\.png: is 7x5 but .*1\.png is 6x5: set size"):
        kind.fit(kind.read(), [0, 1])
    sized = _kind(root=str(root), size=3)
    source = sized.read()
    assert sized.samples(source, sized.fit(source, [0, 1]))[1][0].shape == (1, 3, 3)


@pytest.mark.parametrize(
    "settings, words",
    [
        ({"size": 0}, "size: each side must be between 1 and 4096"),
        ({"size": 4097}, "size: each side must be between 1 and 4096"),
        ({"size": [8]}, "size: expected an int or [height, width]"),
        ({"size": True}, "size: expected an int"),
        ({"channels": 2}, "channels: must be 1 or 3"),
        ({"channels": 0}, "channels: must be 1 or 3"),
        ({"normalize": "yes"}, "normalize: expected auto or {mean"),
        ({"normalize": {"mean": [0.5], "std": [0]}}, "normalize.std: every std must be > 0"),
        ({"augment": ["RandomHorizontalFlp"]}, "did you mean 'RandomHorizontalFlip'"),
        ({"augment": [{"type": "RandomCrop", "pad": 4}]}, "RandomCrop has no argument 'pad'"),
        ({"augment": [{"type": "RandomHorizontalFlip", "p": 1.01}]}, "p must be in [0, 1]"),
        ({"augment": "RandomHorizontalFlip"}, "augment: expected a list"),
    ],
)
def test_bad_settings_are_named(settings, words):
    with pytest.raises(DataError) as err:
        _kind(root="x", **settings)
    assert words in str(err.value)


@pytest.mark.parametrize(
    "settings",
    [
        {"size": 1},
        {"size": 4096},
        {"size": [4096, 1]},
        {"channels": 1},
        {"channels": 3},
        {"augment": [{"type": "RandomHorizontalFlip", "p": 1.0}]},
        {"augment": [{"type": "RandomHorizontalFlip", "p": 0.0}]},
    ],
)
def test_settings_just_inside_the_limits(settings):
    _kind(root="x", **settings)


# ------------------------------------------------------------------ augmentation
def test_transforms_against_hand_computed_results():
    ag.manual_seed(0)
    img = np.arange(2 * 5 * 5, dtype=np.float32).reshape(2, 5, 5) / 50
    np.testing.assert_array_equal(RandomHorizontalFlip(p=1.0)(img), img[:, :, ::-1])
    np.testing.assert_array_equal(RandomHorizontalFlip(p=0.0)(img), img)
    np.testing.assert_array_equal(RandomCrop()(img), img)  # size = input, no padding
    np.testing.assert_allclose(rotate(img, 90.0), np.rot90(img, 1, axes=(1, 2)))
    np.testing.assert_array_equal(rotate(img, 0.0), img)
    np.testing.assert_array_equal(RandomRotation(0)(img), img)
    padded = np.pad(img, ((0, 0), (2, 2), (2, 2)))
    windows = {(t, le) for t in range(5) for le in range(5)}
    for _ in range(20):
        out = RandomCrop(padding=2)(img)
        assert out.shape == img.shape
        assert any(np.array_equal(out, padded[:, t : t + 5, le : le + 5]) for t, le in windows)
    jitter = ColorJitter(brightness=0.2)
    for _ in range(10):
        dim = img[:, 1:, 1:] / 2  # no zero pixels, none clipped: the ratio is the factor
        ratio = jitter(dim) / dim
        assert ratio.max() - ratio.min() < 1e-5 and 0.8 - 1e-6 <= ratio.mean() <= 1.2 + 1e-6


AUGMENT = [
    {"type": "RandomCrop", "padding": 2},
    "RandomHorizontalFlip",
    {"type": "RandomRotation", "degrees": 15},
    {"type": "ColorJitter", "brightness": 0.3, "contrast": 0.3, "saturation": 0.3},
]


def _epoch(ds, seed: int, workers: int) -> np.ndarray:
    ag.manual_seed(seed)
    loader = DataLoader(ds, batch_size=2, shuffle=False, num_workers=workers)
    return np.concatenate([x.numpy() for x, _ in loader])


def test_augmentation_only_for_training_and_seeded(tmp_path):
    root = _folder(tmp_path, shape=(8, 8))
    plain = _kind(root=root)
    kind = _kind(root=root, augment=AUGMENT)
    source = kind.read()
    state = kind.fit(source, range(len(source)))
    clean = _epoch(plain.samples(source, state), 0, 0)
    np.testing.assert_array_equal(_epoch(kind.samples(source, state), 0, 0), clean)
    train = kind.samples(source, state, train=True)
    first, again = _epoch(train, 0, 0), _epoch(train, 0, 0)
    np.testing.assert_array_equal(first, again)  # same seed, same augmentations
    assert not np.array_equal(first, clean)
    assert not np.array_equal(_epoch(train, 1, 0), first)


def test_augmentation_in_workers_is_seeded_per_worker(tmp_path):
    root = _folder(tmp_path, shape=(8, 8))
    kind = _kind(root=root, augment=AUGMENT)
    source = kind.read()
    train = kind.samples(source, kind.fit(source, range(len(source))), train=True)
    first = _epoch(train, 0, 2)
    np.testing.assert_array_equal(_epoch(train, 0, 2), first)
    assert not np.array_equal(_epoch(train, 3, 2), first)


# ------------------------------------------------------------------ bad files
def _truncated_png(path) -> str:
    _save(str(path), _pixels(9, (40, 40)))
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return str(path)


def test_garbage_file_is_named_at_read(tmp_path):
    root = _folder(tmp_path)
    bad = os.path.join(root, "dog", "bad.png")
    with open(bad, "wb") as f:
        f.write(b"this is not a png")
    with pytest.raises(DataError) as err:
        _kind(root=root).read()
    assert str(err.value).startswith(f"{bad}: not an image Pillow can read")


def test_truncated_file_is_named_at_first_decode(tmp_path):
    _pil()
    root = _folder(tmp_path)
    bad = _truncated_png(tmp_path / "root" / "cat" / "9.png")
    kind = _kind(root=root, size=4)
    source = kind.read()  # the header is fine
    state = kind.fit(source, range(len(source)))
    ds = kind.samples(source, state)
    with pytest.raises(DataError) as err:
        ds[source.files.index(bad)]
    assert str(err.value).startswith(f"{bad}: cannot be decoded")
    with pytest.raises(DataError) as err:  # from a worker process: the same, no traceback
        list(DataLoader(ds, batch_size=2, num_workers=2))
    assert bad in str(err.value) and "Traceback" not in str(err.value)
    with pytest.raises(DataError, match=r"9\.png: cannot be decoded"):
        _kind(root=root, size=4, normalize="auto").fit(source, range(len(source)))


def test_skip_bad_skips_and_counts(tmp_path, capsys):
    root = _folder(tmp_path)
    _truncated_png(tmp_path / "root" / "cat" / "9.png")
    (tmp_path / "root" / "dog" / "x.jpg").write_bytes(b"\xff\xd8 not really")
    kind = _kind(root=root, skip_bad=True, normalize="auto")
    source = kind.read()
    assert len(source) == 6 and len(source.skipped) == 2
    assert "skipped 2 bad image(s)" in capsys.readouterr().err
    state = kind.fit(source, range(len(source)))
    assert state["skipped_bad"] == 2
    assert len(list(DataLoader(kind.samples(source, state), batch_size=4))) == 2


def test_skip_bad_refuses_a_class_left_empty(tmp_path):
    root = _folder(tmp_path, per_class=1)
    (tmp_path / "root" / "dog" / "0.png").write_bytes(b"junk")
    with pytest.raises(DataError, match="every image in class folder 'dog' was bad"):
        _kind(root=root, skip_bad=True).read()


# ------------------------------------------------------------------ eval and predict inputs
def test_predict_inputs_file_folder_and_glob(tmp_path):
    root = _folder(tmp_path)
    kind = _kind(root=root, normalize="auto")
    source = kind.read()
    state = kind.fit(source, range(len(source)))
    flat = tmp_path / "new"
    one = _save(str(flat / "z.png"), _pixels(50))
    _save(str(flat / "sub" / "y.jpg"), _pixels(51))
    (flat / "readme.txt").write_text("skipped")
    assert kind.names(kind.read(one)) == [one]
    in_folder = kind.read(str(flat))
    assert kind.names(in_folder) == [one, str(flat / "sub" / "y.jpg")]  # torchvision's order
    globbed = kind.read(str(flat / "*.png"))
    assert kind.names(globbed) == [one]
    assert len(kind.read(str(tmp_path / "**" / "*.png"))) == 7
    x = kind.inputs(in_folder, state)[0]
    want = (_pixels(50).astype(np.float32) / 255 - state["mean"][0]) / state["std"][0]
    np.testing.assert_allclose(x[0], want, atol=1e-5)


def test_eval_folder_with_an_unknown_class_is_named(tmp_path):
    root = _folder(tmp_path)
    kind = _kind(root=root)
    state = kind.fit(kind.read(), range(6))
    other = tmp_path / "eval"
    _save(str(other / "cat" / "a.png"), _pixels(1))
    _save(str(other / "cow" / "b.png"), _pixels(2))
    _save(str(other / "loose.png"), _pixels(3))
    source = kind.read(str(other))
    with pytest.raises(DataError) as err:
        kind.samples(source, state)
    text = str(err.value)
    assert f"{other / 'cow' / 'b.png'}: is in folder 'cow', not one of the run's" in text
    assert f"{other / 'loose.png'}: is not in a class folder" in text
    cat = source.files.index(str(other / "cat" / "a.png"))
    assert kind.samples(source, state, [cat]).targets == [0]


@pytest.mark.parametrize("what", ["missing", "empty-glob", "text-file"])
def test_bad_predict_inputs_are_named(tmp_path, what):
    kind = _kind(root="x")
    path = {
        "missing": str(tmp_path / "nope"),
        "empty-glob": str(tmp_path / "*.png"),
        "text-file": str(tmp_path / "a.txt"),
    }[what]
    (tmp_path / "a.txt").write_text("x")
    with pytest.raises(DataError) as err:
        kind.read(path)
    assert str(err.value).startswith(path)


# ------------------------------------------------------------------ real data
def _digits_folder(tmp_path, corrupt: bool = True) -> str:
    _pil()
    from autogradcli.data.image.digits import write_digit_images

    root = str(tmp_path / "digits")
    write_digit_images(root)
    if corrupt:
        with open(os.path.join(root, "4", "corrupt.png"), "wb") as f:
            f.write(b"\x89PNG\r\n\x1a\n" + b"\0" * 40)
    return root


DIGITS_CONFIG = """\
name: digits-images
seed: 0
data:
  dataset: image_folder
  root: digits
  size: 16
  normalize: auto
  skip_bad: {skip_bad}
  val_split: 0.2
model:
  - Flatten
  - {{type: Linear, in_features: auto, out_features: 128}}
  - ReLU
  - {{type: Linear, in_features: auto, out_features: 10}}
loss: cross_entropy
optimizer: {{type: Adam, lr: 0.002}}
train: {{epochs: 6, batch_size: 64}}
"""


def test_digits_folder_trains_to_095_and_predicts(tmp_path, capsys, monkeypatch):
    """The bundled digits written as 32x32 PNG and JPEG files plus a corrupt one, trained from a
    config: refused naming the corrupt file without skip_bad; with it, validation accuracy
    >= 0.95, and ``agrad predict`` names each new file's class."""
    import json

    from test_cli_helpers import agrad

    root = _digits_folder(tmp_path)
    names = sorted(n for _, _, files in os.walk(root) for n in files)
    assert any(n.endswith(".png") for n in names) and any(n.endswith(".jpg") for n in names)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text(DIGITS_CONFIG.format(skip_bad="false"))
    code, _, err = agrad(capsys, "train", "c.yaml", "--progress", "none")
    assert code == 2 and "c.yaml:5:" in err and os.path.join("4", "corrupt.png") in err, err
    assert "Traceback" not in err and not os.path.exists(tmp_path / "runs")

    (tmp_path / "c.yaml").write_text(DIGITS_CONFIG.format(skip_bad="true"))
    code, _, err = agrad(capsys, "train", "c.yaml", "--progress", "none")
    assert code == 0, err
    assert "skipped 1 bad image(s)" in err
    (run,) = [os.path.join("runs", d) for d in os.listdir("runs")]
    with open(os.path.join(run, "summary.json")) as f:
        best = json.load(f)["best"]["metrics"]
    print(f"digits image folder: best val_acc {best['val_acc']:.4f}")
    assert best["val_acc"] >= 0.95
    with open(os.path.join(run, "data_state.json")) as f:
        assert json.load(f)["state"]["skipped_bad"] == 1

    new = tmp_path / "new"
    picks = {"3": "0003.jpg", "7": "0017.jpg", "0": "0000.png"}
    for digit, name in picks.items():
        new.mkdir(exist_ok=True)
        (new / f"{digit}-{name}").write_bytes((tmp_path / "digits" / digit / name).read_bytes())
    code, _, err = agrad(capsys, "predict", run, "--input", "new", "--output", "p.csv")
    assert code == 0, err
    lines = (tmp_path / "p.csv").read_text().splitlines()
    header, rows = lines[0].split(","), [line.split(",") for line in lines[1:]]
    assert [r[0] for r in rows] == [os.path.join("new", n) for n in sorted(os.listdir(new))]
    for r in rows:
        record = dict(zip(header, r))
        assert record["class"] == os.path.basename(record["name"]).split("-")[0]
        probs = [float(record[f"prob_{i}"]) for i in range(10)]
        assert abs(sum(probs) - 1) < 1e-4


# ------------------------------------------------------------------ memory
_RSS_PROGRAM = textwrap.dedent(
    """
    import sys
    from autogradcli.data import DataLoader
    from autogradcli.data.kinds import KINDS

    kind = KINDS["image_folder"](root=sys.argv[1], normalize="auto", augment=["RandomHorizontalFlip"])
    source = kind.read()
    rows = range(len(source))
    state = kind.fit(source, rows)
    for x, y in DataLoader(kind.samples(source, state, rows, train=True), batch_size=64):
        pass
    """
)


def _many_images(folder, n: int) -> str:
    image = _pil()
    rng = np.random.default_rng(n)
    for i in range(n):
        where = os.path.join(folder, str(i % 4))
        os.makedirs(where, exist_ok=True)
        pixels = rng.integers(0, 256, (48, 48, 3), dtype=np.uint8)
        image.fromarray(pixels).save(os.path.join(where, f"{i}.png"), compress_level=0)
    return str(folder)


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads VmHWM from /proc")
def test_peak_memory_does_not_grow_with_the_number_of_images(tmp_path):
    """500 and 4000 48x48 RGB images: holding the 3500 more as float32 would cost 92 MiB; the
    peak RSS of a read, an auto-normalize fit and an epoch may grow by far less."""
    small = peak_rss_kib(_RSS_PROGRAM, _many_images(tmp_path / "small", 500))
    large = peak_rss_kib(_RSS_PROGRAM, _many_images(tmp_path / "large", 4000))
    held = 3500 * 48 * 48 * 3 * 4 // 1024
    print(f"peak RSS: {small} KiB for 500 images, {large} KiB for 4000 (holding: +{held} KiB)")
    assert large - small < held // 10


def test_data_error_round_trips_through_pickle():
    """What a DataLoader worker sends back: the same problems, not its message split up."""
    import pickle

    from autogradcli.data.kinds import Problem

    err = DataError([Problem("a/b.png", "cannot be decoded", row=3)], more=2)
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is DataError and str(back) == str(err) and back.more == 2
    assert str(back).startswith("a/b.png, row 3: cannot be decoded")


@pytest.mark.parametrize("extra, refused", [(0, False), (1, True)])
def test_decompression_bomb_limit_just_inside_and_outside(tmp_path, extra, refused):
    """A header of exactly Pillow's MAX_IMAGE_PIXELS passes the header check; one more pixel is
    refused, naming the file (the pixels are never decoded)."""
    import struct
    import zlib

    from autogradcli.data.image.decode import BadImage, probe

    width = _pil().MAX_IMAGE_PIXELS + extra

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = struct.pack(">I", zlib.crc32(kind + data))
        return struct.pack(">I", len(data)) + kind + data + crc

    path = tmp_path / "wide.png"
    ihdr = struct.pack(">IIBBBBB", width, 1, 8, 0, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IEND", b""))
    if refused:
        with pytest.raises(BadImage, match="decompression bomb"):
            probe(path)
    else:
        assert (probe(path).height, probe(path).width) == (1, width)


def test_shipped_config_runs_from_the_readme_command(tmp_path, capsys, monkeypatch):
    """configs/image_folder.yaml, with its data written by the README's one-line command,
    builds and takes a training step (``--dry-run``)."""
    import shutil

    from test_cli_helpers import agrad

    _pil()
    from autogradcli.data.image.digits import main as write_digits

    shutil.copytree(os.path.join(REPO, "configs"), tmp_path / "configs")
    monkeypatch.chdir(tmp_path)
    assert write_digits([os.path.join("data", "digit_images")]) == 0
    code, out, err = agrad(capsys, "train", "configs/image_folder.yaml", "--dry-run")
    assert code == 0, err
    assert "Conv2d" in out
