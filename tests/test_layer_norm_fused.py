"""LayerNorm as one Function (nn/functional/layer_norm.py) against torch: values and gradients in
float32, gradcheck and gradgradcheck in float64, the array backward against the create_graph one."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import autogradcli as ag

CASES = [
    ((4, 6, 16), (16,), True, True),
    ((3, 5, 4), (5, 4), True, True),
    ((2, 7, 8), (8,), True, False),
    ((2, 7, 8), (8,), False, False),
    ((5, 1), (1,), True, True),
    ((0, 8), (8,), True, True),
    ((8,), (8,), True, True),
]


def _inputs(shape: Any, norm: Any, seed: int = 0) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
    w = rng.standard_normal(norm).astype(np.float32)
    b = rng.standard_normal(norm).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    return x, w, b, g


@pytest.mark.parametrize("shape,norm,has_w,has_b", CASES)
@pytest.mark.parametrize("grads", ["all", "x", "params"])
def test_layer_norm_matches_torch_float32(
    shape: Any, norm: Any, has_w: bool, has_b: bool, grads: str
) -> None:
    x, w, b, g = _inputs(shape, norm)
    rx, rp = grads in ("all", "x"), grads in ("all", "params")
    outs = []
    for lib in (ag, torch):
        xt = lib.tensor(x, requires_grad=rx)
        wt = lib.tensor(w, requires_grad=rp) if has_w else None
        bt = lib.tensor(b, requires_grad=rp) if has_b else None
        y = lib.nn.functional.layer_norm(xt, norm, wt, bt, 1e-5)
        if rx or (rp and (has_w or has_b)):
            y.backward(lib.tensor(g))
        outs.append(
            [y.detach().numpy()]
            + [t.grad.numpy() for t in (xt, wt, bt) if t is not None and t.grad is not None]
        )
    assert len(outs[0]) == len(outs[1])
    # one normalized element: xhat is 0 exactly here, torch's rounding leaves ~1e-5 in dw
    atol = 1e-4 if norm == (1,) else 1e-5
    for a, t in zip(*outs):
        assert a.dtype == np.float32
        np.testing.assert_allclose(a, t, rtol=1e-4, atol=atol)


def test_layer_norm_non_contiguous_input() -> None:
    x, w, b, _ = _inputs((6, 4, 10), (4,))
    xs = np.ascontiguousarray(x.transpose(0, 2, 1))  # (6, 10, 4)
    a = ag.tensor(x, requires_grad=True)
    t = torch.tensor(x, requires_grad=True)
    ya = ag.nn.functional.layer_norm(a.transpose(1, 2), (4,), ag.tensor(w), ag.tensor(b))
    yt = torch.nn.functional.layer_norm(t.transpose(1, 2), (4,), torch.tensor(w), torch.tensor(b))
    (ya * ag.tensor(xs)).sum().backward()
    (yt * torch.tensor(xs)).sum().backward()
    np.testing.assert_allclose(ya.detach().numpy(), yt.detach().numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_layer_norm_strided_upstream_gradient() -> None:
    """An upstream gradient with a transposed layout (batch_first attention) gives the same dx."""
    x, w, b, _ = _inputs((5, 3, 8), (8,))
    g = np.random.default_rng(7).standard_normal((3, 5, 8)).astype(np.float32)
    outs = []
    for lib in (ag, torch):
        xt = lib.tensor(x, requires_grad=True)
        y = lib.nn.functional.layer_norm(xt, (8,), lib.tensor(w), lib.tensor(b))
        (y.transpose(0, 1) * lib.tensor(g)).sum().backward()
        outs.append(xt.grad.numpy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-4, atol=1e-5)


def test_layer_norm_float64_gradcheck_and_gradgradcheck() -> None:
    rng = np.random.default_rng(1)
    x = ag.tensor(rng.standard_normal((3, 4, 5)), requires_grad=True)
    w = ag.tensor(rng.standard_normal(5), requires_grad=True)
    b = ag.tensor(rng.standard_normal(5), requires_grad=True)

    def f(x: Any, w: Any, b: Any) -> Any:
        return ag.nn.functional.layer_norm(x, (5,), w, b)

    assert ag.autograd.gradcheck(f, (x, w, b))
    assert ag.autograd.gradgradcheck(f, (x, w, b))


def test_layer_norm_plain_backward_equals_create_graph_backward() -> None:
    x, w, b, g = _inputs((4, 3, 12), (12,))
    xt, wt, bt = (ag.tensor(v, requires_grad=True) for v in (x, w, b))
    y = ag.nn.functional.layer_norm(xt, (12,), wt, bt)
    plain = ag.autograd.grad(y, (xt, wt, bt), ag.tensor(g), retain_graph=True)
    graph = ag.autograd.grad(y, (xt, wt, bt), ag.tensor(g), create_graph=True)
    for p, q in zip(plain, graph):
        np.testing.assert_allclose(p.numpy(), q.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert graph[0].grad_fn is not None


def test_layer_norm_module_on_the_strict_device(strict_cuda: Any) -> None:
    x, w, b, g = _inputs((3, 5, 8), (8,))
    ln = ag.nn.LayerNorm(8)
    with ag.no_grad():
        ln.weight.copy_(ag.tensor(w))
        ln.bias.copy_(ag.tensor(b))
    ref = ln(ag.tensor(x))
    ln_d = ln.to("cuda")
    xd = ag.tensor(x, device="cuda", requires_grad=True)
    yd = ln_d(xd)
    yd.backward(ag.tensor(g, device="cuda"))
    np.testing.assert_allclose(yd.cpu().detach().numpy(), ref.detach().numpy(), rtol=1e-6)
    assert xd.grad.device.type == "cuda"
