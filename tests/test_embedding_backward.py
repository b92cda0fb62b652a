"""Embedding's weight gradient by sort + reduceat (backend/rows.py) against torch and against the
scatter-add it replaces (still used under create_graph and on device arrays)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import autogradcli as ag
from autogradcli.backend.rows import sum_rows_at


@pytest.mark.parametrize("ishape", [(16, 64), (7,), (0,), (3, 1)])
@pytest.mark.parametrize("kw", [{}, {"padding_idx": 2}, {"scale_grad_by_freq": True}])
def test_embedding_grad_matches_torch(ishape: Any, kw: Any) -> None:
    rng = np.random.default_rng(0)
    n, d = 9, 5
    w = rng.standard_normal((n, d)).astype(np.float32)
    idx = rng.integers(0, n, ishape)
    g = rng.standard_normal((*ishape, d)).astype(np.float32)
    wa, wt = ag.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    ag.nn.functional.embedding(ag.tensor(idx), wa, **kw).backward(ag.tensor(g))
    torch.nn.functional.embedding(torch.tensor(idx), wt, **kw).backward(torch.tensor(g))
    assert wa.grad.dtype == ag.float32
    np.testing.assert_allclose(wa.grad.numpy(), wt.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_sum_rows_equals_add_at() -> None:
    rng = np.random.default_rng(1)
    idx = rng.integers(0, 50, (4, 30))
    g = rng.standard_normal((4, 30, 8))
    want = np.zeros((50, 8))
    np.add.at(want, idx.reshape(-1), g.reshape(-1, 8))
    np.testing.assert_allclose(sum_rows_at(idx, g, 50), want, rtol=1e-12)


def test_embedding_create_graph_and_gradcheck() -> None:
    rng = np.random.default_rng(2)
    w = ag.tensor(rng.standard_normal((6, 3)), requires_grad=True)
    idx = ag.tensor(np.array([[0, 2, 2], [5, 0, 1]]))

    def f(w: Any) -> Any:
        return ag.nn.functional.embedding(idx, w) ** 2

    assert ag.autograd.gradcheck(f, (w,))
    assert ag.autograd.gradgradcheck(f, (w,))
    y = f(w).sum()
    (plain,) = ag.autograd.grad(y, w, retain_graph=True)
    (graph,) = ag.autograd.grad(y, w, create_graph=True)
    np.testing.assert_allclose(plain.numpy(), graph.detach().numpy())


def test_embedding_grad_on_the_strict_device(strict_cuda: Any) -> None:
    w = np.arange(12, dtype=np.float32).reshape(4, 3)
    idx = np.array([1, 3, 1])
    wd = ag.tensor(w, device="cuda", requires_grad=True)
    ag.nn.functional.embedding(ag.tensor(idx, device="cuda"), wd).sum().backward()
    np.testing.assert_array_equal(wd.grad.cpu().numpy()[:, 0], [0, 2, 0, 1])
