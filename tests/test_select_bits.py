"""The branch-free ``where`` on numpy arrays (backend/select.py): bit for bit numpy's ``where``
(dtype, broadcast shape, NaN payloads, -0.0) on both sides of its size limit, and the ops built on
it (torch.where, masked_fill, leaky_relu, threshold, softplus, elu) against torch."""

from __future__ import annotations

import numpy as np
import pytest

import autogradcli as ag
from autogradcli.backend import select


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("n", [select._SMALL - 1, select._SMALL, 3 * select._SMALL + 5])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "complex64"])
def test_bits_match_numpy_where(n, dtype):
    rng = np.random.default_rng(n)
    a = rng.standard_normal(n).astype(dtype)
    b = rng.standard_normal(n).astype(dtype)
    if a.dtype.kind == "f":
        a[:4] = [np.nan, -0.0, np.inf, -np.inf]
        b[:4] = [-np.nan, 0.0, -np.inf, np.nan]
    cond = rng.random(n) < 0.5
    assert _same(select.where(np, cond, a, b), np.where(cond, a, b))
    assert _same(select.where(np, cond, a, 0.0), np.where(cond, a, 0.0))  # weak scalar
    assert _same(select.where(np, cond, 2, b), np.where(cond, 2, b))


def test_broadcasting_mixed_dtypes_and_non_bool_conditions():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 4, 64, 64)).astype(np.float32)
    causal = np.tril(np.ones((64, 64), bool))
    for cond, a, b in [
        (causal, x, -np.inf),  # a causal mask over heads (masked_fill's case)
        (causal[None, None], -np.inf, x),
        (x > 0, x, x.astype(np.float64)),  # promoted to float64
        ((x > 0).astype(np.uint8), x, 0),  # a non-bool condition: nonzero is True
        (x[0, 0] > 0, np.float32(1), np.float32(0.5)),  # two scalars, one condition's shape
    ]:
        assert _same(select.where(np, cond, a, b), np.where(cond, a, b))


def test_ops_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    a = rng.standard_normal((64, 128)).astype(np.float32)
    a[0, :3] = [np.nan, -0.0, 0.0]
    mask = rng.random((64, 128)) < 0.3
    g = rng.standard_normal(a.shape).astype(np.float32)
    cases = [
        (lambda m, x: m.where(torch.tensor(mask) if m is torch else ag.tensor(mask), x, -x)),
        (lambda m, x: x.masked_fill(m.tensor(mask), -1e9)),
        (lambda m, x: m.nn.functional.leaky_relu(x, 0.2)),
        (lambda m, x: m.nn.functional.threshold(x, 0.1, -2.0)),
        (lambda m, x: m.nn.functional.softplus(x, 2.0, 1.0)),
        (lambda m, x: m.nn.functional.elu(x)),
    ]
    for fn in cases:
        x, tx = ag.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
        y, ty = fn(ag, x), fn(torch, tx)
        y.backward(ag.tensor(g))
        ty.backward(torch.tensor(g))
        np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6, atol=1e-7)
