"""cat/stack/split/chunk/unbind against PyTorch: values, gradients, views and error messages."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lazy_torch import torch
from oracle import check

import autogradcli as ag


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize(
    "fn, shapes",
    [
        (lambda m, a, b: m.cat([a, b]), [(2, 3), (4, 3)]),
        (lambda m, a, b: m.cat([a, b, a], dim=-1), [(2, 3), (2, 1)]),
        (lambda m, a, b: m.concat((a * b, b), 1), [(2, 3), (2, 3)]),
        (lambda m, a, b: m.cat([a, m.zeros(0, dtype=a.dtype), b]), [(1, 3), (2, 3)]),
        (lambda m, a, b: m.stack([a, b]), [(2, 3), (2, 3)]),
        (lambda m, a, b: m.stack([a, b * a], dim=-1), [(2, 3), (2, 3)]),
        (lambda m, a, b: m.stack([a, b], 1).sin(), [(4,), (4,)]),
        (lambda m, a, b: m.hstack([a, b]), [(2, 3), (2, 1)]),
        (lambda m, a, b: m.vstack([a, b]), [(3,), (2, 3)]),
    ],
)
def test_cat_stack(fn, shapes, dtype):
    check(fn, *shapes, dtype=dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: x.split(2),
        lambda m, x: x.split(2, dim=1),
        lambda m, x: m.split(x, [1, 3, 1], -1),
        lambda m, x: [p * p for p in x.split([2, 1, 1], 1)],
        lambda m, x: x.split(2)[1],
        lambda m, x: x.chunk(2, 2),
        lambda m, x: x.chunk(3, 0)[0].exp(),
        lambda m, x: x.unbind(1),
        lambda m, x: [p**2 for p in m.unbind(x, -1)][1:3],
        lambda m, x: m.stack(x.unbind(2), 0),
    ],
)
def test_split_chunk_unbind(fn, dtype):
    check(fn, (3, 4, 5), dtype=dtype)


def test_grad_fn_names_and_views():
    x = ag.randn(5, 4, requires_grad=True)
    assert [p.grad_fn.name() for p in x.split(2)] == ["SplitBackward0"] * 3
    assert x.split([2, 3])[0].grad_fn.name() == "SplitWithSizesBackward0"
    assert x.chunk(2)[0].grad_fn.name() == "SplitBackward0"
    assert x.unbind()[0].grad_fn.name() == "UnbindBackward0"
    assert ag.cat([x, x]).grad_fn.name() == "CatBackward0"
    assert ag.stack([x, x]).grad_fn.name() == "StackBackward0"
    y = ag.zeros(6, 2)
    parts = y.split(4)
    y[5, 1] = 3.0
    assert parts[1][1, 1].item() == 3.0
    parts[0][0].fill_(2.0)
    assert y[0].tolist() == [2.0, 2.0]
    assert parts[0]._version == y._version == 2
    assert y.unbind(1)[0]._base is y


def test_cat_promotes_and_copies():
    a = ag.ones(2, dtype=ag.float32)
    out = ag.cat([a, ag.ones(2, dtype=ag.float64)])
    assert out.dtype == ag.float64
    single = ag.cat([a])
    single[0] = 5.0
    assert a[0].item() == 1.0
    assert ag.cat([a, a]).dtype == ag.float32


def test_chunk_counts_like_torch():
    for n in range(0, 8):
        for chunks in range(1, 5):
            ours = [tuple(p.shape) for p in ag.zeros(n, 2).chunk(chunks)]
            theirs = [tuple(p.shape) for p in torch.zeros(n, 2).chunk(chunks)]
            assert ours == theirs, (n, chunks)


def _err(fn, m):
    with pytest.raises(Exception) as info:
        fn(m)
    return info.type, str(info.value)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.cat([m.zeros(2, 3), m.zeros(2, 3, 1)]),
        lambda m: m.cat([]),
        lambda m: m.cat([m.tensor(1.0)]),
        lambda m: m.cat([m.zeros(2, 3)], dim=2),
        lambda m: m.stack([m.zeros(2, 3), m.zeros(2, 4)]),
        lambda m: m.stack([]),
        lambda m: m.zeros(2, 3).split([1, 1], 1),
        lambda m: m.zeros(2, 3).split(0),
        lambda m: m.zeros(2, 3).split(-1),
        lambda m: m.zeros(2).chunk(0),
        lambda m: m.tensor(1.0).split(1),
        lambda m: m.tensor(1.0).chunk(1),
        lambda m: m.tensor(1.0).unbind(),
    ],
)
def test_errors_match_torch(fn):
    assert _err(fn, ag) == _err(fn, torch)


def test_cat_size_mismatch_names_shapes():
    with pytest.raises(RuntimeError) as info:
        ag.cat([ag.zeros(2, 3), ag.zeros(2, 4)])
    msg = str(info.value)
    assert "Sizes of tensors must match except in dimension 0" in msg
    assert "[2, 3]" in msg and "[2, 4]" in msg


def test_device_mismatch(monkeypatch):
    class FakeCuda(np.ndarray):
        pass

    a = ag.zeros(2)
    b = ag.zeros(2)
    b._data = b._data.view(FakeCuda)
    monkeypatch.setattr(
        ag.ops.join,
        "device_of",
        lambda arr: ag.device("cuda", 0) if type(arr) is FakeCuda else ag.device("cpu"),
    )
    for fn in (ag.cat, ag.stack):
        with pytest.raises(RuntimeError, match=r"same device.*cpu and cuda:0"):
            fn([a, b])


@settings(max_examples=25, deadline=None)
@given(
    shape=st.lists(st.integers(1, 4), min_size=1, max_size=3),
    data=st.data(),
)
def test_split_cat_round_trip(shape, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = ag.tensor(np.arange(np.prod(shape), dtype=np.float64).reshape(shape))
    size = data.draw(st.integers(1, shape[dim] + 1))
    pieces = x.split(size, dim)
    assert [tuple(p.shape) for p in pieces] == [
        tuple(p.shape) for p in torch.from_numpy(x.numpy()).split(size, dim)
    ]
    np.testing.assert_array_equal(ag.cat(pieces, dim).numpy(), x.numpy())
    np.testing.assert_array_equal(ag.stack(x.unbind(dim), dim).numpy(), x.numpy())
    chunks = data.draw(st.integers(1, 5))
    np.testing.assert_array_equal(ag.cat(x.chunk(chunks, dim), dim).numpy(), x.numpy())
