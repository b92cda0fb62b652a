"""Tensor creation, dtype promotion, conversions and reprs, against PyTorch."""

import numpy as np
import pytest
from lazy_torch import torch

import autogradcli as ag

DTYPES = ["float32", "float64", "int64", "int32", "bool"]


def _name(dtype) -> str:
    return str(dtype).split(".")[-1]


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.tensor(1.5),
        lambda m: m.tensor(3),
        lambda m: m.tensor(True),
        lambda m: m.tensor([1, 2]),
        lambda m: m.tensor([1.0, 2]),
        lambda m: m.tensor([[1.0, 3], [2, 2]]),
        lambda m: m.tensor(np.arange(3.0)),
        lambda m: m.zeros(2, 3),
        lambda m: m.ones((2,), dtype=m.int32),
        lambda m: m.full((2,), 3),
        lambda m: m.full((2,), 3.0),
        lambda m: m.arange(5),
        lambda m: m.arange(0, 1, 0.25),
        lambda m: m.linspace(0, 1, 5),
        lambda m: m.eye(3),
        lambda m: m.empty(0, 3),
        lambda m: m.zeros_like(m.tensor([1, 2])),
        lambda m: m.ones_like(m.tensor([1.0], dtype=m.float64)),
        lambda m: m.randn(4, 2),
        lambda m: m.rand(3),
    ],
)
def test_creation_dtypes_and_shapes(make):
    a, t = make(ag), make(torch)
    assert tuple(a.shape) == tuple(t.shape)
    assert _name(a.dtype) == _name(t.dtype)


@pytest.mark.parametrize("da", DTYPES)
@pytest.mark.parametrize("db", DTYPES)
@pytest.mark.parametrize("a_shape, b_shape", [((3,), (3,)), ((3,), ()), ((), ())])
def test_promotion_between_tensors(da, db, a_shape, b_shape):
    x = np.ones(a_shape)
    y = np.ones(b_shape)
    ta, tb = torch.tensor(x, dtype=getattr(torch, da)), torch.tensor(y, dtype=getattr(torch, db))
    aa, ab = ag.tensor(x, dtype=da), ag.tensor(y, dtype=db)
    for op in ("__mul__", "__add__"):
        if da == db == "bool" and op == "__add__":
            continue
        expected = getattr(ta, op)(tb)
        got = getattr(aa, op)(ab)
        assert _name(got.dtype) == _name(expected.dtype), (op, da, db)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("scalar", [2, 2.5, True])
def test_promotion_with_python_scalars(dtype, scalar):
    t = torch.ones(3, dtype=getattr(torch, dtype))
    a = ag.ones(3, dtype=dtype)
    for op in ("__mul__", "__rmul__", "__truediv__"):
        if dtype == "bool" and isinstance(scalar, bool) and op != "__truediv__":
            continue
        expected = getattr(t, op)(scalar)
        got = getattr(a, op)(scalar)
        assert _name(got.dtype) == _name(expected.dtype), (op, dtype, scalar)
        np.testing.assert_allclose(got.numpy().astype(float), expected.numpy().astype(float))


def test_float32_stays_float32_through_scalars_and_grads():
    x = ag.randn(5, requires_grad=True)
    y = ((x * 2.5 + 1) ** 2 / 3.0 - x.exp() * 0.1).tanh().sigmoid().sum()
    y.backward()
    assert y.dtype == ag.float32 and x.grad.dtype == ag.float32


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.tensor([1.0, 2.5, -3.0]),
        lambda m: m.tensor([1.0, 2.0]),
        lambda m: m.tensor([[0.12345, 1.0], [2.0, 3.5]]),
        lambda m: m.tensor(3.5),
        lambda m: m.tensor([1, 2, 3]),
        lambda m: m.tensor([True, False]),
        lambda m: m.tensor([1.0, 2.0], dtype=m.float64),
        lambda m: m.tensor([1.0, 2.0], requires_grad=True),
        lambda m: m.tensor([1.0], requires_grad=True) * 2,
        lambda m: m.tensor([1e-5, 1.0]),
        lambda m: m.tensor([1, 2], dtype=m.int32),
    ],
)
def test_repr_matches_torch(make):
    assert repr(make(ag)).replace("autogradcli.", "torch.") == repr(make(torch))


def test_conversions_and_errors():
    a = ag.tensor([[1.0, 2.0]])
    assert a.tolist() == [[1.0, 2.0]]
    assert ag.tensor(2.5).item() == 2.5
    assert isinstance(a.numpy(), np.ndarray)
    with pytest.raises(RuntimeError, match="requires grad"):
        ag.ones(2, requires_grad=True).numpy()
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(ag.ones(2))
    with pytest.raises(RuntimeError, match="floating point"):
        ag.tensor([1, 2], requires_grad=True)
    with pytest.raises(
        RuntimeError, match="grad can be implicitly created only for scalar outputs"
    ):
        (ag.ones(2, requires_grad=True) * 2).backward()


def test_manual_seed_repeats():
    ag.manual_seed(3)
    a = ag.randn(4)
    ag.manual_seed(3)
    assert np.array_equal(a.numpy(), ag.randn(4).numpy())
