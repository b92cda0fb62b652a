"""Forward, backward and double backward of the core ops against PyTorch."""

import pytest
from oracle import check

BROADCAST = [((3, 4), (3, 4)), ((3, 1, 4), (5, 1)), ((), (2, 3)), ((4,), ())]


@pytest.mark.parametrize("shapes", BROADCAST)
@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x, y: x + y,
        lambda m, x, y: x - y,
        lambda m, x, y: x * y,
        lambda m, x, y: x / (y.abs() + 0.5),
        lambda m, x, y: m.maximum(x, y),
        lambda m, x, y: m.minimum(x, y),
        lambda m, x, y: (x.abs() + 0.5) ** y,
    ],
    ids=["add", "sub", "mul", "div", "maximum", "minimum", "pow"],
)
def test_binary_broadcasting(fn, shapes):
    check(fn, *shapes)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: x.exp(),
        lambda m, x: (x.abs() + 0.1).log(),
        lambda m, x: (x.abs() + 0.1).sqrt(),
        lambda m, x: (x.abs() + 0.1).rsqrt(),
        lambda m, x: x.sin(),
        lambda m, x: x.cos(),
        lambda m, x: x.tanh(),
        lambda m, x: x.sigmoid(),
        lambda m, x: x.relu(),
        lambda m, x: x.abs(),
        lambda m, x: -x,
        lambda m, x: x.clamp(-0.5, 0.5),
        lambda m, x: x.clamp(min=0.1),
        lambda m, x: x**2,
        lambda m, x: 2.0**x,
        lambda m, x: 1.5 - x,
        lambda m, x: 2.0 / (x.abs() + 1),
        lambda m, x: m.where(x > 0, x, x * 0.1),
    ],
    ids=[
        "exp",
        "log",
        "sqrt",
        "rsqrt",
        "sin",
        "cos",
        "tanh",
        "sigmoid",
        "relu",
        "abs",
        "neg",
        "clamp",
        "clamp_min",
        "square",
        "rpow",
        "rsub",
        "rdiv",
        "where",
    ],
)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_unary(fn, dtype):
    check(fn, (3, 4), dtype=dtype)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: x.sum(),
        lambda m, x: x.sum(1),
        lambda m, x: x.sum((0, 2), keepdim=True),
        lambda m, x: x.mean(),
        lambda m, x: x.mean(dim=(-1, 0)),
        lambda m, x: x.mean(1, keepdim=True),
    ],
)
def test_reductions(fn):
    check(fn, (2, 3, 4))


@pytest.mark.parametrize(
    "fn, shapes",
    [
        (lambda m, a, b: a @ b, [(3, 4), (4, 5)]),
        (lambda m, a, b: a @ b, [(4,), (4, 5)]),
        (lambda m, a, b: a @ b, [(3, 4), (4,)]),
        (lambda m, a, b: a @ b, [(4,), (4,)]),
        (lambda m, a, b: a @ b, [(2, 3, 4), (4, 5)]),
        (lambda m, a, b: a @ b, [(2, 3, 4), (1, 4, 5)]),
        (lambda m, a, b: a @ b, [(2, 3, 4), (4,)]),
        (lambda m, a, b: a @ b, [(4,), (2, 4, 5)]),
        (lambda m, a, b: m.bmm(a, b), [(2, 3, 4), (2, 4, 5)]),
        (lambda m, a, b: m.mm(a, b.t()), [(3, 4), (5, 4)]),
    ],
)
def test_matmul(fn, shapes):
    check(fn, *shapes)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: x.reshape(4, 6),
        lambda m, x: x.view(-1),
        lambda m, x: x.transpose(0, 2),
        lambda m, x: x.permute(2, 0, 1),
        lambda m, x: x.unsqueeze(1).expand(2, 5, 3, 4),
        lambda m, x: x[:, 1:],
        lambda m, x: x[0, None, ..., ::2],
        lambda m, x: x[x > 0],
        lambda m, x: x[m.tensor([1, 0, 1])],
        lambda m, x: x.flatten(1),
        lambda m, x: x.sum(0, keepdim=True).squeeze(),
        lambda m, x: x.T,
    ],
)
def test_shape_and_indexing(fn):
    check(fn, (2, 3, 4))
