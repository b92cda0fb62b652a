"""Activations the corpus uses (issue 21): ``Hardswish``, ``Hardsigmoid``, ``Mish``, ``GLU``,
``Softsign``, ``Tanhshrink``, ``Threshold``, ``PReLU`` and their functional forms, against
PyTorch on identical data (values, gradients, grad-of-grad, reprs, errors)."""

import numpy as np
import pytest
from module_oracle import compare_module
from oracle import check

import autogradcli as ag
import autogradcli.nn as nn

# points on and around the kinks of the piecewise functions, and ordinary values
_KINKS = np.array([-4.0, -3.0001, -2.9999, -1.0, 0.0, 0.5, 2.9999, 3.0001, 5.0, 0.1, 0.2])
_RANDOM = np.random.default_rng(2).standard_normal((2, 6)) * 3

FUNCTIONAL = [
    ("hardswish", lambda F, x: F.hardswish(x)),
    ("hardsigmoid", lambda F, x: F.hardsigmoid(x)),
    ("mish", lambda F, x: F.mish(x)),
    ("softsign", lambda F, x: F.softsign(x)),
    ("tanhshrink", lambda F, x: F.tanhshrink(x)),
    ("threshold", lambda F, x: F.threshold(x, 0.1, 20.0)),
    ("glu", lambda F, x: F.glu(x)),
    ("glu0", lambda F, x: F.glu(x.reshape(-1, 2), 0)),
]


def _functional(m):
    return m.nn.functional


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", FUNCTIONAL, ids=[c[0] for c in FUNCTIONAL])
def test_functional_matches_torch(case, dtype):
    name, fn = case
    gradgrad = name != "hardsigmoid"  # torch has no double backward for it
    check(lambda m, x: fn(_functional(m), x), _RANDOM, dtype=dtype, gradgrad=gradgrad)
    if case[0] not in ("glu", "glu0"):  # the kinks: one-sided slopes as torch takes them
        check(lambda m, x: fn(_functional(m), x), _KINKS, dtype=dtype, gradgrad=False)


def test_prelu_matches_torch():
    check(lambda m, x, w: _functional(m).prelu(x, w), (2, 3, 4), np.array([0.25]))
    check(lambda m, x, w: _functional(m).prelu(x, w), (2, 3, 4), np.array([0.1, -0.2, 0.3]))
    check(lambda m, x, w: m.prelu(x, w), (4, 3), np.array([0.1, 0.2, 0.3]), dtype="float32")


def test_in_place_forms_match_torch():
    torch = pytest.importorskip("torch")
    for name, args in (
        ("hardswish", ()),
        ("hardsigmoid", ()),
        ("mish", ()),
        ("threshold", (0.5, -1.0)),
    ):
        ours, theirs = ag.tensor(_RANDOM), torch.tensor(_RANDOM)
        back = getattr(ag.nn.functional, name)(ours, *args, inplace=True)
        getattr(torch.nn.functional, name)(theirs, *args, inplace=True)
        assert back is ours
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
    ours = ag.tensor(_RANDOM)
    ag.nn.functional.threshold_(ours, 0.0, 7.0)
    np.testing.assert_array_equal(ours.numpy(), np.where(_RANDOM > 0, _RANDOM, 7.0))
    _same = torch.nn.functional.threshold(torch.tensor([1, 2, 3]), 1, 0)
    assert ag.nn.functional.threshold(ag.tensor([1, 2, 3]), 1, 0).tolist() == _same.tolist()


LAYERS = [
    lambda nn: nn.Hardswish(),
    lambda nn: nn.Hardsigmoid(),
    lambda nn: nn.Mish(),
    lambda nn: nn.Softsign(),
    lambda nn: nn.Tanhshrink(),
    lambda nn: nn.Threshold(0.1, 20.0),
    lambda nn: nn.GLU(dim=1),
    lambda nn: nn.PReLU(),
    lambda nn: nn.PReLU(3, init=0.1),
]


@pytest.mark.parametrize("make", LAYERS, ids=range(len(LAYERS)))
def test_layers_match_torch(make):
    torch = pytest.importorskip("torch")
    compare_module(make, (2, 4, 3) if repr(make(nn)) != "PReLU(num_parameters=3)" else (2, 3, 4))
    assert repr(make(nn)) == repr(make(torch.nn))


def test_reprs_and_errors_match_torch():
    torch = pytest.importorskip("torch")
    for make in (
        lambda nn: nn.Hardsigmoid(inplace=True),
        lambda nn: nn.Mish(True),
        lambda nn: nn.Threshold(0.1, 20, True),
    ):
        assert repr(make(nn)) == repr(make(torch.nn))
    cases = [
        lambda m: m.nn.functional.glu(m.ones(2, 3), 1),
        lambda m: m.nn.functional.glu(m.tensor(1.0)),
        lambda m: m.nn.functional.prelu(m.ones(2, 3), m.ones(2)),
    ]
    for case in cases:
        with pytest.raises(RuntimeError) as theirs:
            case(torch)
        with pytest.raises(RuntimeError) as ours:
            case(ag)
        assert str(ours.value) == str(theirs.value)
    for make in (lambda m, x: m.nn.functional.hardswish(x), lambda m, x: m.nn.functional.mish(x)):
        ours = make(ag, ag.ones(2, requires_grad=True)).grad_fn
        theirs = make(torch, torch.ones(2, requires_grad=True)).grad_fn
        assert type(ours).__name__ == type(theirs).__name__
