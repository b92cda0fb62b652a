"""ReLU's forward on big numpy arrays (ops/relu_array.py): rows against a cached row of
zeros, bit for bit numpy's ``maximum(0, x)`` and torch's relu (relu(-0.0) is -0.0, NaN stays
NaN and passes its gradient), at and around the size limit."""

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
    want = np.maximum(0, a)
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
    assert np.array_equal(_relu_array(t, False), np.maximum(0, t), equal_nan=True)
    i = np.arange(-LIMIT, LIMIT, dtype=np.int64)
    assert np.array_equal(_relu_array(i, False), np.maximum(0, i))


@pytest.mark.parametrize("n", [16, LIMIT + 64])
def test_matches_torch_bits_and_gradients(n: int) -> None:
    """Values bit for bit (-0.0 and NaN included) and gradients (g passes where y is NaN, 0 where
    y <= 0) against torch, on the scalar form (16) and on rows with a tail."""
    torch = pytest.importorskip("torch")
    a = _special(n, "float32")
    g = np.random.default_rng(1).standard_normal(a.shape).astype(np.float32)
    x, tx = ag.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    y, ty = x.relu(), tx.relu()
    y.backward(ag.tensor(g))
    ty.backward(torch.tensor(g))
    assert np.array_equal(y.detach().numpy().view("u4"), ty.detach().numpy().view("u4"))
    assert np.array_equal(x.grad.numpy(), tx.grad.numpy())
    assert x.grad.numpy()[0] == g[0] and x.grad.numpy()[2] == 0  # NaN passes g; -0.0 gives 0
