"""Elementwise math the corpus uses (issue 21): hyperbolic functions and their inverses,
``log2``/``log10``, ``square`` and the ``isnan`` family, against PyTorch on identical data."""

import numpy as np
import pytest
from oracle import check
from same_as_torch import same_error, same_values

import autogradcli as ag

_RNG = np.random.default_rng(3)
_ANY = _RNG.standard_normal((3, 4))
_ABOVE_ONE = 1.0 + np.abs(_ANY) + 0.1
_INSIDE = np.tanh(_ANY) * 0.9

CASES = [
    ("sinh", _ANY),
    ("cosh", _ANY),
    ("asinh", _ANY),
    ("acosh", _ABOVE_ONE),
    ("atanh", _INSIDE),
    ("arcsinh", _ANY),
    ("log2", _ABOVE_ONE),
    ("log10", _ABOVE_ONE),
    ("square", _ANY),
    ("tan", _INSIDE),
    ("asin", _INSIDE),
    ("acos", _INSIDE),
    ("atan", _ANY),
    ("arctan", _ANY),
    ("reciprocal", _ABOVE_ONE),
    ("frac", _ANY * 3),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name, data", CASES, ids=[c[0] for c in CASES])
def test_elementwise_matches_torch(name, data, dtype):
    check(lambda m, x: getattr(m, name)(x), data, dtype=dtype)
    check(lambda m, x: getattr(x, name)(), data[:1], dtype=dtype, gradgrad=False)


def test_integer_inputs_and_grad_fn_names_match_torch():
    torch = pytest.importorskip("torch")
    for name in ("sinh", "cosh", "asinh", "log2", "log10", "square"):
        for values in ([1, 2, 3], [True, False]):
            ours, theirs = (
                getattr(ag, name)(ag.tensor(values)),
                getattr(torch, name)(torch.tensor(values)),
            )
            assert str(ours.dtype) == str(theirs.dtype).replace("torch", "autogradcli"), name
            np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)
        x, xt = ag.tensor([1.5], requires_grad=True), torch.tensor([1.5], requires_grad=True)
        assert (
            type(getattr(ag, name)(x).grad_fn).__name__
            == type(getattr(torch, name)(xt).grad_fn).__name__
        )


def test_domain_edges_match_torch():
    torch = pytest.importorskip("torch")
    edge = np.array([-1.0, 1.0, 0.999999, 1.000001, 0.0, -2.0, np.inf])
    for name in ("acosh", "atanh", "log2", "log10"):
        ours = getattr(ag, name)(ag.tensor(edge)).numpy()
        np.testing.assert_array_equal(ours, getattr(torch, name)(torch.tensor(edge)).numpy())


SPECIAL = np.array([1.0, -0.0, np.nan, np.inf, -np.inf, 3e38, -1e-45])


@pytest.mark.parametrize("name", ["isnan", "isinf", "isfinite", "isposinf", "isneginf", "isreal"])
def test_predicates_match_torch(name):
    torch = pytest.importorskip("torch")
    for values in (SPECIAL.astype("float32"), SPECIAL, np.array([1, -2]), np.array([True])):
        ours, theirs = (
            getattr(ag, name)(ag.tensor(values)),
            getattr(torch, name)(torch.tensor(values)),
        )
        assert ours.dtype == ag.bool and not ours.requires_grad
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
        np.testing.assert_array_equal(getattr(ag.tensor(values), name)().numpy(), theirs.numpy())
    with pytest.raises(TypeError) as ours_err:
        getattr(ag, name)(1.0)
    with pytest.raises(TypeError) as theirs_err:
        getattr(torch, name)(1.0)
    assert str(ours_err.value) == str(theirs_err.value)
    x = ag.tensor([1.0, float("nan")], requires_grad=True)
    assert not getattr(ag, name)(x * 2).requires_grad
    complex_values = [complex(float("nan"), 0), 1j, complex(float("inf"), 1)]
    if name in ("isposinf", "isneginf"):
        same_error(lambda m: getattr(m, name)(m.tensor(complex_values)))
    else:
        same_values(lambda m: getattr(m, name)(m.tensor(complex_values)))


_HALVES = np.array([1.25, 2.5, -0.5, 3.5, -2.5, 0.49999, 1e6 + 0.5, -7.0])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: m.round(x),
        lambda m, x: m.round(x * 100, decimals=-1),
        lambda m, x: x.round(decimals=2),
        lambda m, x: m.floor(x),
        lambda m, x: x.ceil(),
        lambda m, x: (x * 1).floor_(),
        lambda m, x: (x * 1).round_(),
    ],
    ids=range(7),
)
def test_rounding_matches_torch(fn, dtype):
    check(fn, _HALVES, dtype=dtype, gradgrad=False)


