"""The checks behind ``gradcheck``: the full Jacobian comparison (``gradcheck_report``), the
fast ``v^T J u`` projection and the zero-grad_output check. Imported when a check first runs,
not with ``autogradcli.autograd``: its report types (dataclasses) are not needed before."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..backend import array_module, to_numpy
from ..tensor.tensor import Tensor, wrap
from .engine import grad as _autograd_grad
from .gradcheck_results import (
    FAST_FAIL_SLOW_OK_MSG,
    GradcheckError,
    GradcheckReport,
    compare_jacobians,
    not_reentrant_message,
)
from .jacobians import (
    analytical_jacobian,
    as_tuple,
    check_inputs,
    differentiable_outputs,
    float_outputs,
    numerical_jacobian,
    numerical_jvp,
    random_unit,
    vjp,
)

__all__ = ["gradcheck_report", "run_gradcheck"]


def _requires_grad_positions(ref: list[Any]) -> list[int]:
    """Among the float outputs, the positions of those that require grad."""
    return [k for k, o in enumerate(float_outputs(ref)) if o.requires_grad]


def gradcheck_report(
    func: Callable[..., Any],
    inputs: Any,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    nondet_tol: float = 0.0,
    max_failures: int | None = None,
) -> GradcheckReport:
    """Compare the full numerical and analytical Jacobians of ``func`` at ``inputs``.

    Never raises for a mismatch (only for unusable inputs, as gradcheck does); keeps at most
    ``max_failures`` failing elements per pair (all when None), worst first.
    """
    inputs = as_tuple(inputs)
    args = check_inputs(inputs)
    func_out = func(*inputs)
    ref = list(as_tuple(func_out))
    outputs = differentiable_outputs(func_out)
    diff_inputs = [inputs[i] for i in args]
    numerical = [numerical_jacobian(func, inputs, ref, arg, eps) for arg in args]
    if not outputs:
        for j, per_out in enumerate(numerical):
            for n in per_out:
                if n.size and not np.all(np.abs(n) <= nondet_tol):
                    raise GradcheckError(
                        f"Numerical gradient for function expected to be zero (input {j})"
                    )
    keep = _requires_grad_positions(ref)
    pairs = []
    for i, o in enumerate(outputs):
        first = analytical_jacobian(o, diff_inputs)
        second = analytical_jacobian(o, diff_inputs)
        for j, arg in enumerate(args):
            p = compare_jacobians(
                i, j, arg, o, inputs[arg], numerical[j][keep[i]], first[j], atol, rtol, max_failures
            )
            p.nondet_max_diff = float(np.abs(first[j] - second[j]).max()) if first[j].size else 0.0
            pairs.append(p)
    return GradcheckReport(pairs, eps, atol, rtol, nondet_tol, len(outputs), len(args))


def _unit_vector(rng: np.random.Generator, t: Tensor) -> Any:
    """A random non-negative unit vector with ``t``'s size, dtype and device (flat)."""
    v = random_unit(rng, t._data.size).astype(t._data.dtype)
    xp = array_module(t._data)
    return v if xp is np else xp.asarray(v)


def _fast_check(
    func: Callable,
    inputs: tuple[Any, ...],
    func_out: Any,
    args: list[int],
    eps: float,
    atol: float,
    rtol: float,
    nondet_tol: float,
) -> None:
    """Compare ``v^T J u`` numerically and analytically; locate a failure with the slow path."""
    ref = list(as_tuple(func_out))
    outputs = differentiable_outputs(func_out)
    diff_inputs = [inputs[i] for i in args]
    rng = np.random.default_rng(67280421310721)
    all_u = [_unit_vector(rng, t) for t in diff_inputs]
    all_v = [_unit_vector(rng, o) for o in outputs]
    keep = _requires_grad_positions(ref)
    numerical = []  # [input][output] scalars v^T (J u)
    for arg, u in zip(args, all_u):
        arr = inputs[arg]._data
        ju = numerical_jvp(func, inputs, ref, arr, u.reshape(arr.shape) * eps, eps)
        if not outputs and any(np.any(np.abs(x) > nondet_tol) for x in ju):
            raise GradcheckError("Numerical gradient for function expected to be zero")
        numerical.append([float(to_numpy(v) @ ju[k]) for k, v in zip(keep, all_v)])
    for i, (o, v) in enumerate(zip(outputs, all_v)):
        first = vjp(o, diff_inputs, v.reshape(o._data.shape))
        second = vjp(o, diff_inputs, v.reshape(o._data.shape))
        for g1, g2 in zip(first, second):
            if g1 is not None and g2 is not None and g1.size and np.abs(g1 - g2).max() > nondet_tol:
                raise GradcheckError(not_reentrant_message(nondet_tol))
        for j, (g, u) in enumerate(zip(first, all_u)):
            a = 0.0 if g is None else float(g.reshape(-1) @ to_numpy(u).astype(np.float64))
            n = numerical[j][i]
            tol = atol * float(to_numpy(u).sum()) * float(to_numpy(v).sum())
            if not abs(a - n) <= tol + rtol * abs(n):
                report = gradcheck_report(
                    func, inputs, eps=eps, atol=atol, rtol=rtol, nondet_tol=nondet_tol
                )
                slow = report.pair(i, j)
                msg = (
                    f"Jacobian mismatch for output {i:d} with respect to input {j:d},\n"
                    f"numerical:{n}\nanalytical:{a}\n\n"
                    "The above quantities relating the numerical and analytical jacobians are "
                    "computed in fast mode. Below, we recompute numerical and analytical "
                    "jacobians in slow mode:\n\n" + slow.message()
                )
                if slow.ok:
                    msg += (
                        f"\nThe max per-element difference (slow mode) is: {slow.max_abs_error}.\n"
                    )
                    msg += FAST_FAIL_SLOW_OK_MSG
                raise GradcheckError(msg)


def _check_mul_by_grad_output(outputs: list[Tensor], diff_inputs: list[Tensor]) -> None:
    """Zero grad_outputs must give zero input gradients (PyTorch's last backward check)."""
    zeros = [wrap(array_module(o._data).zeros_like(o._data)) for o in outputs]
    grads = _autograd_grad(outputs, diff_inputs, zeros, allow_unused=True)
    for g, t in zip(grads, diff_inputs):
        if g is None:
            continue
        if np.any(to_numpy(g._data) != 0):
            raise GradcheckError("backward not multiplied by grad_output")
        if g._data.shape != t._data.shape:
            raise GradcheckError("grad is incorrect size")


def run_gradcheck(
    func: Callable,
    inputs: Any,
    eps: float,
    atol: float,
    rtol: float,
    nondet_tol: float,
    fast_mode: bool,
) -> bool:
    """gradcheck proper: raises :class:`GradcheckError` on the first failing check."""
    inputs = as_tuple(inputs)
    args = check_inputs(inputs)
    if fast_mode:
        func_out = func(*inputs)
        _fast_check(func, inputs, func_out, args, eps, atol, rtol, nondet_tol)
    else:
        report = gradcheck_report(
            func, inputs, eps=eps, atol=atol, rtol=rtol, nondet_tol=nondet_tol
        )
        message = report.error_message()
        if message is not None:
            raise GradcheckError(message)
        func_out = func(*inputs)
    outputs = differentiable_outputs(func_out)
    if outputs:
        _check_mul_by_grad_output(outputs, [inputs[i] for i in args])
    return True
