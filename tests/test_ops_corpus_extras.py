"""Ops the corpus programs needed, against PyTorch on identical data: ``dot``, ``diag``,
``log1p``/``expm1`` (forward, backward, double backward, float64 and float32, strict device),
``unique``, in-place shape ops, ``out=``, ``matmul``'s keywords, ``size=`` on creation."""

import numpy as np
import pytest
from oracle import check

import autogradcli as ag


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_dot_matches_torch(dtype):
    check(lambda m, a, b: m.dot(a, b), (5,), (5,), dtype=dtype)
    check(lambda m, a: a.dot(a), (4,), dtype=dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize(
    "shape, k",
    [
        ((4,), 0),
        ((3,), 1),
        ((3,), -2),
        ((4, 4), 0),
        ((3, 5), 1),
        ((5, 3), -1),
        ((3, 5), -2),
        ((2, 3), 2),
    ],
)
def test_diag_matches_torch(dtype, shape, k):
    check(lambda m, x: m.diag(x, k), shape, dtype=dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_log1p_expm1_match_torch(dtype):
    small = np.array([1e-12, -0.3, 0.5, 2.0, 1e-5])
    check(lambda m, x: m.log1p(x), small, dtype=dtype)
    check(
        lambda m, x: x.log1p(),
        np.abs(np.random.default_rng(1).standard_normal((3, 4))),
        dtype=dtype,
    )
    check(lambda m, x: m.expm1(x), (3, 4), dtype=dtype)
    check(lambda m, x: x.expm1(), small, dtype=dtype)


def test_dot_and_diag_errors_match_torch():
    torch = pytest.importorskip("torch")
    cases = [
        lambda m: m.dot(m.ones(3), m.ones(4)),
        lambda m: m.dot(m.ones(2, 2), m.ones(2, 2)),
        lambda m: m.dot(m.ones(3), m.ones(3, dtype=m.float64)),
        lambda m: m.diag(m.ones(2, 2, 2)),
    ]
    for case in cases:
        with pytest.raises(RuntimeError) as theirs:
            case(torch)
        with pytest.raises(RuntimeError) as ours:
            case(ag)
        assert str(ours.value) == str(theirs.value).split("\n")[0]


def test_grad_fn_names_match_torch():
    torch = pytest.importorskip("torch")
    for make in [
        lambda m, x: m.dot(x, x),
        lambda m, x: m.diag(x),
        lambda m, x: m.log1p(x.abs()),
        lambda m, x: m.expm1(x),
    ]:
        xt, xa = torch.ones(3, requires_grad=True), ag.ones(3, requires_grad=True)
        theirs, ours = type(make(torch, xt).grad_fn).__name__, type(make(ag, xa).grad_fn).__name__
        assert ours == theirs
    m = ag.diag(ag.ones(3, 3, requires_grad=True))
    assert type(m.grad_fn).__name__ == "DiagonalBackward0"  # torch: DiagonalBackward0_copy


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"return_inverse": True},
        {"return_counts": True},
        {"return_inverse": True, "return_counts": True},
    ],
)
def test_unique_matches_torch(kwargs):
    torch = pytest.importorskip("torch")
    x = np.array([[3, 1, 2], [1, 3, 3]])
    ours, theirs = ag.unique(ag.tensor(x), **kwargs), torch.unique(torch.tensor(x), **kwargs)
    ours = ours if isinstance(ours, tuple) else (ours,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    assert len(ours) == len(theirs)
    for a, t in zip(ours, theirs):
        assert str(a.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        np.testing.assert_array_equal(a.numpy(), t.numpy())
    rows = ag.unique(ag.tensor([[1, 2], [0, 1], [1, 2]]), dim=0, return_inverse=True)
    trows = torch.unique(torch.tensor([[1, 2], [0, 1], [1, 2]]), dim=0, return_inverse=True)
    for a, t in zip(rows, trows):
        np.testing.assert_array_equal(a.numpy(), t.numpy())


def test_inplace_shape_ops_match_torch():
    torch = pytest.importorskip("torch")
    for name, args in [
        ("unsqueeze_", (-1,)),
        ("squeeze_", (0,)),
        ("t_", ()),
        ("transpose_", (0, 1)),
    ]:
        for m in (torch, ag):
            x = m.arange(6.0).reshape(1, 6) if name == "squeeze_" else m.arange(6.0).reshape(2, 3)
            out = getattr(x, name)(*args)
            assert out is x
            if m is torch:
                expected = x.numpy()
            else:
                np.testing.assert_array_equal(x.numpy(), expected)
    # in a graph: the view's history flows back to the original
    a = ag.ones(3, requires_grad=True)
    b = a * 2
    b.unsqueeze_(0)
    assert tuple(b.shape) == (1, 3)
    b.sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [2.0, 2.0, 2.0])
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        ag.ones(3, requires_grad=True).unsqueeze_(0)


def test_add_out_matches_torch():
    torch = pytest.importorskip("torch")
    for m in (torch, ag):
        result = m.empty(5, 3)
        got = m.add(m.ones(5, 3), m.ones(5, 3), out=result)
        assert got is result and float(result.sum()) == 30.0
    # a wrong-sized out is resized with PyTorch's warning
    with pytest.warns(UserWarning, match="was resized since it had shape \\[4\\]"):
        r = ag.add(ag.ones(2, 3), 1, out=ag.empty(4))
    assert tuple(r.shape) == (2, 3)
    r0 = ag.add(ag.ones(2), 1, out=ag.empty(0))  # zero elements: resized silently
    assert tuple(r0.shape) == (2,)
    with pytest.raises(RuntimeError) as theirs:
        torch.add(torch.ones(2, requires_grad=True), 1, out=torch.empty(2))
    with pytest.raises(RuntimeError) as ours:
        ag.add(ag.ones(2, requires_grad=True), 1, out=ag.empty(2))
    assert str(ours.value) == str(theirs.value)
    with ag.no_grad():
        ag.add(ag.ones(2, requires_grad=True), 1, out=ag.empty(2))  # allowed without grad mode


def test_matmul_keywords_and_size_keyword():
    check(lambda m, a, b: m.matmul(input=a, other=b), (3, 4), (4, 2))
    assert ag.randn(size=()).shape == ()
    assert ag.zeros(size=(2, 3)).shape == (2, 3)
    assert ag.ones(size=[4]).shape == (4,)
    assert ag.rand(size=(1, 2), dtype=ag.float64).dtype == ag.float64
    with pytest.raises(TypeError, match="positionally or as size="):
        ag.zeros(2, size=(2,))


def test_conv_outputs_are_contiguous_as_in_torch():
    x = ag.randn(2, 3, 12, 12)
    y = ag.nn.Conv2d(3, 6, 5)(x)
    assert y.is_contiguous()
    pooled = ag.nn.functional.max_pool2d(ag.relu(y), 2)
    assert pooled.view(-1, 6 * 4 * 4).shape == (2, 96)  # the blitz CIFAR-10 tutorial's view
    z = ag.nn.ConvTranspose2d(3, 4, 3, stride=2)(x)
    assert z.is_contiguous()
