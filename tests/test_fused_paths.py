"""The fast paths of fused ops give bit-for-bit what their general paths give."""

from __future__ import annotations

import numpy as np
import pytest

import autogradcli as ag

F = ag.nn.functional


def _ce(x: np.ndarray, t: np.ndarray, **kw: object) -> tuple[np.ndarray, np.ndarray]:
    xt = ag.tensor(x, requires_grad=True)
    loss = F.cross_entropy(xt, ag.tensor(t), **kw)
    loss.backward()
    return loss._data, xt.grad._data


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_plain_cross_entropy_equals_the_general_path_bitwise(dtype: str) -> None:
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((64, 10)) * 4).astype(dtype)
    t = rng.integers(0, 10, 64)
    t[:2] = (0, 9)  # the first and the last class: just inside the range
    plain = _ce(x, t)
    general = _ce(x, t, weight=ag.ones(10, dtype=getattr(ag, dtype)))  # the weighted path
    for a, b in zip(plain, general):
        assert a.dtype == np.dtype(dtype)
        assert a.tobytes() == b.tobytes()


def test_plain_cross_entropy_falls_back_for_ignored_and_out_of_range_targets() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    x = rng.standard_normal((6, 5)).astype("float32")
    t = np.array([0, 4, 2, 2, 1, 3])
    for kw in ({"ignore_index": 2}, {"ignore_index": -100}):
        tt = t.copy()
        if kw["ignore_index"] < 0:
            tt[0] = -100
        ours = _ce(x, tt, **kw)
        xt = torch.tensor(x, requires_grad=True)
        loss = torch.nn.functional.cross_entropy(xt, torch.tensor(tt), **kw)
        loss.backward()
        np.testing.assert_allclose(ours[0], loss.detach().numpy(), rtol=1e-6)
        np.testing.assert_allclose(ours[1], xt.grad.numpy(), rtol=1e-6, atol=1e-7)
    with pytest.raises(IndexError, match="Target 5 is out of bounds"):
        _ce(x, np.array([0, 5, 2, 2, 1, 3]))  # just outside the range


def test_plain_cross_entropy_double_backward_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 3))
    t = np.array([0, 2, 1, 2])
    xa = ag.tensor(x, requires_grad=True)
    (g,) = ag.autograd.grad(F.cross_entropy(xa, ag.tensor(t)), xa, create_graph=True)
    (g * g).sum().backward()
    xt = torch.tensor(x, requires_grad=True)
    (gt,) = torch.autograd.grad(
        torch.nn.functional.cross_entropy(xt, torch.tensor(t)), xt, create_graph=True
    )
    (gt * gt).sum().backward()
    np.testing.assert_allclose(g._data, gt.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(xa.grad._data, xt.grad.numpy(), rtol=1e-10, atol=1e-14)
