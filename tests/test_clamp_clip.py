"""clamp of float numpy tensors to number bounds runs as numpy's clip (ops/clamp_where.py): the
values bit for bit torch's (NaN inputs and bounds, -0.0, min > max, one bound), gradients too."""

from __future__ import annotations

import numpy as np
import pytest

import autogradcli as ag
from autogradcli.ops import clamp_where

BOUNDS = [(0.0, 1.0), (-0.5, None), (None, 0.0), (1.0, 0.0), (float("nan"), 1.0), (0, 2)]


@pytest.mark.parametrize("lo, hi", BOUNDS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_clip_path_matches_torch_bits(lo, hi, dtype):
    torch = pytest.importorskip("torch")
    a = np.array([np.nan, -np.inf, -1.0, -0.0, 0.0, 0.25, 1.0, 2.0, np.inf], dtype)
    g = np.arange(1.0, a.size + 1, dtype=dtype)
    assert clamp_where._clips(a, lo, hi)
    x, tx = ag.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    y, ty = x.clamp(lo, hi), tx.clamp(lo, hi)
    y.backward(ag.tensor(g))
    ty.backward(torch.tensor(g))
    bits = f"u{a.itemsize}"
    assert y.dtype == x.dtype
    assert np.array_equal(y.detach().numpy().view(bits), ty.detach().numpy().view(bits))
    assert np.array_equal(x.grad.numpy(), tx.grad.numpy(), equal_nan=True)


def test_other_operands_keep_the_ufunc_path():
    """Integer tensors, tensor bounds and float16 are not clipped by numpy's clip."""
    assert not clamp_where._clips(np.arange(3), 0, 1)
    assert not clamp_where._clips(np.zeros(3, np.float16), 0.0, 1.0)
    assert not clamp_where._clips(np.zeros(3, np.float32), ag.tensor(0.0), 1.0)
    x = ag.arange(-3, 4)
    assert x.clamp(-1, 1).dtype == ag.int64
    assert x.clamp(-1, 1).tolist() == [-1, -1, -1, 0, 1, 1, 1]
