"""ReLU's forward on big numpy arrays (ops/relu_array.py): rows against a cached row of
zeros, bit for bit numpy's ``maximum(x, 0)`` and torch's relu, at and around the size limit."""

from __future__ import annotations

import numpy as np
import pytest

import autogradcli as ag
from autogradcli.ops.relu_array import _ZERO_ROW
from autogradcli.ops.relu_array import relu_array as _relu_array

LIMIT = 4 * _ZERO_ROW  # the smallest array taken as rows


def _special(n: int, dtype: str) -> np.ndarray:
    a = np.random.default_rng(n).standard_normal(n).astype(dtype)
    a[:6] = [np.nan, -np.nan, -0.0, 0.0, np.inf, -np.inf]
    a[-1] = -np.nan
    return a


@pytest.mark.parametrize("n", [LIMIT - 1, LIMIT, LIMIT + 7])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_rows_give_numpys_bits(n: int, dtype: str) -> None:
    a = _special(n, dtype)
    want = np.maximum(a, 0)
    got = _relu_array(a, False)
    assert got.dtype == a.dtype and got.flags.c_contiguous
    assert np.array_equal(got.view(f"u{a.itemsize}"), want.view(f"u{a.itemsize}"))
    b = a.copy()
    assert _relu_array(b, True) is b and np.array_equal(
        b.view(f"u{a.itemsize}"), got.view(f"u{a.itemsize}")
    )


def test_non_contiguous_and_integer_inputs() -> None:
    a = _special(2 * LIMIT, "float32").reshape(2, -1)
    t = a.T  # not C-contiguous: the scalar form, same layout as numpy's
    assert np.array_equal(_relu_array(t, False), np.maximum(t, 0), equal_nan=True)
    i = np.arange(-LIMIT, LIMIT, dtype=np.int64)
    assert np.array_equal(_relu_array(i, False), np.maximum(i, 0))


def test_matches_torch_with_gradients() -> None:
    torch = pytest.importorskip("torch")
    a = _special(LIMIT + 64, "float32").reshape(-1, 1)[6:-1]  # finite (gradients), rows + tail
    g = np.random.default_rng(1).standard_normal(a.shape).astype(np.float32)
    x, tx = ag.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    y, ty = x.relu(), tx.relu()
    y.backward(ag.tensor(g))
    ty.backward(torch.tensor(g))
    assert np.array_equal(y.detach().numpy(), ty.detach().numpy())
    assert np.array_equal(x.grad.numpy(), tx.grad.numpy())
