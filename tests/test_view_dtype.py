"""``Tensor.view(dtype)`` reinterprets the bits as PyTorch does (checked against PyTorch)."""

from __future__ import annotations

import numpy as np
import pytest

import autogradcli as ag

# (source dtype, target dtype, how the source is taken from a (4, 4) float array)
CASES = [
    ("float32", "int32", lambda t: t),
    ("float32", "int16", lambda t: t),
    ("float32", "uint8", lambda t: t),
    ("float32", "float64", lambda t: t),
    ("float64", "int64", lambda t: t),
    ("float64", "float16", lambda t: t),
    ("int64", "float32", lambda t: t),
    ("bool", "uint8", lambda t: t),
    ("uint8", "int32", lambda t: t),
    ("float32", "float64", lambda t: t[::2]),
    ("float32", "int16", lambda t: t[:, 1:]),
    ("float32", "int32", lambda t: t.t()),  # same size: any strides
    ("float32", "int32", lambda t: t[0, 0]),  # same size: 0-d
    # errors: 0-d, size(-1), stride(-1), storage_offset, stride(i)
    ("float32", "float64", lambda t: t[0, 0]),
    ("float32", "int16", lambda t: t[0, 0]),
    ("float32", "float64", lambda t: t[:, :3]),
    ("float32", "float64", lambda t: t[:, ::2]),
    ("float32", "int16", lambda t: t.t()),
    ("float32", "float64", lambda t: t[:, 1:3]),
    ("float32", "float64", lambda t: t.reshape(16)[:15].reshape(3, 5)[:, :2]),
    ("float32", "float64", lambda t: t[:, :2]),
]


@pytest.mark.parametrize("src,dst,take", CASES)
def test_view_dtype_matches_torch(src, dst, take):
    torch = pytest.importorskip("torch")
    base = np.arange(16, dtype=np.float64).reshape(4, 4) * 1.25 - 3
    if src == "bool":
        base = base > 0
    data = base.astype(src)
    ours, theirs = take(ag.tensor(data)), take(torch.tensor(data))
    try:
        expected = theirs.view(getattr(torch, dst))
    except RuntimeError as err:
        with pytest.raises(RuntimeError) as ours_err:
            ours.view(getattr(ag, dst))
        assert str(ours_err.value) == str(err)
        return
    got = ours.view(getattr(ag, dst))
    assert got.dtype == getattr(ag, dst)
    assert tuple(got.shape) == tuple(expected.shape)
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


def test_view_dtype_shares_memory_and_is_not_differentiable():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    bits = x.view(ag.int32)
    assert not bits.requires_grad and bits.grad_fn is None
    y = ag.tensor([1.0, -2.0])
    b = y.view(ag.int32)
    b[1] = 0  # clears -2.0's bits: 0.0
    assert y.tolist() == [1.0, 0.0]
    assert y._version == b._version == 1
