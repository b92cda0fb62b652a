"""check_function: the report object behind `agrad gradcheck`, checked against hand-computed
Jacobians (d(x*x)/dx = 2x on the diagonal), including its limits and each mode's thresholds."""

from __future__ import annotations

import json
import math
import sys

import numpy as np
import pytest

import autogradcli as ag
from autogradcli.autograd import Function
from autogradcli.autograd.function_check import CheckOptions, check_function


def _x(*shape: int, seed: int = 0) -> ag.Tensor:
    rng = np.random.default_rng(seed)
    return ag.tensor(rng.uniform(0.5, 2.0, shape), dtype=ag.float64, requires_grad=True)


def _square(factor: float) -> type[Function]:
    """x * x with backward ``factor * g * x`` (factor 2 is right)."""

    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return factor * g * x

    return Square


class Relu(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (x > 0).double()


def _exits_in(where: str) -> type[Function]:
    class Exits(Function):
        @staticmethod
        def forward(ctx, x):
            if where == "forward":
                sys.exit(3)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            sys.exit(0)

    return Exits


def test_correct_backward_passes_with_every_element_compared():
    x = _x(2, 3)
    rep = check_function(_square(2.0), (x,), ["x"])
    assert rep.ok and not rep.failed and not rep.errors
    assert [c.status for c in rep.checks] == ["pass", "pass", "pass", "skip"]
    (pair,) = rep.pairs
    assert (pair.mode, pair.output, pair.input, pair.n_elements, pair.n_failed) == (
        "full",
        "y",
        "x",
        36,
        0,
    )
    assert pair.max_abs_error < 1e-8
    doc = json.loads(json.dumps(rep.to_dict()))
    assert doc["ok"] is True and doc["inputs"] == [
        {"name": "x", "shape": [2, 3], "dtype": "float64", "requires_grad": True}
    ]


def test_wrong_factor_is_located_and_diagnosed():
    x = _x(4)
    rep = check_function(_square(3.0), (x,), ["x"])
    assert not rep.ok
    assert rep.check("Jacobian matches").status == "fail"
    (pair,) = rep.pairs
    assert pair.n_failed == 4 and pair.n_elements == 16  # the diagonal only
    assert pair.diagnosis == "constant factor: analytical ≈ 1.5 * numerical"
    xs = x.detach().numpy()
    for w in pair.worst:
        (i,) = w.input
        assert w.output == (i,)
        assert w.numerical == pytest.approx(2 * xs[i], rel=1e-6)
        assert w.analytical == pytest.approx(3 * xs[i], rel=1e-12)
        assert w.difference > w.allowed == pytest.approx(1e-5 + 1e-3 * abs(w.numerical))
    assert pair.worst[0].where == f"y[{pair.worst[0].input[0]}] w.r.t. x[{pair.worst[0].input[0]}]"


def test_tolerance_just_inside_and_just_outside():
    x = ag.tensor([1.0], dtype=ag.float64, requires_grad=True)
    # analytical 2.002 against numerical 2: difference 0.002 = atol + rtol * 2 with rtol 1e-3 and
    # atol 0 exactly at the limit; a hair more fails.
    inside = check_function(_square(2.0 * (1 + 0.9e-3)), (x,), ["x"], CheckOptions(atol=0.0))
    outside = check_function(_square(2.0 * (1 + 1.1e-3)), (x,), ["x"], CheckOptions(atol=0.0))
    assert inside.ok and not outside.ok


def test_kink_is_reported_not_failed():
    x = ag.tensor([[1.0, 0.0], [-1.0, 2.0]], dtype=ag.float64, requires_grad=True)
    rep = check_function(Relu, (x,), ["x"])
    assert rep.ok
    (pair,) = rep.pairs
    assert pair.n_kinks == 1 and pair.n_failed == 0
    (kink,) = pair.kinks
    assert kink.where == "y[0, 1] w.r.t. x[0, 1]"
    assert (kink.left, kink.right) == (pytest.approx(0.0), pytest.approx(1.0))


@pytest.mark.parametrize(
    "where, text",
    [("forward", "forward called sys.exit(3)"), ("backward", "backward called sys.exit(0)")],
)
def test_sys_exit_in_user_code_is_a_failed_check(where, text):
    rep = check_function(_exits_in(where), (_x(3),), ["x"])
    assert not rep.ok
    assert rep.checks[0].status == "fail" and rep.checks[0].detail == text
    assert isinstance(rep.errors[0], SystemExit)


def test_keyboard_interrupt_still_stops_the_check():
    class Interrupted(Function):
        @staticmethod
        def forward(ctx, x):
            raise KeyboardInterrupt

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(KeyboardInterrupt):
        check_function(Interrupted, (_x(2),), ["x"])


@pytest.mark.parametrize(
    "options, message",
    [
        (CheckOptions(eps=math.nan), "eps must be a finite number > 0"),
        (CheckOptions(eps=0.0), "eps must be a finite number > 0"),
        (CheckOptions(atol=math.nan), "atol must be a finite number >= 0"),
        (CheckOptions(rtol=-1e-300), "rtol must be a finite number >= 0"),
        (CheckOptions(nondet_tol=math.inf), "nondet_tol must be a finite number >= 0"),
        (CheckOptions(order=3), "order must be 1 or 2"),
    ],
)
def test_options_out_of_range_are_refused(options, message):
    with pytest.raises(ValueError, match=message):
        check_function(_square(2.0), (_x(2),), ["x"], options)


def test_smallest_valid_options_are_accepted():
    opts = CheckOptions(eps=5e-324, atol=0.0, rtol=0.0, nondet_tol=0.0)
    opts.validate()


def test_nothing_to_check():
    empty = ag.zeros(0, dtype=ag.float64, requires_grad=True)
    with pytest.raises(ValueError, match="every input that requires grad is empty"):
        check_function(_square(2.0), (empty,), ["x"])
    with pytest.raises(ValueError, match="no input requires grad"):
        check_function(_square(2.0), (ag.ones(2, dtype=ag.float64),), ["x"])


def _modes(rep):
    return {p.mode for p in rep.pairs}


def test_full_mode_up_to_the_jacobian_limit_then_vjp():
    x = _x(4)  # a 4 x 4 Jacobian
    at = check_function(_square(2.0), (x,), ["x"], CheckOptions(max_jacobian=16))
    over = check_function(_square(2.0), (x,), ["x"], CheckOptions(max_jacobian=15))
    assert _modes(at) == {"full"} and at.checks[1].name == "Jacobian matches finite differences"
    assert _modes(over) == {"vjp"} and at.ok and over.ok
    assert "(v^T J at every input element)" in over.checks[1].name
    assert "4 x 4 = 16 elements, more than the 15" in over.checks[1].detail


def test_vjp_mode_locates_a_wrong_backward_at_input_elements():
    x = _x(3, 4)
    rep = check_function(_square(3.0), (x,), ["x"], CheckOptions(max_jacobian=100))
    assert not rep.ok
    (pair,) = rep.pairs
    assert pair.mode == "vjp" and pair.n_elements == 12 and pair.n_failed == 12
    for w in pair.worst:  # J is diagonal: (v^T J)[i] = v_i * d y_i / d x_i
        assert w.analytical / w.numerical == pytest.approx(1.5, rel=1e-5)
        assert w.where.startswith("v^T y w.r.t. x[")


def test_vjp_mode_samples_input_elements_past_the_visit_limit():
    x = _x(5)
    at = check_function(_square(2.0), (x,), ["x"], CheckOptions(max_full_numel=5))
    over = check_function(_square(2.0), (x,), ["x"], CheckOptions(max_full_numel=4))
    assert _modes(at) == {"full"} and _modes(over) == {"vjp"} and over.ok
    assert "(v^T J at sampled input elements)" in over.checks[1].name
    assert "v^T J matches at 4 of 5 of x, drawn at random" in over.checks[1].detail
    assert "one by one (4)" in over.checks[1].detail
    (pair,) = over.pairs
    assert (pair.n_elements, pair.input_numel) == (4, 5)
    wrong = check_function(_square(3.0), (x,), ["x"], CheckOptions(max_full_numel=4))
    (pair,) = wrong.pairs
    assert not wrong.ok and pair.n_failed == 4
    assert len({w.input for w in pair.worst}) == 4
    for w in pair.worst:
        assert w.analytical / w.numerical == pytest.approx(1.5, rel=1e-5)


def test_work_budget_limits_the_sample():
    x = _x(10)  # 2 forward calls per element, each over 10 inputs + 10 outputs: 40 per element
    opts = CheckOptions(max_jacobian=1, max_work=40 * 3)
    rep = check_function(_square(2.0), (x,), ["x"], opts)
    (pair,) = rep.pairs
    assert (pair.mode, pair.n_elements, pair.input_numel) == ("vjp", 3, 10)
    rep = check_function(_square(2.0), (x,), ["x"], CheckOptions(max_jacobian=1, max_work=40 * 10))
    assert rep.pairs[0].n_elements == 10 and "every input element" in rep.checks[1].name


def test_a_large_input_builds_no_dense_jacobian():
    # 100 x 100 elementwise: a dense Jacobian would be 10,000 x 10,000 float64 (800 MB)
    x = _x(100, 100)
    import tracemalloc

    tracemalloc.start()
    rep = check_function(_square(2.0), (x,), ["x"])
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert rep.ok and _modes(rep) == {"vjp"}
    assert peak < 50e6
    assert "10,000 x 10,000 = 100,000,000 elements" in rep.checks[1].detail


def test_second_order_report():
    class CubeBadSecond(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x.detach() ** 2  # right values, no second-order graph through x

    x = _x(3)
    rep = check_function(CubeBadSecond, (x,), ["x"], CheckOptions(order=2))
    assert rep.check("Jacobian matches").status == "pass"
    assert rep.check("second-order").status == "fail"
    second = [p for p in rep.pairs if p.order == 2]
    assert {(p.output, p.input) for p in second} == {("grad_x", "x"), ("grad_x", "grad_y")}
    bad = [p for p in second if not p.ok]
    assert [p.input for p in bad] == ["x"]
