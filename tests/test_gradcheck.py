"""gradcheck/gradgradcheck: pass for correct backwards, fail with a located message for wrong ones."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import autogradcli as ag
from autogradcli.autograd import Function, GradcheckError, gradcheck, gradgradcheck
from autogradcli.autograd.gradcheck import GradcheckReport, gradcheck_report


def _t(*shape: int, seed: int = 0, dtype: str = "float64") -> ag.Tensor:
    rng = np.random.default_rng(seed)
    return ag.tensor(rng.standard_normal(shape).astype(dtype), requires_grad=True)


def _fn(backward):
    """A Function computing ``x * y`` (broadcasting) with the given backward."""

    class Mul(Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return x * y

    Mul.backward = staticmethod(backward)
    return Mul.apply


def _good(ctx, g):
    x, y = ctx.saved_tensors
    return g * y, g * x


def test_passes_for_builtin_ops_and_correct_backward():
    x, y = _t(3, 4), _t(4, 2, seed=1)
    assert gradcheck(lambda a, b: (a @ b).tanh().sin(), (x, y))
    assert gradcheck(_fn(_good), (_t(3, 4), _t(3, 4, seed=1)))
    assert gradcheck(lambda a: a.exp(), x)  # a single tensor as inputs
    assert gradgradcheck(lambda a, b: (a @ b).tanh(), (x, y))


def test_sign_error_is_located():
    def bad(ctx, g):
        x, y = ctx.saved_tensors
        return g * y, -(g * x)

    with pytest.raises(GradcheckError) as e:
        gradcheck(_fn(bad), (_t(2, 3), _t(2, 3, seed=1)))
    msg = str(e.value)
    assert isinstance(e.value, RuntimeError)
    assert msg.startswith("Jacobian mismatch for output 0 with respect to input 1,")
    assert re.search(r"output 0\[\d, \d\] w.r.t. input 1\[\d, \d\]: numerical", msg)
    assert "6 of 36 elements of the Jacobian fail" in msg
    assert "allowed" in msg and "analytical" in msg


def test_missing_factor_two():
    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x  # should be 2 * g * x

    x = _t(2, 2)
    with pytest.raises(GradcheckError, match=r"output 0\[\d, \d\] w.r.t. input 0\[\d, \d\]") as e:
        gradcheck(Square.apply, (x,))
    report = gradcheck_report(Square.apply, (x,))
    pair = report.pair(0, 0)
    assert not report.ok and pair.n_failed == 4 and pair.n_elements == 16
    np.testing.assert_allclose(np.diag(pair.numerical), 2 * np.diag(pair.analytical), rtol=1e-6)
    w = pair.failures[0]
    assert f"{w.numerical:.10g}" in str(e.value)
    assert w.difference == pytest.approx(abs(w.numerical - w.analytical))
    assert w.allowed == pytest.approx(1e-5 + 1e-3 * abs(w.numerical))
    assert pair.max_rel_error == pytest.approx(0.5, rel=1e-6)


def test_transposed_gradient_non_square():
    class MatMul(Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a @ b

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            # grad_b should be a.t() @ g (3x2); g.t() @ a is its transpose (2x3): shape error
            return g @ b.t(), (g.t() @ a)

    with pytest.raises(RuntimeError, match=r"MatMulBackward.*\(2, 3\).*input 1.*\(3, 2\)"):
        gradcheck(MatMul.apply, (_t(4, 3), _t(3, 2, seed=1)))

    class MatMulT(MatMul):
        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return (g @ b.t()).reshape(3, 4).t(), a.t() @ g  # right shape, wrong layout

    with pytest.raises(GradcheckError, match="output 0 with respect to input 0"):
        gradcheck(MatMulT.apply, (_t(4, 3), _t(3, 2, seed=1)))


@pytest.mark.parametrize("missing", ["none", "zeros"])
def test_gradient_for_one_input_missing(missing):
    def bad(ctx, g):
        x, y = ctx.saved_tensors
        return g * y, (None if missing == "none" else ag.zeros_like(x))

    with pytest.raises(GradcheckError, match="output 0 with respect to input 1") as e:
        gradcheck(_fn(bad), (_t(3), _t(3, seed=1)))
    assert "3 of 9 elements" in str(e.value)


def test_broadcast_dimension_not_summed():
    class AddBias(Function):
        @staticmethod
        def forward(ctx, x, b):
            return x + b

        @staticmethod
        def backward(ctx, g):
            return g, g[0]  # should be g.sum(0)

    x, b = _t(3, 2), _t(2, seed=1)
    assert gradcheck(_fn(_good), (x, b))  # the engine sums a full-shape gradient itself
    with pytest.raises(GradcheckError, match=r"output 0\[[12], [01]\] w.r.t. input 1\[[01]\]"):
        gradcheck(AddBias.apply, (x, b))


def test_non_double_warns_and_raise_exception_false():
    x = _t(3, dtype="float32")
    with pytest.warns(UserWarning, match=r"Input #0 requires gradient and is not a double"):
        gradcheck(lambda a: a * 2.0, (x,), eps=1e-3, atol=1e-3)

    def bad(ctx, g):
        x, y = ctx.saved_tensors
        return g * y * 3.0, g * x

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert gradcheck(_fn(bad), (_t(3), _t(3, seed=1)), raise_exception=False) is False


def test_errors_for_unusable_inputs():
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        gradcheck(lambda a: a * 2.0, (ag.ones(3, dtype=ag.float64),))
    x = ag.tensor(np.broadcast_to(np.ones(3), (2, 3)), requires_grad=True)
    if x._data.strides[0] == 0:
        with pytest.raises(RuntimeError, match="The 0th input has a dimension with stride 0"):
            gradcheck(lambda a: a * 2.0, (x,))


def test_nondeterministic_backward_detected():
    calls = []

    def noisy(ctx, g):
        x, y = ctx.saved_tensors
        calls.append(1)
        return g * (y + len(calls) * 1e-9), g * x

    fn = _fn(noisy)
    with pytest.raises(GradcheckError, match="Backward is not reentrant"):
        gradcheck(fn, (_t(2), _t(2, seed=1)))
    assert gradcheck(fn, (_t(2), _t(2, seed=1)), nondet_tol=1e-6)
    assert not gradcheck_report(fn, (_t(2), _t(2, seed=1))).reentrant


def test_backward_not_multiplied_by_grad_output():
    def bad(ctx, g):
        x, y = ctx.saved_tensors
        return g * y + 0.0 * x + (g.sum() == 0.0).to(ag.float64), g * x

    with pytest.raises(GradcheckError, match="backward not multiplied by grad_output"):
        gradcheck(_fn(bad), (_t(2), _t(2, seed=1)))


def test_fast_mode_passes_and_fails():
    x, y = _t(3, 4), _t(4, 2, seed=1)
    assert gradcheck(lambda a, b: (a @ b).sigmoid(), (x, y), fast_mode=True)
    assert gradgradcheck(lambda a, b: (a @ b).tanh(), (x, y), fast_mode=True)

    def bad(ctx, g):
        x, y = ctx.saved_tensors
        return g * y, g * x * 2.0

    with pytest.raises(GradcheckError) as e:
        gradcheck(_fn(bad), (_t(2, 2), _t(2, 2, seed=1)), fast_mode=True)
    msg = str(e.value)
    assert msg.startswith("Jacobian mismatch for output 0 with respect to input 1,")
    assert "computed in fast mode" in msg
    assert re.search(r"worst element: output 0\[\d, \d\] w.r.t. input 1\[\d, \d\]", msg)
    assert (
        gradcheck(_fn(bad), (_t(2), _t(2, seed=1)), fast_mode=True, raise_exception=False) is False
    )


def test_gradgradcheck_detects_wrong_double_backward():
    class Cube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3.0 * (x * x).detach()  # right value, but not differentiable w.r.t. x

    x = _t(3)
    assert gradcheck(Cube.apply, (x,))
    with pytest.raises(GradcheckError, match="output 0 with respect to input 0"):
        gradgradcheck(Cube.apply, (x,))


def test_several_outputs_and_non_tensor_args():
    def f(a, k, b):
        return a * k, (a * b).sum(), ag.tensor([1, 2])

    report = gradcheck_report(f, (_t(2), 3.0, _t(2, seed=1)))
    assert isinstance(report, GradcheckReport) and report.ok
    assert (report.n_outputs, report.n_inputs) == (2, 2)
    p = report.pair(1, 1)
    assert p.arg_index == 2 and p.output_shape == () and p.numerical.shape == (2, 1)
    np.testing.assert_allclose(p.numerical, p.analytical, atol=1e-8)
    assert gradcheck(f, (_t(2), 3.0, _t(2, seed=1)))


def test_matches_torch_verdicts():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal((2, 3))
    for fn in (lambda m, a: (a * a).sum(1), lambda m, a: a.abs() * 0.5 + a.exp()):
        ours = gradcheck(lambda a, fn=fn: fn(ag, a), (ag.tensor(x, requires_grad=True),))
        theirs = torch.autograd.gradcheck(
            lambda a, fn=fn: fn(torch, a), (torch.tensor(x, requires_grad=True),)
        )
        assert ours == theirs
