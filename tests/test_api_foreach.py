"""``torch._foreach_*`` (scalar, scalar-list, 0-d tensor and tensor-list overloads, in place and
out of place) and ``lerp``, against PyTorch on identical data (issue 21)."""

import numpy as np
import pytest
from oracle import check

import autogradcli as ag

_RNG = np.random.default_rng(5)
_A = [np.abs(_RNG.standard_normal(s)) + 0.5 for s in ((2, 3), (4,))]
_B = [np.abs(_RNG.standard_normal(s)) + 0.5 for s in ((2, 3), (4,))]

CALLS = [
    ("add", lambda m, b: (1.5,)),
    ("add", lambda m, b: ([0.5, -2.0],)),
    ("add", lambda m, b: (b,)),
    ("add", lambda m, b: (m.tensor(2.0, dtype=m.float64),)),
    ("sub", lambda m, b: (b,), {"alpha": 3}),
    ("add", lambda m, b: (tuple(b),), {"alpha": -0.5}),
    ("mul", lambda m, b: (b,)),
    ("mul", lambda m, b: (2.0,)),
    ("div", lambda m, b: ([2.0, 4.0],)),
    ("div", lambda m, b: (b,)),
    ("pow", lambda m, b: (2.0,)),
    ("maximum", lambda m, b: (b,)),
    ("maximum", lambda m, b: (1.0,)),
    ("minimum", lambda m, b: ([1.0, 0.9],)),
    ("clamp_min", lambda m, b: (1.0,)),
    ("clamp_max", lambda m, b: (b,)),
    ("lerp", lambda m, b: (b, 0.3)),
    ("lerp", lambda m, b: (b, 0.7)),
    ("lerp", lambda m, b: (b, b)),
    ("addcmul", lambda m, b: (b, b)),
    ("addcmul", lambda m, b: (b, b, 0.5)),
    ("addcdiv", lambda m, b: (b, b, [-1.0, 2.0])),
    ("addcdiv", lambda m, b: (b, b, m.tensor([0.5, 2.0], dtype=m.float64))),
    ("sqrt", lambda m, b: ()),
    ("exp", lambda m, b: ()),
    ("log", lambda m, b: ()),
    ("neg", lambda m, b: ()),
    ("abs", lambda m, b: ()),
    ("reciprocal", lambda m, b: ()),
    ("sigmoid", lambda m, b: ()),
]


def _run(m, name, args, kwargs, in_place):
    a = [m.tensor(x) for x in _A]
    b = [m.tensor(x) for x in _B]
    out = getattr(m, f"_foreach_{name}{'_' if in_place else ''}")(a, *args(m, b), **kwargs)
    return a, out


@pytest.mark.parametrize("call", CALLS, ids=[f"{c[0]}{i}" for i, c in enumerate(CALLS)])
def test_foreach_matches_torch(call):
    torch = pytest.importorskip("torch")
    name, args, kwargs = call[0], call[1], (call[2] if len(call) > 2 else {})
    _, ours = _run(ag, name, args, kwargs, False)
    _, theirs = _run(torch, name, args, kwargs, False)
    assert type(ours) is tuple and len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert str(o.dtype)[-7:] == str(t.dtype)[-7:]
        np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-12)
    a_ours, ret = _run(ag, name, args, kwargs, True)
    a_theirs, _ = _run(torch, name, args, kwargs, True)
    assert type(ret) is list and all(r is x for r, x in zip(ret, a_ours))
    for o, t in zip(a_ours, a_theirs):
        np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-12)


def test_foreach_norm_zero_and_copy_match_torch():
    torch = pytest.importorskip("torch")
    for m in (ag, torch):
        m.a = [m.tensor(x) for x in _A]
    for args in ((), (1,), (float("inf"),)):
        for o, t in zip(ag._foreach_norm(ag.a, *args), torch._foreach_norm(torch.a, *args)):
            assert o.shape == () and np.allclose(o.numpy(), t.numpy(), rtol=1e-12)
    half = ag._foreach_norm(ag.a, dtype=ag.float32)
    assert half[0].dtype == ag.float32
    ag._foreach_copy_(ag.a, [ag.tensor(x) for x in _B])
    np.testing.assert_array_equal(ag.a[1].numpy(), _B[1])
    ag._foreach_zero_(ag.a)
    assert all(float(t.abs().sum()) == 0 for t in ag.a)
    del ag.a, torch.a


