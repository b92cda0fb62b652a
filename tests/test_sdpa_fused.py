"""``scaled_dot_product_attention`` as one Function (nn/functional/sdpa.py) against torch: masks
(causal, bool, float, rows no key may attend), scale, float32 values and gradients, float64
gradcheck and gradgradcheck, dropout's plain and create_graph backward, the strict device."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import autogradcli as ag
from autogradcli.nn.functional.attention import _fusable

F = ag.nn.functional


def _qkv(seed: int = 0, dtype: Any = np.float32) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [
        rng.standard_normal(s).astype(dtype) for s in ((2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 4))
    ]


def _masks(kind: str) -> dict[str, Any]:
    rng = np.random.default_rng(9)
    if kind == "causal":
        return {"is_causal": True}
    if kind == "bool":
        m = rng.random((5, 6)) > 0.4
        m[2] = False  # a row no key may attend: zeros
        return {"attn_mask": m}
    if kind == "float":
        return {"attn_mask": rng.standard_normal((1, 3, 5, 6)).astype(np.float32)}
    return {}


@pytest.mark.parametrize("kind", ["none", "causal", "bool", "float"])
@pytest.mark.parametrize("scale", [None, 0.3])
def test_sdpa_matches_torch_float32(kind: str, scale: Any) -> None:
    q, k, v = _qkv()
    g = np.random.default_rng(1).standard_normal((2, 3, 5, 4)).astype(np.float32)
    kw = _masks(kind)
    res = []
    for lib in (ag, torch):
        ts = [lib.tensor(a, requires_grad=True) for a in (q, k, v)]
        kwl = {n: (lib.tensor(m) if n == "attn_mask" else m) for n, m in kw.items()}
        if lib is ag:
            assert _fusable(ts[0], ts[1], kwl.get("attn_mask"))
        out = lib.nn.functional.scaled_dot_product_attention(*ts, scale=scale, **kwl)
        out.backward(lib.tensor(g))
        res.append([out.detach().numpy()] + [t.grad.numpy() for t in ts])
    for a, b in zip(*res):
        assert a.dtype == np.float32
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kind", ["none", "causal", "bool", "float"])
def test_sdpa_float64_gradcheck_and_gradgradcheck(kind: str) -> None:
    q, k, v = (ag.tensor(a[:1, :2], requires_grad=True) for a in _qkv(2, np.float64))
    kw = _masks(kind)
    if "attn_mask" in kw:
        m = kw["attn_mask"]
        kw["attn_mask"] = ag.tensor(m if m.dtype == bool else m[:, :2].astype(np.float64))

    def f(q: Any, k: Any, v: Any) -> Any:
        return F.scaled_dot_product_attention(q, k, v, **kw)

    assert ag.autograd.gradcheck(f, (q, k, v))
    assert ag.autograd.gradgradcheck(f, (q, k, v))


def test_sdpa_dropout_backward_plain_equals_create_graph() -> None:
    q, k, v = (ag.tensor(a, requires_grad=True) for a in _qkv(3))
    ag.manual_seed(5)
    out = F.scaled_dot_product_attention(q, k, v, dropout_p=0.3, is_causal=True)
    plain = ag.autograd.grad(out.sum(), (q, k, v), retain_graph=True)
    graph = ag.autograd.grad(out.sum(), (q, k, v), create_graph=True)
    for a, b in zip(plain, graph):
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)
    ag.manual_seed(5)
    again = F.scaled_dot_product_attention(q, k, v, dropout_p=0.3, is_causal=True)
    np.testing.assert_array_equal(out.detach().numpy(), again.detach().numpy())
    zero = F.scaled_dot_product_attention(q, k, v, dropout_p=1.0)
    assert not zero.detach().numpy().any()


def test_sdpa_mask_needing_grad_or_larger_takes_the_composed_path() -> None:
    q, k, v = (ag.tensor(a) for a in _qkv(4))
    m = ag.tensor(np.zeros((5, 6), np.float32), requires_grad=True)
    assert not _fusable(q, k, m)
    assert not _fusable(q[0, 0], k[0, 0], ag.tensor(np.ones((2, 5, 6), bool)))
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=m)
    out.sum().backward()
    assert m.grad is not None


def test_sdpa_on_the_strict_device(strict_cuda: Any) -> None:
    q, k, v = _qkv(6)
    dev = [ag.tensor(a, device="cuda", requires_grad=True) for a in (q, k, v)]
    cpu = [ag.tensor(a, requires_grad=True) for a in (q, k, v)]
    for ts in (dev, cpu):
        F.scaled_dot_product_attention(*ts, is_causal=True).pow(2).sum().backward()
    for a, b in zip(dev, cpu):
        np.testing.assert_allclose(a.grad.cpu().numpy(), b.grad.numpy(), rtol=1e-6, atol=1e-6)
