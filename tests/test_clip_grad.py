"""Gradient clipping against torch.nn.utils: total norms of every order, the scaling, values,
non-finite norms and parameters without gradients."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from lazy_torch import torch

import autogradcli as ag
from autogradcli.nn.utils import clip_grad_norm_, clip_grad_value_, get_total_norm

SHAPES = [(3, 4), (5,), (2, 2, 2)]


def _pair(dtype: str, scale: float = 1.0, seed: int = 0) -> tuple[list[Any], list[Any]]:
    rng = np.random.default_rng(seed)
    ours, theirs = [], []
    for s in SHAPES:
        g = (rng.standard_normal(s) * scale).astype(dtype)
        p, tp = (
            ag.zeros(*s, dtype=dtype, requires_grad=True),
            torch.zeros(s, dtype=getattr(torch, dtype), requires_grad=True),
        )
        p.grad, tp.grad = ag.tensor(g.copy()), torch.tensor(g.copy())
        ours.append(p)
        theirs.append(tp)
    no_grad = ag.zeros(2, dtype=dtype, requires_grad=True)
    ours.append(no_grad)
    theirs.append(torch.zeros(2, dtype=getattr(torch, dtype), requires_grad=True))
    return ours, theirs


TOL = {"float64": dict(rtol=1e-12, atol=1e-12), "float32": dict(rtol=1e-5, atol=1e-6)}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, 0.5, math.inf, "inf", 0.0])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm_matches_torch(dtype: str, norm_type: Any, max_norm: float) -> None:
    ours, theirs = _pair(dtype)
    total = clip_grad_norm_(ours, max_norm, norm_type=norm_type)
    ttotal = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type=norm_type)
    assert total.dtype == getattr(ag, dtype) and total.shape == ()
    np.testing.assert_allclose(total.item(), ttotal.item(), **TOL[dtype])
    for p, tp in zip(ours, theirs):
        if tp.grad is None:
            assert p.grad is None
            continue
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), **TOL[dtype])


def test_single_tensor_generator_and_version() -> None:
    ours, theirs = _pair("float64", scale=10.0)
    v = ours[0].grad._version
    total = clip_grad_norm_(ours[0], 1.0)
    ttotal = torch.nn.utils.clip_grad_norm_(theirs[0], 1.0)
    assert ours[0].grad._version > v
    np.testing.assert_allclose(total.item(), ttotal.item(), rtol=1e-12)
    np.testing.assert_allclose(ours[0].grad.numpy(), theirs[0].grad.numpy(), rtol=1e-12)
    total = clip_grad_norm_((p for p in ours), 0.1)
    ttotal = torch.nn.utils.clip_grad_norm_((p for p in theirs), 0.1)
    np.testing.assert_allclose(total.item(), ttotal.item(), rtol=1e-12)


def test_no_gradients_gives_zero() -> None:
    total = clip_grad_norm_([ag.zeros(2, requires_grad=True)], 1.0)
    assert total.item() == 0.0 and total.dtype == ag.float32
    assert get_total_norm([]).item() == 0.0


def test_non_finite() -> None:
    ours, theirs = _pair("float32")
    ours[0].grad._data[0, 0] = np.inf
    theirs[0].grad[0, 0] = math.inf
    with pytest.raises(RuntimeError) as e1:
        clip_grad_norm_(ours, 1.0, error_if_nonfinite=True)
    with pytest.raises(RuntimeError) as e2:
        torch.nn.utils.clip_grad_norm_(theirs, 1.0, error_if_nonfinite=True)
    assert str(e1.value) == str(e2.value)
    total = clip_grad_norm_(ours, 1.0)
    ttotal = torch.nn.utils.clip_grad_norm_(theirs, 1.0)
    assert math.isinf(total.item()) and math.isinf(ttotal.item())
    for p, tp in zip(ours[:3], theirs[:3]):
        np.testing.assert_array_equal(np.isnan(p.grad.numpy()), np.isnan(tp.grad.numpy()))


@pytest.mark.parametrize("clip", [0.1, 0.7, 5.0])
def test_clip_grad_value_matches_torch(clip: float) -> None:
    ours, theirs = _pair("float32", scale=2.0)
    assert clip_grad_value_(ours, clip) is None
    torch.nn.utils.clip_grad_value_(theirs, clip)
    for p, tp in zip(ours[:3], theirs[:3]):
        np.testing.assert_array_equal(p.grad.numpy(), tp.grad.numpy())
    assert ours[3].grad is None


def test_clipping_records_no_graph() -> None:
    w = ag.ones(3, requires_grad=True)
    (w * w).sum().backward(create_graph=True)
    assert w.grad.requires_grad
    clip_grad_norm_([w], 0.1)
    np.testing.assert_allclose(np.linalg.norm(w.grad.detach().numpy()), 0.1, rtol=1e-5)
