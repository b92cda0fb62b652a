"""Hostile data files and user code, through real ``agrad train`` subprocesses: each is a
located exit 2 (the config line of the data path or layer, and what is wrong with the file),
no traceback, no run folder."""

from __future__ import annotations

import gzip
import io
import os
import zipfile

import numpy as np
import pytest
from hostile_harness import assert_refused, no_run_folder, run_agrad, write

CLASSIFIER = """
data: {{dataset: {dataset}, path: {path}, val_split: 0.2{extra}}}
model:
  - {{type: Linear, in_features: auto, out_features: 2}}
loss: {loss}
train: {{epochs: 1, batch_size: 4}}
"""


def _config(tmp_path, dataset: str, path: str, extra: str = "", loss="CrossEntropyLoss") -> str:
    text = CLASSIFIER.format(dataset=dataset, path=path, extra=extra, loss=loss)
    return write(str(tmp_path / "c.yaml"), text)


def _npz(path, **arrays) -> str:
    np.savez(path, **arrays)
    return str(path)


X = np.ones((10, 3), np.float32)
Y = np.arange(10) % 2

NPZ_CASES = [
    ("object-array", {"x": np.array([{"a": 1}] * 10, dtype=object), "y": Y}, ["pickle"]),
    ("missing-key", {"a": X, "y": Y}, ["has no array 'x'", "['a', 'y']"]),
    ("row-mismatch", {"x": X, "y": Y[:7]}, ["same number of rows", "(10, 3), (7,)"]),
    ("nan-features", {"x": np.full((10, 3), np.nan, np.float32), "y": Y}, ["nan at index [0, 0]"]),
    ("inf-in-last-row", {"x": np.vstack([X[:9], [[0, 0, np.inf]]]), "y": Y}, ["[9, 2]"]),
    ("float64-beyond-float32", {"x": X.astype(np.float64) * 1e300, "y": Y}, ["too large"]),
    ("strings", {"x": np.array([["a", "b"]] * 10), "y": Y}, ["non-numeric dtype"]),
    ("empty", {"x": np.ones((0, 3), np.float32), "y": Y[:0]}, ["empty"]),
    ("scalar-x", {"x": np.float32(1), "y": Y}, ["same number of rows"]),
]


@pytest.mark.parametrize("arrays, words", [c[1:] for c in NPZ_CASES], ids=[c[0] for c in NPZ_CASES])
def test_npz(tmp_path, arrays, words):
    _npz(tmp_path / "d.npz", **arrays)
    res = run_agrad("train", _config(tmp_path, "npz", "d.npz"), cwd=str(tmp_path))
    assert_refused(res, "c.yaml:1:", "data.path", *words)
    assert no_run_folder(str(tmp_path))


def _npz_bytes(tmp_path, name: str, data: bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return name


def test_npz_not_a_zip(tmp_path):
    _npz_bytes(tmp_path, "d.npz", b"hello")
    res = run_agrad("train", _config(tmp_path, "npz", "d.npz"), cwd=str(tmp_path))
    assert_refused(res, "not an .npz file")


def test_npz_bomb_refused_before_inflating(tmp_path):
    """x.npy's .npy header says (10, 3) float32 but the member inflates to 512 MiB."""
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<f4", "fortran_order": False, "shape": (10, 3)}
    )
    path = tmp_path / "d.npz"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        with z.open("x.npy", "w") as m:
            m.write(b"\x93NUMPY\x01\x00" + header.getvalue()[8:])
            zeros = bytes(1 << 20)
            for _ in range(512):
                m.write(zeros)
        buf = io.BytesIO()
        np.save(buf, Y)
        z.writestr("y.npy", buf.getvalue())
    assert os.path.getsize(path) < 4 << 20
    res = run_agrad("train", _config(tmp_path, "npz", "d.npz"), cwd=str(tmp_path))
    assert_refused(res, "x.npy inflates", "512.0 MiB", "refusing to read it")


def test_npz_claiming_a_trillion_elements(tmp_path):
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<f4", "fortran_order": False, "shape": (10**6, 10**6)}
    )
    path = tmp_path / "d.npz"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("x.npy", b"\x93NUMPY\x01\x00" + header.getvalue()[8:] + bytes(120))
        buf = io.BytesIO()
        np.save(buf, Y)
        z.writestr("y.npy", buf.getvalue())
    res = run_agrad("train", _config(tmp_path, "npz", "d.npz"), cwd=str(tmp_path))
    assert_refused(res, "3.6 TiB", "refusing to read it")


