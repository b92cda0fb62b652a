"""autogradcli.data: datasets, seeded DataLoader order, collate, splits, loaders and generators."""

from __future__ import annotations

import gzip
from collections import namedtuple

import numpy as np
import pytest

import autogradcli as ag
from autogradcli import data


def order_of(loader) -> list[int]:
    return [int(v) for batch in loader for v in batch[0].tolist()]


def index_dataset(n: int = 10) -> data.TensorDataset:
    return data.TensorDataset(ag.arange(n), ag.arange(n) * 10)


# ---------------------------------------------------------------- datasets
def test_tensor_dataset_items_and_size_check():
    ds = index_dataset(5)
    assert len(ds) == 5
    x, y = ds[3]
    assert x.item() == 3 and y.item() == 30
    with pytest.raises(ValueError, match=r"Size mismatch.*\[5, 4\]"):
        data.TensorDataset(ag.zeros(5, 2), ag.zeros(4))


def test_subset_concat_and_add():
    ds = index_dataset(6)
    sub = data.Subset(ds, [4, 0, 2])
    assert [int(sub[i][0]) for i in range(3)] == [4, 0, 2]
    both = ds + sub
    assert isinstance(both, data.ConcatDataset) and len(both) == 9
    assert int(both[6][0]) == 4 and int(both[-1][0]) == 2
    with pytest.raises(IndexError):
        both[9]


def test_random_split_sizes_disjoint_and_seeded():
    ds = index_dataset(10)
    parts = data.random_split(ds, [0.5, 0.3, 0.2], generator=data.Generator(1))
    assert [len(p) for p in parts] == [5, 3, 2]
    seen = [i for p in parts for i in p.indices]
    assert sorted(seen) == list(range(10))
    again = data.random_split(ds, [5, 3, 2], generator=data.Generator(1))
    assert [p.indices for p in again] == [p.indices for p in parts]
    assert [len(p) for p in data.random_split(ds, [0.34, 0.33, 0.33])] == [4, 3, 3]
    with pytest.raises(ValueError, match="Sum of input lengths"):
        data.random_split(ds, [3, 3])


