"""Matrix products with an inner dimension of 1 (backend/dots.py ``matmul``): numpy's matmul
takes 24 us for (128 x 1) @ (1 x 185), so they run as the broadcast product; bit for bit the
same result (shape, dtype, batch broadcasting), and the ops using it against torch."""

from __future__ import annotations

import numpy as np
import pytest

import autogradcli as ag
from autogradcli.backend import dots


@pytest.mark.parametrize(
    "a_shape, b_shape",
    [((128, 1), (1, 185)), ((3, 4, 1), (1, 5)), ((2, 1, 6, 1), (3, 1, 7)), ((4, 2), (2, 3))],
)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_same_as_numpys_matmul(a_shape, b_shape, dtype):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal(a_shape) * 10).astype(dtype)
    b = (rng.standard_normal(b_shape) * 10).astype(dtype)
    got, want = dots.matmul(np, a, b), np.matmul(a, b)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


def test_vectors_keep_matmuls_meaning():
    """1-D operands are not matrices: (1,) @ (1, n) is a vector, as numpy's matmul gives."""
    a, b = np.array([2.0]), np.arange(3.0).reshape(1, 3)
    assert dots.matmul(np, a, b).shape == np.matmul(a, b).shape == (3,)


def test_batch_of_one_row_gradients_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    xa = rng.standard_normal((1, 185)).astype(np.float32)
    wa = rng.standard_normal((128, 185)).astype(np.float32)
    ma = rng.standard_normal((1, 7)).astype(np.float32)
    x, tx = ag.tensor(xa, requires_grad=True), torch.tensor(xa, requires_grad=True)
    w, tw = ag.tensor(wa, requires_grad=True), torch.tensor(wa, requires_grad=True)
    m, tm = ag.tensor(ma, requires_grad=True), torch.tensor(ma, requires_grad=True)
    y = ag.nn.functional.linear(x, w).T @ m  # (128, 1) @ (1, 7): an outer product
    ty = torch.nn.functional.linear(tx, tw).T @ tm
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-4)
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    for a, t in ((x, tx), (w, tw), (m, tm)):
        np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-2)
