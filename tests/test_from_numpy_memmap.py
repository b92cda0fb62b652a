"""ndarray subclasses (``np.memmap``, ``np.matrix``, a user's subclass) work as any ndarray does:
``from_numpy`` shares their memory without reading a file into memory, and every op takes the
tensor. nanoGPT's data loading is the case that must work, against PyTorch on the same file."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import autogradcli as ag


def _tokens(tmp_path: Path, n: int = 1000) -> tuple[np.memmap, np.ndarray]:
    """A uint16 token file as nanoGPT writes it, opened read-only, and its values."""
    values = (np.arange(n, dtype=np.int64) * 7919 % 50257).astype(np.uint16)
    path = tmp_path / "train.bin"
    values.tofile(path)
    return np.memmap(path, dtype=np.uint16, mode="r"), values


def _floats(tmp_path: Path, mode: str) -> np.memmap:
    path = tmp_path / "x.bin"
    np.arange(12, dtype=np.float32).tofile(path)
    return np.memmap(path, dtype=np.float32, mode=mode, shape=(3, 4))


def test_nanogpt_batch_from_a_memmap_matches_torch(tmp_path: Path) -> None:
    """``stack([from_numpy(data[i:i+block].astype(np.int64)) for i in ix])`` as in nanoGPT."""
    torch = pytest.importorskip("torch")
    data, values = _tokens(tmp_path)
    ix, block = [0, 17, 500, 1000 - 9], 8

    def batch(m: Any) -> Any:
        x = m.stack([m.from_numpy(data[i : i + block].astype(np.int64)) for i in ix])
        y = m.stack([m.from_numpy(data[i + 1 : i + 1 + block].astype(np.int64)) for i in ix])
        return x, y

    (ax, ay), (tx, ty) = batch(ag), batch(torch)
    for a, t in ((ax, tx), (ay, ty)):
        assert str(a.dtype).split(".")[-1] == str(t.dtype).split(".")[-1] == "int64"
        np.testing.assert_array_equal(a.numpy(), t.numpy())
    np.testing.assert_array_equal(ax.numpy()[1], values[17:25])


def test_from_numpy_of_a_memmap_shares_the_file_memory(tmp_path: Path) -> None:
    """No copy: the tensor's array is a view of the memmap, and a write reaches the file."""
    torch = pytest.importorskip("torch")
    mm = _floats(tmp_path, "r+")
    a, t = ag.from_numpy(mm), torch.from_numpy(mm)
    assert np.shares_memory(a.numpy(), mm)
    assert a.numpy().base is mm
    np.testing.assert_array_equal(a.numpy(), t.numpy())
    row = ag.from_numpy(mm[1])
    assert np.shares_memory(row.numpy(), mm)
    both = ag.stack([ag.from_numpy(mm[0]), row])
    np.testing.assert_array_equal(both.numpy(), torch.stack([t[0], t[1]]).numpy())
    a.mul_(2.0)
    mm.flush()
    on_disk = np.fromfile(tmp_path / "x.bin", dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(on_disk, np.arange(12, dtype=np.float32).reshape(3, 4) * 2)


def test_ops_take_a_tensor_made_from_a_memmap(tmp_path: Path) -> None:
    """Arithmetic, reductions, indexing, matmul and autograd on a memmap-backed tensor."""
    torch = pytest.importorskip("torch")
    mm = _floats(tmp_path, "r+")
    idx_path = tmp_path / "i.bin"
    np.array([2, 0], dtype=np.int64).tofile(idx_path)
    idx = np.memmap(idx_path, dtype=np.int64, mode="r")

    def run(m: Any) -> list[Any]:
        x = m.from_numpy(mm)
        w = m.ones(4, 2, requires_grad=True)
        out = (x @ w).sum()
        out.backward()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # both warn on the read-only index array
            picked = x[m.from_numpy(idx)]
        rows = x[idx]  # the memmap itself as an index
        batch = m.utils.data.default_collate([mm[0], mm[2]])
        return [x + 1, x.mean(0), m.cat([x, x]), picked, rows, batch, out, w.grad, x.T]

    for a, t in zip(run(ag), run(torch)):
        np.testing.assert_allclose(a.detach().numpy(), t.detach().numpy(), rtol=1e-6)


def test_a_uint16_memmap_slice_converts_as_its_values(tmp_path: Path) -> None:
    """autogradcli has no uint16 dtype: a uint16 slice is widened to int64 (a copy of the slice,
    not the file) with torch's values."""
    torch = pytest.importorskip("torch")
    data, _ = _tokens(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # read-only: both libraries warn
        a, t = ag.from_numpy(data[5:13]), torch.from_numpy(data[5:13])
    assert str(a.dtype).split(".")[-1] == "int64"
    np.testing.assert_array_equal(a.numpy(), t.numpy().astype(np.int64))
    np.testing.assert_array_equal(ag.stack([a, a]).numpy()[1], a.numpy())


def test_a_read_only_memmap_warns_as_torch_and_refuses_writes(tmp_path: Path) -> None:
    """PyTorch warns (once per program, so not checked here) that the array is not writable, then
    writes anyway: a crash for a memmap opened with mode='r'. autogradcli warns on every sharing
    conversion and refuses the write clearly."""
    torch = pytest.importorskip("torch")
    mm = _floats(tmp_path, "r")
    with pytest.warns(UserWarning, match="not writable"):
        x = ag.from_numpy(mm)
    with pytest.warns(UserWarning, match="not writable"):
        ag.as_tensor(mm)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a copy does not warn, in either library
        ag.tensor(mm)
        torch.tensor(mm)
        ag.as_tensor(mm, dtype=ag.float64)
    with pytest.raises(RuntimeError, match="read-only"):
        x.add_(1.0)
    np.testing.assert_array_equal(np.asarray(mm), np.arange(12, dtype=np.float32).reshape(3, 4))
    y = x.clone()
    y.add_(1.0)
    assert float(y.sum()) == float(np.arange(12).sum() + 12)


class _Tagged(np.ndarray):
    """A user's ndarray subclass."""


@pytest.mark.parametrize(
    "make",
    [
        lambda: np.matrix([[1.0, 2.0], [3.0, 4.0]]),
        lambda: np.arange(6.0).reshape(2, 3).view(_Tagged),
        lambda: np.arange(4, dtype=np.int32).view(_Tagged),
    ],
    ids=["matrix", "subclass_float64", "subclass_int32"],
)
@pytest.mark.parametrize("fn", ["from_numpy", "as_tensor", "tensor"])
def test_ndarray_subclasses_convert_as_torch_does(make: Any, fn: str) -> None:
    """Same values and dtype as torch; ``from_numpy``/``as_tensor`` share the memory."""
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)  # np.matrix
        arr = make()
    a, t = getattr(ag, fn)(arr), getattr(torch, fn)(arr)
    assert type(a._data) is np.ndarray
    assert str(a.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_array_equal(a.numpy(), t.numpy())
    assert np.shares_memory(a.numpy(), arr) == np.shares_memory(t.numpy(), arr)
    np.testing.assert_array_equal((a * 2).sum(0).numpy(), (t * 2).sum(0).numpy())


def test_from_numpy_refuses_what_torch_refuses() -> None:
    """Not an ndarray: TypeError in both (a numpy scalar and a list included)."""
    torch = pytest.importorskip("torch")
    for bad in (np.float32(2.0), [1.0, 2.0]):
        with pytest.raises(TypeError):
            torch.from_numpy(bad)
        with pytest.raises(TypeError, match=r"expected np\.ndarray"):
            ag.from_numpy(bad)