CSV_CASES = [
    ("no-feature-column", "y\n1\n2\n3\n4\n5\n", ["only the target column"]),
    ("label-1e308", "a,b,y\n" + "0.1,0.2,1\n" * 9 + "0.1,0.2,1e308\n", ["1e+308 is too large"]),
    ("nan-cell", "a,b,y\n" + "0.1,0.2,1\n" * 9 + "nan,0.2,1\n", ["line 11, column 1", "nan"]),
    ("inf-cell", "1,2,0\n" * 9 + "1,inf,0\n", ["line 10, column 2"]),
    ("words", "a,b,y\n1,2,0\n1,x,1\n", ["line 3", "non-numeric"]),
    ("ragged", "1,2,0\n1,2\n", ["line 2", "expected 3 columns, found 2"]),
    ("empty", "", ["is empty"]),
    ("header-only", "a,b,y\n", ["no data rows"]),
    ("latin-1", "a,b,y\ncafé,1,0\n".encode("latin-1"), ["cannot read CSV"]),
    ("binary", bytes(range(256)) * 4, ["cannot read CSV"]),
]


@pytest.mark.parametrize(
    "content, words", [c[1:] for c in CSV_CASES], ids=[c[0] for c in CSV_CASES]
)
def test_csv(tmp_path, content, words):
    write(str(tmp_path / "d.csv"), content)
    res = run_agrad("train", _config(tmp_path, "csv", "d.csv"), cwd=str(tmp_path))
    assert_refused(res, "c.yaml:1:", "data.path", *words)
    assert no_run_folder(str(tmp_path))


def test_csv_target_column_out_of_range(tmp_path):
    write(str(tmp_path / "d.csv"), "1,2,0\n" * 10)
    res = run_agrad(
        "train", _config(tmp_path, "csv", "d.csv", ", target_column: 5"), cwd=str(tmp_path)
    )
    assert_refused(res, "target_column 5 is out of range for 3 columns")


def test_csv_whole_numbers_up_to_int32_are_classes(tmp_path):
    """Just inside the class-label rule, 2**31 - 1 is a class index (int64); just outside,
    2**31 is a value (float32)."""
    from autogradcli.data import load_csv

    write(str(tmp_path / "in.csv"), "0.1,0.2,1\n" + f"0.1,0.2,{2**31 - 1}\n")
    write(str(tmp_path / "out.csv"), "0.1,0.2,1\n" + f"0.1,0.2,{2**31}\n")
    assert str(load_csv(str(tmp_path / "in.csv")).tensors[1].dtype) == "autogradcli.int64"
    assert str(load_csv(str(tmp_path / "out.csv")).tensors[1].dtype) == "autogradcli.float32"


def test_float_regression_targets_with_cross_entropy(tmp_path):
    write(str(tmp_path / "d.csv"), "".join(f"{i / 10},{i / 7}\n" for i in range(20)))
    res = run_agrad("train", _config(tmp_path, "csv", "d.csv"), cwd=str(tmp_path))
    assert_refused(res, "c.yaml:4:1", "loss: CrossEntropyLoss needs class indices", "MSELoss")


def test_class_probabilities_are_accepted_for_cross_entropy(tmp_path):
    """The other side of the rule: float targets of the output's shape that sum to 1 per row
    are class probabilities (PyTorch's soft labels), not regression targets."""
    x = np.random.default_rng(0).random((20, 3)).astype(np.float32)
    p = np.random.default_rng(1).random((20, 2)).astype(np.float32)
    p /= p.sum(1, keepdims=True)
    _npz(tmp_path / "d.npz", x=x, y=p)
    res = run_agrad("train", _config(tmp_path, "npz", "d.npz"), "--dry-run", cwd=str(tmp_path))
    assert res.code == 0, res.text


IDX_CASES = [
    ("bad-magic", b"\x01\x02\x03\x04", ["bad magic number 01020304"]),
    ("empty", b"", ["(empty)"]),
    ("truncated-header", b"\x00\x00\x08\x03\x00\x00", ["truncated"]),
    (
        "huge-claim",
        b"\x00\x00\x08\x03" + (10**5).to_bytes(4, "big") * 3 + bytes(10),
        ["more than this process may use"],
    ),
    (
        "short-data",
        b"\x00\x00\x08\x03" + (2).to_bytes(4, "big") + (4).to_bytes(4, "big") * 2 + bytes(31),
        ["holds 31 data bytes", "32 bytes"],
    ),
    (
        "long-data",
        b"\x00\x00\x08\x03" + (2).to_bytes(4, "big") + (4).to_bytes(4, "big") * 2 + bytes(33),
        ["holds more than 32 data bytes"],
    ),
]