# ---------------------------------------------------------------- DataLoader
def test_sequential_batches_len_and_drop_last():
    ds = index_dataset(10)
    loader = data.DataLoader(ds, batch_size=4)
    assert len(loader) == 3
    batches = list(loader)
    assert [b[0].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert batches[0][1].tolist() == [0, 10, 20, 30]
    dropped = data.DataLoader(ds, batch_size=4, drop_last=True)
    assert len(dropped) == 2 and [len(b[0]) for b in dropped] == [4, 4]


def test_shuffle_repeats_with_manual_seed_and_changes_per_epoch():
    ds = index_dataset(20)
    loader = data.DataLoader(ds, batch_size=3, shuffle=True)
    ag.manual_seed(7)
    first, second = order_of(loader), order_of(loader)
    ag.manual_seed(7)
    assert order_of(loader) == first and order_of(loader) == second
    assert first != second and sorted(first) == list(range(20))


def test_shuffle_with_generator_and_its_state_resumes_the_order():
    ds = index_dataset(20)
    gen = data.Generator().manual_seed(3)
    loader = data.DataLoader(ds, batch_size=5, shuffle=True, generator=gen)
    epoch1 = order_of(loader)
    state = gen.get_state()
    epoch2 = order_of(loader)
    ag.manual_seed(0)  # the global RNG does not affect a loader with its own generator
    gen.set_state(state)
    assert order_of(loader) == epoch2
    gen.manual_seed(3)
    assert order_of(loader) == epoch1
    restored = data.Generator().set_state(state)
    assert restored.get_state() == state


def test_fast_path_matches_per_item_collate():
    ds = data.TensorDataset(ag.randn(12, 3), ag.arange(12))
    sub = data.random_split(ds, [8, 4], generator=data.Generator(0))[0]
    fast = list(data.DataLoader(sub, batch_size=3))
    slow = list(data.DataLoader(sub, batch_size=3, collate_fn=lambda b: data.default_collate(b)))
    assert len(fast) == len(slow) == 3
    for f, s in zip(fast, slow):
        for a, b in zip(f, s):
            np.testing.assert_array_equal(a.numpy(), b.numpy())
            assert a.dtype == b.dtype


def test_collate_dicts_tuples_numbers_and_arrays():
    Point = namedtuple("Point", "x y")
    samples = [
        {"img": np.full((2, 2), i, dtype=np.float32), "label": i, "w": 0.5, "name": f"s{i}",
         "pair": (ag.tensor([i, i]), True), "pt": Point(i, -i)}
        for i in range(3)
    ]  # fmt: skip
    batch = data.default_collate(samples)
    assert tuple(batch["img"].shape) == (3, 2, 2) and batch["img"].dtype == ag.float32
    assert batch["label"].tolist() == [0, 1, 2] and batch["label"].dtype == ag.int64
    assert batch["w"].dtype == ag.float64 and batch["name"] == ["s0", "s1", "s2"]
    assert batch["pair"][0].tolist() == [[0, 0], [1, 1], [2, 2]]
    assert batch["pair"][1].dtype == ag.bool
    assert isinstance(batch["pt"], Point) and batch["pt"].y.tolist() == [0, -1, -2]
    with pytest.raises(RuntimeError, match="equal size"):
        data.default_collate([ag.zeros(2), ag.zeros(3)])


class Squares(data.Dataset):
    def __len__(self):
        return 5

    def __getitem__(self, i):
        return {"x": ag.tensor([float(i)]), "y": i * i}


def test_custom_dataset_through_loader():
    batches = list(data.DataLoader(Squares(), batch_size=2))
    assert len(batches) == 3
    assert batches[1]["y"].tolist() == [4, 9] and tuple(batches[0]["x"].shape) == (2, 1)
    with pytest.raises(ValueError, match="batch_size"):
        data.DataLoader(Squares(), batch_size=0)


# ---------------------------------------------------------------- bundled and file loaders
def test_digits_shapes_dtypes_and_classes():
    ds = data.load_digits()
    x, y = ds.tensors
    assert tuple(x.shape) == (1797, 1, 8, 8) and x.dtype == ag.float32
    assert y.dtype == ag.int64 and tuple(y.shape) == (1797,)
    assert x.numpy().min() == 0.0 and x.numpy().max() == 1.0
    counts = np.bincount(y.numpy(), minlength=10)
    assert len(counts) == 10 and counts.sum() == 1797 and counts.min() >= 170
    flat = data.load_digits(flatten=True).tensors[0]
    assert tuple(flat.shape) == (1797, 64)
    np.testing.assert_array_equal(flat.numpy(), x.numpy().reshape(1797, 64))


def test_load_npz(tmp_path):
    path = tmp_path / "d.npz"
    np.savez(path, x=np.ones((4, 3)), y=np.arange(4, dtype=np.uint8), feats=np.zeros((4, 2)))
    x, y = data.load_npz(path).tensors
    assert x.dtype == ag.float32 and y.dtype == ag.int64 and tuple(x.shape) == (4, 3)
    (only,) = data.load_npz(path, x_key="feats", y_key=None).tensors
    assert tuple(only.shape) == (4, 2)
    with pytest.raises(ValueError, match=r"d\.npz.*no array 'labels'"):
        data.load_npz(path, y_key="labels")
    bad = tmp_path / "bad.npz"
    bad.write_text("nope")
    with pytest.raises(ValueError, match=r"bad\.npz"):
        data.load_npz(bad)


def test_load_csv(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("a,b,label\n1,2,0\n3.5,4,1\n\n5,6,2\n")
    x, y = data.load_csv(path).tensors
    assert x.tolist() == [[1.0, 2.0], [3.5, 4.0], [5.0, 6.0]] and y.tolist() == [0, 1, 2]
    assert y.dtype == ag.int64
    x2, y2 = data.load_csv(path, target_column="a").tensors
    assert y2.dtype == ag.float32 and y2.tolist() == [1.0, 3.5, 5.0] and tuple(x2.shape) == (3, 2)
    plain = tmp_path / "p.tsv"
    plain.write_text("1\t2\n3\t4\n")
    (x3,) = data.load_csv(plain, target_column=None, delimiter="\t").tensors
    assert x3.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    broken = tmp_path / "broken.csv"
    broken.write_text("1,2\n3,oops\n")
    with pytest.raises(ValueError, match=r"broken\.csv', line 2"):
        data.load_csv(broken)


def write_idx(path, arr: np.ndarray, code: int = 0x08) -> None:
    head = bytes([0, 0, code, arr.ndim]) + b"".join(d.to_bytes(4, "big") for d in arr.shape)
    payload = head + arr.astype(arr.dtype.newbyteorder(">")).tobytes()
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "wb") as fh:
        fh.write(payload)


def test_load_idx_plain_and_gzipped(tmp_path):
    images = np.arange(5 * 3 * 4, dtype=np.uint8).reshape(5, 3, 4)
    labels = np.array([3, 1, 4, 1, 5], dtype=np.uint8)
    write_idx(tmp_path / "img-idx3-ubyte.gz", images)
    write_idx(tmp_path / "lab-idx1-ubyte", labels)
    x, y = data.load_idx(tmp_path / "img-idx3-ubyte.gz", tmp_path / "lab-idx1-ubyte").tensors
    assert tuple(x.shape) == (5, 1, 3, 4) and x.dtype == ag.float32
    np.testing.assert_allclose(x.numpy()[:, 0], images / 255.0, rtol=1e-6)
    assert y.tolist() == [3, 1, 4, 1, 5] and y.dtype == ag.int64
    (flat,) = data.load_idx(tmp_path / "img-idx3-ubyte.gz", flatten=True).tensors
    assert tuple(flat.shape) == (5, 12)
    ints = np.array([-1, 70000], dtype=np.int32)
    write_idx(tmp_path / "ints.idx", ints, code=0x0C)
    assert data.read_idx(tmp_path / "ints.idx").tolist() == [-1, 70000]


def test_load_idx_errors_name_the_file(tmp_path):
    bad = tmp_path / "bad-magic.idx"
    bad.write_bytes(b"\x12\x34\x08\x01" + (3).to_bytes(4, "big") + b"abc")
    with pytest.raises(ValueError, match=r"bad-magic\.idx.*magic number 12340801"):
        data.read_idx(bad)
    short = tmp_path / "short.idx"
    write_idx(short, np.zeros(10, dtype=np.uint8))
    short.write_bytes(short.read_bytes()[:-3])
    with pytest.raises(ValueError, match=r"short\.idx.*truncated"):
        data.read_idx(short)
    write_idx(tmp_path / "img.idx", np.zeros((3, 2, 2), dtype=np.uint8))
    write_idx(tmp_path / "lab.idx", np.zeros(4, dtype=np.uint8))
    with pytest.raises(ValueError, match=r"lab\.idx.*expected 3 labels"):
        data.load_idx(tmp_path / "img.idx", tmp_path / "lab.idx")


# ---------------------------------------------------------------- synthetic
def test_synthetic_generators_are_deterministic_by_seed():
    a, b = data.sine_regression(50, noise=0.1), data.sine_regression(50, noise=0.1)
    np.testing.assert_array_equal(a.tensors[1].numpy(), b.tensors[1].numpy())
    c = data.sine_regression(50, noise=0.1, seed=1)
    assert not np.array_equal(a.tensors[0].numpy(), c.tensors[0].numpy())
    clean = data.sine_regression(30)
    np.testing.assert_allclose(
        clean.tensors[1].numpy(), np.sin(clean.tensors[0].numpy()), atol=1e-6
    )
    assert tuple(a.tensors[0].shape) == (50, 1) and a.tensors[0].dtype == ag.float32

    ag.manual_seed(5)
    before = ag.get_rng_state()
    s1, s2 = data.spirals(40, classes=4, seed=2), data.spirals(40, classes=4, seed=2)
    assert ag.get_rng_state() == before  # the global stream is untouched
    np.testing.assert_array_equal(s1.tensors[0].numpy(), s2.tensors[0].numpy())
    assert tuple(s1.tensors[0].shape) == (160, 2) and s1.tensors[1].dtype == ag.int64
    assert np.bincount(s1.tensors[1].numpy()).tolist() == [40, 40, 40, 40]
    other = data.spirals(40, classes=4, seed=3).tensors[0].numpy()
    assert not np.array_equal(s1.tensors[0].numpy(), other)


def test_utils_data_is_torch_module_path() -> None:
    """``autogradcli.utils.data`` (and its submodules) hold the very objects of ``autogradcli.data``,
    and the internal helpers moved to ``autogradcli._utils``."""
    import autogradcli.utils.data as ud
    from autogradcli._utils.hooks import RemovableHandle as Internal
    from autogradcli.utils.data.dataloader import default_collate
    from autogradcli.utils.data.sampler import Sampler
    from autogradcli.utils.hooks import RemovableHandle

    assert ag.utils.data is ud
    assert ud.DataLoader is ag.data.DataLoader and ud.TensorDataset is ag.data.TensorDataset
    assert default_collate is ag.data.default_collate and Sampler is ag.data.Sampler
    assert RemovableHandle is Internal