def test_foreach_errors_match_torch():
    torch = pytest.importorskip("torch")
    cases = [
        lambda m: m._foreach_add([m.ones(2), m.ones(3)], [m.ones(2)]),
        lambda m: m._foreach_add([], 1),
        lambda m: m._foreach_add([m.ones(2), m.ones(3)], [1.0]),
        lambda m: m._foreach_mul_([m.ones(2), m.ones(3)], [1.0, 2.0, 3.0]),
        lambda m: m._foreach_add([m.ones(2)], m.tensor([1.0, 2.0])),
        lambda m: m._foreach_mul_([m.ones(2, requires_grad=True)], 2.0),
    ]
    for case in cases:
        with pytest.raises(RuntimeError) as theirs:
            case(torch)
        with pytest.raises(RuntimeError) as ours:
            case(ag)
        assert str(ours.value) == str(theirs.value)


def test_foreach_keeps_the_graph():
    check(lambda m, x, y: m._foreach_mul([x, y], [y, x]), (3,), (3,))
    check(lambda m, x, y: m._foreach_addcmul([x], [y], [x], 0.5), (2, 2), (2, 2))
    check(lambda m, x, y: m._foreach_lerp([x, y], [y, x], 0.25), (3,), (3,), dtype="float32")


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_lerp_matches_torch(dtype):
    check(lambda m, a, b: m.lerp(a, b, 0.3), (2, 3), (2, 3), dtype=dtype)
    check(lambda m, a, b: a.lerp(b, 0.9), (2, 3), (3,), dtype=dtype)
    w = np.array([[-0.5, 0.49, 0.5, 0.51, 1.0, 2.0]])
    check(lambda m, a, b, w: m.lerp(a, b, w), (2, 6), (6,), w, dtype=dtype)
    check(lambda m, a, b: (a * 1).lerp_(b, 0.6), (4,), (4,), dtype=dtype)


def test_lerp_errors_and_grad_fn_match_torch():
    torch = pytest.importorskip("torch")
    cases = [
        lambda m: m.lerp(m.ones(2), m.ones(2, dtype=m.float64), 0.5),
        lambda m: m.lerp(m.ones(2), m.ones(2), m.tensor([0.5, 0.5], dtype=m.float64)),
        lambda m: m.lerp(m.ones(2, dtype=m.long), m.ones(2, dtype=m.long), 1),
    ]
    for case in cases:
        with pytest.raises(RuntimeError) as theirs:
            case(torch)
        with pytest.raises(RuntimeError) as ours:
            case(ag)
        assert str(ours.value) == str(theirs.value)
    half = torch.tensor(0.25, dtype=torch.float64)
    theirs = torch.lerp(torch.ones(2), torch.zeros(2), half)
    ours = ag.lerp(ag.ones(2), ag.zeros(2), ag.tensor(0.25, dtype=ag.float64))
    assert ours.dtype == ag.float32 and np.array_equal(ours.numpy(), theirs.numpy())
    out = ag.lerp(ag.ones(2, requires_grad=True), ag.zeros(2), 0.5)
    assert type(out.grad_fn).__name__ == "LerpBackward0"


def test_foreach_loads_on_first_use_and_its_name_table_is_complete():
    from autogradcli.ops import foreach, lazy_methods

    assert sorted(lazy_methods.FOREACH_NAMES) == foreach.__all__
    assert all(getattr(ag, name) is getattr(foreach, name) for name in foreach.__all__)
    assert ag.kron is __import__("autogradcli.ops.products", fromlist=["kron"]).kron