def test_rounding_integer_inputs_and_errors_match_torch():
    torch = pytest.importorskip("torch")
    for name in ("floor", "ceil", "round"):
        ours, theirs = (
            getattr(ag, name)(ag.tensor([1, -2])),
            getattr(torch, name)(torch.tensor([1, -2])),
        )
        assert ours.dtype == ag.int64 and ours.tolist() == theirs.tolist()
    for case in (
        lambda m: m.round(m.tensor([1, 2]), decimals=1),
        lambda m: m.frac(m.tensor([1, 2])),
    ):
        with pytest.raises(NotImplementedError) as theirs:
            case(torch)
        with pytest.raises(NotImplementedError) as ours:
            case(ag)
        assert str(ours.value) == str(theirs.value)
    for make in (
        lambda m, x: m.round(x),
        lambda m, x: m.round(x, decimals=1),
        lambda m, x: m.frac(x),
    ):
        xt, xa = torch.ones(2, requires_grad=True), ag.ones(2, requires_grad=True)
        assert type(make(ag, xa).grad_fn).__name__ == type(make(torch, xt).grad_fn).__name__


@pytest.mark.parametrize(
    "name",
    [
        "sqrt",
        "exp",
        "log",
        "sigmoid",
        "tanh",
        "neg",
        "abs",
        "tan",
        "reciprocal",
        "square",
        "log10",
        "relu",
    ],
)
def test_in_place_unary_matches_torch(name):
    check(lambda m, x: getattr(x * 1, f"{name}_")(), _ABOVE_ONE[:1], gradgrad=False)
    x = ag.tensor(_ABOVE_ONE)
    assert getattr(x, f"{name}_")() is x
    torch = pytest.importorskip("torch")
    np.testing.assert_allclose(x.numpy(), getattr(torch, name)(torch.tensor(_ABOVE_ONE)).numpy())
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        getattr(ag.ones(2, requires_grad=True), f"{name}_")()


BINARY = [
    lambda m, a, b: m.atan2(a, b),
    lambda m, a, b: a.arctan2(b[0]),
    lambda m, a, b: m.hypot(a, b),
    lambda m, a, b: m.logaddexp(a, b),
    lambda m, a, b: m.exp2(a),
    lambda m, a, b: m.clamp_min(a, 0.1) + b.clamp_max(-0.2),
    lambda m, a, b: m.true_divide(a, b) + m.deg2rad(a) + m.rad2deg(b) + m.sgn(a),
    lambda m, a, b: (a * 1).clamp_min_(0.0) + (b * 1).atan2_(a),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("fn", BINARY, ids=range(len(BINARY)))
def test_binary_math_matches_torch(fn, dtype):
    check(fn, (3, 4), (3, 4), dtype=dtype)


def test_nan_to_num_and_logical_ops_match_torch():
    special = np.array([np.nan, np.inf, -np.inf, 1.5, -2.0])
    check(lambda m, x: m.nan_to_num(x), special, gradgrad=False)
    check(lambda m, x: x.nan_to_num(nan=1.0, posinf=2.0, neginf=-3.0), special, dtype="float32")
    check(lambda m, x: (x * 1).nan_to_num_(), special, gradgrad=False)
    torch = pytest.importorskip("torch")
    a, b = [1, 0, 2, 0], [1.0, 1.0, 0.0, 0.0]
    for name in ("logical_and", "logical_or", "logical_xor"):
        ours = getattr(ag, name)(ag.tensor(a), ag.tensor(b))
        theirs = getattr(torch, name)(torch.tensor(a), torch.tensor(b))
        assert ours.dtype == ag.bool and ours.tolist() == theirs.tolist()
    for name in ("atan2", "exp2"):
        args = (ag.tensor([1, 2]),) * (2 if name == "atan2" else 1)
        targs = (torch.tensor([1, 2]),) * len(args)
        ours, theirs = getattr(ag, name)(*args), getattr(torch, name)(*targs)
        assert str(ours.dtype)[-7:] == str(theirs.dtype)[-7:]
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)
    with pytest.raises(NotImplementedError) as theirs:
        torch.hypot(torch.tensor([1]), torch.tensor([2]))
    with pytest.raises(NotImplementedError) as ours:
        ag.hypot(ag.tensor([1]), ag.tensor([2]))
    assert str(ours.value) == str(theirs.value)
