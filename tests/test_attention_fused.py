"""The written-out attention's ops on their fast paths (masked_fill's copy + masked store, softmax
and log_softmax backward on the arrays) against torch and against their create_graph paths."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import autogradcli as ag


def _pair(x: np.ndarray) -> tuple[Any, Any]:
    return ag.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)


@pytest.mark.parametrize(
    "xshape,mshape",
    [((2, 3, 5, 5), (1, 1, 5, 5)), ((4, 6), (4, 6)), ((4, 6), (6,)), ((3,), (3,)), ((0, 4), (4,))],
)
@pytest.mark.parametrize("value", [float("-inf"), 0.5, -3])
def test_masked_fill_matches_torch(xshape: Any, mshape: Any, value: Any) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(xshape).astype(np.float32)
    m = rng.random(mshape) > 0.5
    g = rng.standard_normal(xshape).astype(np.float32)
    a, t = _pair(x)
    ya, yt = a.masked_fill(ag.tensor(m), value), t.masked_fill(torch.tensor(m), value)
    ya.backward(ag.tensor(g))
    yt.backward(torch.tensor(g))
    np.testing.assert_array_equal(ya.detach().numpy(), yt.detach().numpy())
    np.testing.assert_array_equal(a.grad.numpy(), t.grad.numpy())
    assert ya.dtype == ag.float32


def test_masked_fill_keeps_its_input_and_passes_nan_gradients_unmasked() -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    m = np.array([[True, False, False], [False, True, False]])
    a = ag.tensor(x.copy(), requires_grad=True)
    y = a.masked_fill(ag.tensor(m), float("-inf"))
    assert np.array_equal(a.detach().numpy(), x)  # the input is not written
    g = np.full((2, 3), np.nan, np.float32)
    y.backward(ag.tensor(g))
    assert (a.grad.numpy()[m] == 0).all() and np.isnan(a.grad.numpy()[~m]).all()


def test_masked_fill_mask_larger_than_input_and_integer_input() -> None:
    x = np.ones((1, 3), np.float32)
    m = np.array([[True, False, True], [False, False, True]])
    got = ag.tensor(x).masked_fill(ag.tensor(m), 2.0).numpy()
    want = torch.tensor(x).masked_fill(torch.tensor(m), 2.0).numpy()
    np.testing.assert_array_equal(got, want)
    xi = np.arange(4).reshape(2, 2)
    mi = np.array([[True, False], [False, True]])
    np.testing.assert_array_equal(
        ag.tensor(xi).masked_fill(ag.tensor(mi), 9).numpy(),
        torch.tensor(xi).masked_fill(torch.tensor(mi), 9).numpy(),
    )


def test_masked_fill_with_a_tensor_value_and_double_backward() -> None:
    x = np.random.default_rng(1).standard_normal((3, 4))
    m = np.tril(np.ones((3, 4), bool))
    a, t = _pair(x)
    va, vt = ag.tensor(1.5, requires_grad=True), torch.tensor(1.5, requires_grad=True)
    (a.masked_fill(ag.tensor(m), va) ** 2).sum().backward()
    (t.masked_fill(torch.tensor(m), vt) ** 2).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy())
    np.testing.assert_allclose(va.grad.numpy(), vt.grad.numpy())
    assert ag.autograd.gradgradcheck(lambda v: v.masked_fill(ag.tensor(m), 0.0) ** 2, (a,))


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape,dim", [((2, 3, 6, 6), -1), ((4, 5), 0), ((7,), 0), ((3, 0), 1)])
def test_softmax_array_backward_matches_torch_and_create_graph(
    fn: str, shape: Any, dim: int
) -> None:
    rng = np.random.default_rng(2)
    x = (rng.standard_normal(shape) * 3).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    a, t = _pair(x)
    ya = getattr(ag.nn.functional, fn)(a, dim=dim)
    yt = getattr(torch.nn.functional, fn)(t, dim=dim)
    ya.backward(ag.tensor(g))
    yt.backward(torch.tensor(g))
    np.testing.assert_allclose(ya.detach().numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-6)
    assert a.grad.dtype == ag.float32
    b = ag.tensor(x, requires_grad=True)
    (graph,) = ag.autograd.grad(
        getattr(ag.nn.functional, fn)(b, dim=dim), b, ag.tensor(g), create_graph=True
    )
    np.testing.assert_allclose(graph.detach().numpy(), a.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_causal_softmax_rows_with_masked_entries_and_gradgradcheck() -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 4, 4))
    m = np.triu(np.ones((4, 4), bool), 1)

    def attn(v: Any) -> Any:
        return ag.nn.functional.softmax(v.masked_fill(ag.tensor(m), float("-inf")), dim=-1)

    a, t = _pair(x)
    attn(a).pow(2).sum().backward()
    torch.softmax(t.masked_fill(torch.tensor(m), float("-inf")), -1).pow(2).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)
    xg = ag.tensor(x, requires_grad=True)
    assert ag.autograd.gradcheck(attn, (xg,))
    assert ag.autograd.gradgradcheck(attn, (xg,))


def test_softmax_and_masked_fill_on_the_strict_device(strict_cuda: Any) -> None:
    x = np.random.default_rng(4).standard_normal((2, 3, 3)).astype(np.float32)
    m = np.triu(np.ones((3, 3), bool), 1)
    a = ag.tensor(x, device="cuda", requires_grad=True)
    y = ag.nn.functional.softmax(a.masked_fill(ag.tensor(m, device="cuda"), float("-inf")), -1)
    y.pow(2).sum().backward()
    c = ag.tensor(x, requires_grad=True)
    ag.nn.functional.softmax(c.masked_fill(ag.tensor(m), float("-inf")), -1).pow(2).sum().backward()
    np.testing.assert_allclose(a.grad.cpu().numpy(), c.grad.numpy(), rtol=1e-6, atol=1e-7)