@pytest.mark.parametrize(
    "content, words", [c[1:] for c in IDX_CASES], ids=[c[0] for c in IDX_CASES]
)
def test_idx(tmp_path, content, words):
    write(str(tmp_path / "img.idx"), content)
    text = CLASSIFIER.replace("path: {path}", "images: img.idx").format(
        dataset="idx", path="", extra="", loss="CrossEntropyLoss"
    )
    res = run_agrad("train", write(str(tmp_path / "c.yaml"), text), cwd=str(tmp_path))
    assert_refused(res, "c.yaml:1:", *words)


def test_idx_gzip_bomb_stops_at_the_claimed_size(tmp_path):
    """A gzipped IDX whose header claims 32 bytes but inflates to 256 MiB: reading stops one
    byte past the claim."""
    with gzip.open(tmp_path / "img.idx.gz", "wb", compresslevel=1) as f:
        f.write(b"\x00\x00\x08\x03" + (2).to_bytes(4, "big") + (4).to_bytes(4, "big") * 2)
        zeros = bytes(1 << 20)
        for _ in range(256):
            f.write(zeros)
    text = CLASSIFIER.replace("path: {path}", "images: img.idx.gz").format(
        dataset="idx", path="", extra="", loss="CrossEntropyLoss"
    )
    res = run_agrad("train", write(str(tmp_path / "c.yaml"), text), cwd=str(tmp_path))
    assert_refused(res, "holds more than 32 data bytes")


@pytest.mark.parametrize("what", ["missing", "directory"])
def test_data_path_missing_or_a_directory(tmp_path, what):
    if what == "directory":
        (tmp_path / "d.npz").mkdir()
    res = run_agrad("train", _config(tmp_path, "npz", "d.npz"), cwd=str(tmp_path))
    assert_refused(res, "c.yaml:1:", "data.path")


# ------------------------------------------------------------------ user code, at import
USER_CODE = {
    "exit_on_import.py": "import sys\nsys.exit('bye')\n",
    "raises_on_import.py": "x = 1\nraise RuntimeError('broken on purpose')\n",
    "syntax_error.py": "def f(:\n    pass\n",
    "name_error.py": "import os\ny = undefined_name\n",
    "keyboard.py": "from autogradcli import nn\nclass Layer(nn.Module):\n    pass\n",
    "functions.py": (
        "from autogradcli.autograd import Function\n"
        "class NoForward(Function):\n"
        "    @staticmethod\n"
        "    def backward(ctx, g):\n"
        "        return g\n"
        "class NoBackward(Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, x):\n"
        "        return x * 2\n"
        "NOT_A_CLASS = 3\n"
    ),
}

USER_CASES = [
    ("exit-on-import", "exit_on_import.py:Foo", ["sys.exit('bye')", "exit_on_import.py:2"]),
    (
        "raise-on-import",
        "raises_on_import.py:Foo",
        ["RuntimeError: broken", "raises_on_import.py:2"],
    ),
    ("syntax-error", "syntax_error.py:Foo", ["SyntaxError", "line 1"]),
    ("name-error", "name_error.py:Foo", ["NameError", "name_error.py:2", "undefined_name"]),
    ("missing-file", "nowhere.py:Foo", ["not found"]),
    ("missing-attribute", "keyboard.py:Layr", ["has no 'Layr'", "did you mean 'Layer'"]),
    ("missing-module", "no_such_pkg.mod:Foo", ["module 'no_such_pkg.mod' not found"]),
    ("no-forward", "functions.py:NoForward", ["NoForward defines no forward"]),
    ("no-backward", "functions.py:NoBackward", ["NoBackward defines no backward"]),
    ("not-a-class", "functions.py:NOT_A_CLASS", ["not an nn.Module or autograd.Function"]),
    ("bad-import-path", "':Foo'", ["model.1.type", "bad import path"]),
]


@pytest.mark.parametrize("ref, words", [c[1:] for c in USER_CASES], ids=[c[0] for c in USER_CASES])
def test_user_code_refused_at_its_config_line(tmp_path, ref, words):
    for name, text in USER_CODE.items():
        write(str(tmp_path / name), text)
    config = write(
        str(tmp_path / "c.yaml"),
        "data: {dataset: sine, n: 32}\nmodel:\n  - {type: Linear, in_features: auto, "
        f"out_features: 4}}\n  - {ref}\nloss: mse\ntrain: {{epochs: 1, batch_size: 8}}\n",
    )
    res = run_agrad("train", config, cwd=str(tmp_path))
    assert_refused(res, "c.yaml:4:", *words)
    assert no_run_folder(str(tmp_path))
