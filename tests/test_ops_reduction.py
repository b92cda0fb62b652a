"""max/min, amax/amin, argmax/argmin, var/std, prod, logsumexp, norm, all/any and cumsum against
PyTorch: forward, backward and double backward, ties, zeros, keepdim, negative dims, 0-d."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle import check, torch

import autogradcli as ag

DTYPES = ["float64", "float32"]
TIES = np.array([[1.0, 3.0, 3.0, -2.0], [2.0, 2.0, 0.0, 2.0], [-1.0, -1.0, -1.0, -1.0]])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: x.max(),
        lambda m, x: x.min(),
        lambda m, x: m.max(x, 1),
        lambda m, x: x.max(-1, keepdim=True),
        lambda m, x: x.min(0),
        lambda m, x: m.min(x, dim=2, keepdim=True),
        lambda m, x: x.max(1).values * 2,
        lambda m, x: x.amax(),
        lambda m, x: x.amax((0, 2)),
        lambda m, x: x.amin(-1, keepdim=True),
        lambda m, x: m.amin(x, (1, -1)),
    ],
)
def test_max_min(fn, dtype):
    check(fn, (2, 3, 4), dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_max_min_binary(dtype):
    check(lambda m, x, y: x.max(y), (2, 3, 4), (3, 1), dtype=dtype)
    check(lambda m, x, y: m.min(x, y), (2, 3), (2, 3), dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: x.max(),
        lambda m, x: x.min(),
        lambda m, x: x.amax(1),
        lambda m, x: x.amin(0, keepdim=True),
        lambda m, x: x.amax((0, 1)),
        lambda m, x: x.max(1),
        lambda m, x: x.min(-1, True),
        lambda m, x: x.max(0),
    ],
)
def test_max_min_ties(fn, dtype):
    check(fn, TIES, dtype=dtype)


def test_max_min_0d_and_indices():
    check(lambda m, x: x.max(), ())
    check(lambda m, x: x.max(0), ())
    check(lambda m, x: x.min(-1, keepdim=True), ())
    out = ag.tensor(TIES).max(1)
    ref = torch.tensor(TIES).max(1)
    assert out.indices.dtype == ag.int64
    assert out.indices.tolist() == ref.indices.tolist()
    assert out.indices.requires_grad is False
    values, indices = ag.tensor(TIES, requires_grad=True).min(dim=0)
    assert values.grad_fn.name() == "MinBackward0" and indices.grad_fn is None
    assert type(out).__name__ == "max" and out[0] is out.values
    with pytest.raises(RuntimeError, match="Expected reduction dim to be specified"):
        ag.zeros(0, 3).max()
    with pytest.raises(RuntimeError, match="Expected reduction dim 0 to have non-zero size"):
        ag.zeros(0, 3).max(0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        ag.zeros(2, 3).max(2)


def test_max_int_and_float32_dtype():
    assert ag.tensor([1, 5, 2]).max().dtype == ag.int64
    assert ag.tensor([1, 5, 2]).max().item() == 5
    x = ag.randn(3, 4)
    for out in (x.max(), x.amax(1), x.var(), x.std(0), x.prod(1), x.logsumexp(1), x.norm()):
        assert out.dtype == ag.float32


@pytest.mark.parametrize(
    "call",
    [
        lambda m, x: x.argmax(),
        lambda m, x: x.argmin(),
        lambda m, x: x.argmax(1),
        lambda m, x: x.argmin(-1, keepdim=True),
        lambda m, x: m.argmax(x, dim=0, keepdim=True),
        lambda m, x: x.argmax(keepdim=True),
    ],
)
@pytest.mark.parametrize("data", [TIES, np.arange(24.0).reshape(2, 3, 4) % 5])
def test_argmax_argmin(call, data):
    out, ref = call(ag, ag.tensor(data)), call(torch, torch.tensor(data))
    assert out.dtype == ag.int64
    assert tuple(out.shape) == tuple(ref.shape)
    assert out.tolist() == ref.tolist()


def test_argmax_0d():
    assert ag.tensor(3.0).argmax().tolist() == 0
    assert ag.tensor(3.0).argmax(0).shape == ()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: x.var(),
        lambda m, x: x.var(1),
        lambda m, x: x.var((0, 2), keepdim=True),
        lambda m, x: x.var(-1, False),
        lambda m, x: x.var(False),
        lambda m, x: x.var(dim=1, correction=0),
        lambda m, x: x.var(dim=(0, 1), correction=2, keepdim=True),
        lambda m, x: m.var(x, 0, True, True),
        lambda m, x: x.std(),
        lambda m, x: x.std(1),
        lambda m, x: x.std((0, -1), keepdim=True),
        lambda m, x: x.std(-1, unbiased=False),
        lambda m, x: m.std(x, dim=2, correction=0),
    ],
)
def test_var_std(fn, dtype):
    check(fn, (2, 3, 4), dtype=dtype)


def test_var_std_edge_cases():
    check(lambda m, x: x.std(1), np.array([[1.0, 1.0, 1.0], [1.0, 2.0, 4.0]]))
    with pytest.warns(UserWarning, match="degrees of freedom"):
        assert math.isnan(ag.tensor(3.0).var().item())
    with pytest.raises(RuntimeError, match="std and var only support floating point"):
        ag.tensor([1, 2]).var()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: x.prod(),
        lambda m, x: x.prod(1),
        lambda m, x: x.prod(-1, keepdim=True),
        lambda m, x: m.prod(x, 0),
    ],
)
@pytest.mark.parametrize(
    "data",
    [
        (2, 3, 4),
        np.array([[[1.5, 0.0, 2.0], [0.5, -1.0, 3.0]], [[2.0, 1.0, -0.5], [0.0, 0.0, 1.2]]]),
        np.array([[[0.0, 0.0, 0.0], [1.0, 0.0, 2.0]], [[0.7, 1.1, 0.0], [2.0, -1.5, 0.0]]]),
    ],
    ids=["random", "one-zero", "several-zeros"],
)
def test_prod(fn, data, dtype):
    check(fn, data, dtype=dtype)


def test_prod_edge_cases():
    check(lambda m, x: x.prod(), ())
    check(lambda m, x: x.prod(0), ())
    check(lambda m, x: x.prod(), np.array([0.0]))
    check(lambda m, x: x.prod(), np.array([0.0, 2.5, -1.5, 3.0]))
    check(lambda m, x: x.prod(), np.array([0.0, 2.5, 0.0, 3.0]))
    assert ag.tensor([2, 3]).prod().dtype == ag.int64
    assert ag.tensor([2, 3]).prod().item() == 6


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: x.logsumexp(1),
        lambda m, x: x.logsumexp((0, 2)),
        lambda m, x: m.logsumexp(x, -1, keepdim=True),
        lambda m, x: x.logsumexp((0, 1, 2)),
    ],
)
def test_logsumexp(fn, dtype):
    check(fn, (2, 3, 4), dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_logsumexp_stability(dtype):
    big = np.array([[1000.0, 999.0, -1000.0], [-1e4, -1e4 + 1.0, -1e4 - 2.0]])
    check(lambda m, x: x.logsumexp(1), big, dtype=dtype)
    check(lambda m, x: x.logsumexp(0), np.array([[-np.inf, 1.0], [-np.inf, 2.0]]), grad=False)
    check(lambda m, x: x.logsumexp(0), np.array([[np.inf, 1.0], [2.0, np.inf]]), grad=False)
    assert ag.tensor([1, 2]).logsumexp(0).dtype == ag.float32


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: x.norm(),
        lambda m, x: x.norm(dim=1),
        lambda m, x: x.norm(2, (0, 2), keepdim=True),
        lambda m, x: x.norm(1),
        lambda m, x: x.norm(p=1, dim=-1),
        lambda m, x: x.norm(float("inf")),
        lambda m, x: x.norm(float("inf"), dim=1, keepdim=True),
        lambda m, x: x.norm(float("-inf"), dim=0),
        lambda m, x: x.norm(3),
        lambda m, x: x.norm(1.5, dim=1),
        lambda m, x: m.norm(x, p="fro", dim=(1, 2)),
    ],
)
def test_norm(fn, dtype):
    check(fn, (2, 3, 4), dtype=dtype)


def test_norm_ties_and_zeros():
    check(lambda m, x: x.norm(float("inf"), dim=1), np.array([[1.0, -3.0, 3.0], [2.0, 0.5, 0.0]]))
    check(lambda m, x: x.norm(dim=1), np.array([[0.0, 0.0], [3.0, 4.0]]), gradgrad=False)
    check(lambda m, x: x.norm(0), np.array([[0.0, 1.5], [3.0, 0.0]]))
    with pytest.raises(RuntimeError, match="Expected a floating point"):
        ag.tensor([1, 2]).norm()


@pytest.mark.parametrize(
    "call",
    [
        lambda m, x: x.all(),
        lambda m, x: x.any(),
        lambda m, x: x.all(1),
        lambda m, x: m.any(x, -1, keepdim=True),
        lambda m, x: (x > 0).any(0),
        lambda m, x: (x > 0).all(dim=(0, 1)),
    ],
)
def test_all_any(call):
    data = np.array([[1.0, 0.0, 2.0], [3.0, 4.0, 5.0]])
    out, ref = call(ag, ag.tensor(data)), call(torch, torch.tensor(data))
    assert out.dtype == ag.bool and tuple(out.shape) == tuple(ref.shape)
    assert out.tolist() == ref.tolist()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: x.cumsum(0),
        lambda m, x: x.cumsum(1),
        lambda m, x: m.cumsum(x, dim=-1),
        lambda m, x: x.cumsum(2) * x,
    ],
)
def test_cumsum(fn, dtype):
    check(fn, (2, 3, 4), dtype=dtype)


def test_cumsum_edge_cases():
    check(lambda m, x: x.cumsum(0), ())
    assert ag.tensor([1, 2, 3]).cumsum(0).dtype == ag.int64
    assert ag.tensor([True, True]).cumsum(0).tolist() == [1, 2]
    assert ag.tensor([1.0, 2.0]).cumsum(0, dtype=ag.float64).dtype == ag.float64


def test_grad_fn_names():
    x = ag.randn(2, 3, requires_grad=True)
    names = {
        "MaxBackward1": x.max(),
        "MaxBackward0": x.max(1).values,
        "MinBackward1": x.min(),
        "AmaxBackward0": x.amax(0),
        "AminBackward0": x.amin(0),
        "VarBackward0": x.var(),
        "StdBackward0": x.std(),
        "ProdBackward0": x.prod(),
        "ProdBackward1": x.prod(1),
        "LogsumexpBackward0": x.logsumexp(1),
        "LinalgVectorNormBackward0": x.norm(),
        "CumsumBackward0": x.cumsum(1),
    }
    for name, out in names.items():
        assert out.grad_fn.name() == name


@settings(max_examples=25, deadline=None)
@given(
    shape=st.lists(st.integers(1, 4), min_size=1, max_size=3),
    data=st.data(),
)
def test_reductions_random_shapes(shape, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    keepdim = data.draw(st.booleans())
    check(lambda m, x: x.logsumexp(dim, keepdim=keepdim), tuple(shape))
    check(lambda m, x: x.max(dim, keepdim=keepdim), tuple(shape), gradgrad=False)
    check(lambda m, x: x.prod(dim, keepdim=keepdim), tuple(shape), gradgrad=False)
