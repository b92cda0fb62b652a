"""Indexing (``t[key]``, ``t[key] = v``) and the index ops (gather, scatter, masked_fill...)
against PyTorch: values, gradients, double backward, grad_fn names and error messages."""

import numpy as np
import pytest
from lazy_torch import torch
from oracle import check

import autogradcli as ag

IDX = np.array([[0, 2, 1, 0], [1, 1, 0, 2]])  # shape (2, 4), values < 3


def _t(m, arr):
    return m.tensor(arr)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: x[1],
        lambda m, x: x[-1, 2],
        lambda m, x: x[0, 1, 3],
        lambda m, x: x[:, 1:3],
        lambda m, x: x[..., -1],
        lambda m, x: x[None, :, None, 1],
        lambda m, x: x[1:, ..., ::2],
        lambda m, x: x[:, [0, 0, 2]],
        lambda m, x: x[[1, 1, 0], :, [3, 3, 0]],
        lambda m, x: x[m.tensor([[0, 1], [1, 1]])],
        lambda m, x: x[x > 0.2],
        lambda m, x: x[0][x[0] < 0],
        lambda m, x: x[:, m.tensor([True, False, True])],
        lambda m, x: x[1, [2, 2, 2], 1:],
        lambda m, x: x[m.tensor(1), :, m.tensor([0, 3])],
        lambda m, x: x[..., None, [1, 1]],
        lambda m, x: x[[0, 1], [2, 2]] * 3,
        lambda m, x: x[True],
        lambda m, x: x[np.int64(1), 0],
    ],
)
def test_getitem(fn, dtype):
    check(fn, (2, 3, 4), dtype=dtype)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x, i: x.gather(1, i),
        lambda m, x, i: m.gather(x, 0, i[:, :2]),
        lambda m, x, i: x.gather(-1, i).exp(),
        lambda m, x, i: m.take_along_dim(x[:2], i, 1),
        lambda m, x, i: m.take_along_dim(x, i[:1], 1),
        lambda m, x, i: m.take_along_dim(x, i),
        lambda m, x, i: x.index_select(1, i[0]),
        lambda m, x, i: m.index_select(x, 0, i[1, :2]) ** 2,
        lambda m, x, i: x.index_select(-1, i[0, 1]),
    ],
)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_gather_index_select(fn, dtype):
    check(fn, (3, 4), IDX, dtype=dtype)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x, s, i: x.scatter_add(1, i, s),
        lambda m, x, s, i: m.scatter_add(x, 0, i, s * s),
        lambda m, x, s, i: x.scatter_add(1, i[:, :2], s[:, :2]),
        lambda m, x, s, i: x.scatter(0, i[:1], s[:1]),
        lambda m, x, s, i: x.scatter(1, m.tensor([[2, 0, 1]]), s[:1, :3] ** 2),
        lambda m, x, s, i: x.scatter(1, i[:, :1], 1.5) * s[:, :3].sum(),
        lambda m, x, s, i: x.clone().scatter_add_(1, i, s),
        lambda m, x, s, i: (x * 1).scatter_(0, i[:1], s[:1]),
    ],
)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_scatter(fn, dtype):
    check(fn, (3, 4), (2, 4), IDX, dtype=dtype)


MASK = np.array([[True, False, True, False], [False, False, True, True], [True] * 4])


@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x, v, mask: x.masked_fill(mask, 2.5),
        lambda m, x, v, mask: x.masked_fill(mask[0], v) * v,
        lambda m, x, v, mask: m.masked_fill(x[0], mask, v),
        lambda m, x, v, mask: (x * 1).masked_fill_(mask, v.exp()),
    ],
)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_masked_fill(fn, dtype):
    check(fn, (3, 4), (), MASK, dtype=dtype)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: x.narrow(1, 1, 2),
        lambda m, x: m.narrow(x, -1, -3, 2) * 2,
        lambda m, x: x.repeat(2, 1, 3),
        lambda m, x: x.repeat(2, 2, 1, 1),
        lambda m, x: x[0].repeat(3) if x.dim() == 1 else x.repeat(1, 1, 2),
        lambda m, x: x.flip(0),
        lambda m, x: m.flip(x, (-1, 1)),
        lambda m, x: x.roll(2),
        lambda m, x: x.roll((1, -2), (0, 2)),
        lambda m, x: m.roll(x, 1, 1),
        lambda m, x: x.tril(),
        lambda m, x: x.triu(1),
        lambda m, x: m.tril(x, -1).sin(),
        lambda m, x: m.triu(x, -2) ** 2,
    ],
)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_shape_index_ops(fn, dtype):
    check(fn, (2, 3, 4), dtype=dtype)


def test_scatter_src_larger_than_index():
    x = ag.zeros(2, 3, requires_grad=True)
    src = ag.ones(2, 4, requires_grad=True)
    out = x.scatter_add(1, ag.tensor([[0, 0], [2, 1]]), src * 2)
    assert out.tolist() == [[4.0, 0.0, 0.0], [0.0, 2.0, 2.0]]
    out.sum().backward()
    assert src.grad.tolist() == [[2.0, 2.0, 0.0, 0.0], [2.0, 2.0, 0.0, 0.0]]
    assert x.grad.tolist() == [[1.0] * 3] * 2


def test_repeated_indices_accumulate():
    x = ag.ones(4, requires_grad=True)
    (x[[0, 0, 3, 0]] * ag.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    assert x.grad.tolist() == [7.0, 0.0, 0.0, 3.0]
    y = ag.ones(3, 2, requires_grad=True)
    y.gather(0, ag.tensor([[0, 0], [0, 2]])).sum().backward()
    assert y.grad.tolist() == [[2.0, 1.0], [0.0, 0.0], [0.0, 1.0]]


def test_one_hot():
    idx = np.array([[0, 3], [2, 2]])
    for nc in (-1, 5):
        ours = ag.one_hot(ag.tensor(idx), nc)
        theirs = torch.nn.functional.one_hot(torch.tensor(idx), nc)
        assert ours.dtype == ag.int64
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert tuple(ag.one_hot(ag.tensor([], dtype=ag.int64), 3).shape) == (0, 3)


@pytest.mark.parametrize(
    "expr, name",
    [
        ("x[:]", "SliceBackward0"),
        ("x[...]", "AliasBackward0"),
        ("x[:, 0]", "SelectBackward0"),
        ("x[0, :]", "SelectBackward0"),
        ("x[1:, :]", "SliceBackward0"),
        ("x[None]", "UnsqueezeBackward0"),
        ("x[0, 1]", "SelectBackward0"),
        ("x[[0, 1]]", "IndexBackward0"),
        ("x.narrow(0, 1, 1)", "SliceBackward0"),
        ("x.gather(0, i)", "GatherBackward0"),
        ("x.scatter(0, i, x)", "ScatterBackward0"),
        ("x.scatter(0, i, 2.0)", "ScatterBackward1"),
        ("x.scatter_add(0, i, x)", "ScatterAddBackward0"),
        ("x.index_select(0, i[0])", "IndexSelectBackward0"),
        ("x.masked_fill(x > 0, 1.0)", "MaskedFillBackward0"),
        ("x.repeat(2, 1)", "RepeatBackward0"),
        ("x.flip(0)", "FlipBackward0"),
        ("x.roll(1)", "RollBackward0"),
        ("x.tril()", "TrilBackward0"),
        ("x.triu()", "TriuBackward0"),
        ("m.take_along_dim(x, i, 0)", "GatherBackward0"),
    ],
)
def test_grad_fn_names(expr, name):
    for m in (ag, torch):
        env = {"m": m, "x": m.ones(3, 4, requires_grad=True) * 1, "i": m.tensor([[0, 1, 2, 0]])}
        assert eval(expr, env).grad_fn.name() == name, m.__name__


def test_basic_indexing_gives_views():
    x = ag.zeros(3, 4)
    v = x[1, 1:]
    x[1, 2] = 5.0
    assert v[1].item() == 5.0
    v[0] = 7.0
    assert x[1, 1].item() == 7.0
    s = x[0, 0]
    assert s.dim() == 0 and s._base is x
    x.fill_(3.0)
    assert s.item() == 3.0
    adv = x[[0]]
    x.fill_(1.0)
    assert adv.sum().item() == 12.0


def test_setitem_values_like_torch():
    keys = [
        ((1,), 2.0),
        ((slice(None), 0), -1.0),
        (([0, 2],), 4.0),
        ((np.array([[True, False, True, True]] * 3),), 9.0),
        ((Ellipsis, 1), np.arange(3.0)),
        ((0,), np.ones((1, 4))),
        (([0, 0, 1], [1, 1, 2]), 6.0),
    ]
    for key, value in keys:
        ours, theirs = ag.zeros(3, 4), torch.zeros(3, 4)
        k_o = tuple(ag.tensor(k) if isinstance(k, np.ndarray) else k for k in key)
        k_t = tuple(torch.tensor(k) if isinstance(k, np.ndarray) else k for k in key)
        ours[k_o] = ag.tensor(value) if isinstance(value, np.ndarray) else value
        theirs[k_t] = torch.tensor(value) if isinstance(value, np.ndarray) else value
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
        assert ours._version == theirs._version == 1


@pytest.mark.parametrize(
    "key",
    [(1,), (slice(1, None), 2), ([0, 2],), (Ellipsis, [1, 1])],
    ids=["int", "slice", "list", "repeat"],
)
def test_setitem_autograd(key):
    check(_setitem_fn(key), (3, 4), (), dtype="float64")
    check(_setitem_fn(key), (3, 4), (), dtype="float32")


def _setitem_fn(key):
    def fn(m, x, v):
        y = x * 2
        y[key] = v * 3
        assert y.grad_fn.name().split(":")[-1] in {"CopySlices", "IndexPutBackward0"}
        return y.sin()

    return fn


def test_setitem_tensor_value_on_leaf_without_grad():
    for m in (ag, torch):
        base = m.zeros(3)
        w = m.tensor([1.0, 2.0], requires_grad=True)
        base[1:] = w * w
        assert base.requires_grad and not base.is_leaf
        base.sum().backward()
        assert w.grad.tolist() == [2.0, 4.0]


def test_setitem_no_grad_on_leaf():
    w = ag.zeros(3, requires_grad=True)
    with ag.no_grad():
        w[0] = 1.0
    assert w.is_leaf and w.tolist() == [1.0, 0.0, 0.0] and w._version == 1
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        w[0] = 2.0


def _err(fn, m):
    with pytest.raises(Exception) as info:
        fn(m)
    return info.type, str(info.value)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.zeros(3, 4)[::-1],
        lambda m: m.zeros(3, 4)[:, ::0],
        lambda m: m.zeros(3, 4)[5],
        lambda m: m.zeros(3, 4)[:, 7],
        lambda m: m.zeros(3, 4)[0, 0, 0],
        lambda m: m.zeros(3, 4)[m.tensor([0.5])],
        lambda m: m.zeros(3, 4)[[5]],
        lambda m: m.zeros(2, 3).gather(1, m.tensor([[0, 1], [2, 0]]).double()),
        lambda m: m.zeros(2, 3).scatter_add(1, m.tensor([[0.0]]), m.zeros(2, 3)),
        lambda m: m.zeros(2, 3).gather(1, m.tensor([0, 1])),
        lambda m: m.zeros(2, 3).gather(0, m.tensor([[0, 1, 0, 1]])),
        lambda m: m.zeros(2, 3).gather(1, m.tensor([[0, 5]])),
        lambda m: m.zeros(2, 3).gather(1, m.tensor([[0, -1]])),
        lambda m: m.zeros(2, 3).gather(2, m.tensor([[0]])),
        lambda m: m.zeros(2, 3).scatter_add(1, m.tensor([[0, 1], [2, 0]]), m.ones(1, 1)),
        lambda m: m.zeros(2, 3).index_select(1, m.tensor([[0]])),
        lambda m: m.zeros(2, 3).index_select(1, m.tensor([0.0])),
        lambda m: m.zeros(2, 3).masked_fill(m.ones(2, 3), 1.0),
        lambda m: m.zeros(2, 3).masked_fill(m.ones(2, 3) > 0, m.ones(1)),
        lambda m: m.zeros(3).masked_fill_(m.ones(1, 3) > 0, 1.0),
        lambda m: m.zeros(2, 3).narrow(1, 2, 2),
        lambda m: m.zeros(2, 3).narrow(1, 4, 0),
        lambda m: m.zeros(2, 3).narrow(1, 0, -1),
        lambda m: m.zeros(2, 3).repeat(2),
        lambda m: m.zeros(2, 3).flip(0, 0),
        lambda m: m.zeros(2, 3).roll((1, 2), (0,)),
        lambda m: m.zeros(3).tril(),
        lambda m: m.zeros(3).triu(),
        lambda m: m.nn.functional.one_hot(m.tensor([0, 2]).int()),
        lambda m: m.nn.functional.one_hot(m.tensor([0, -2])),
        lambda m: m.nn.functional.one_hot(m.tensor([0, 2]), 2),
        lambda m: m.nn.functional.one_hot(m.tensor([], dtype=m.int64)),
    ],
)
def test_errors_match_torch(fn):
    if "one_hot" in fn.__code__.co_names:
        ours = _err(lambda _: fn(_OneHotShim), ag)
    else:
        ours = _err(fn, ag)
    theirs = _err(fn, torch)
    assert ours[0] is theirs[0] or issubclass(ours[0], theirs[0])
    if "out of bounds" in theirs[1] or "mask" in theirs[1]:
        assert theirs[1].split(" ")[:3] == ours[1].split(" ")[:3]
    else:
        assert ours[1] == theirs[1]


class _OneHotShim:
    """Lets the error table call ``m.nn.functional.one_hot`` on autogradcli too."""

    tensor = staticmethod(ag.tensor)
    int64 = ag.int64

    class nn:
        class functional:
            one_hot = staticmethod(ag.one_hot)


def test_bool_mask_shape_error():
    with pytest.raises(IndexError, match="mask"):
        ag.zeros(3, 4)[ag.tensor([True, False])]
