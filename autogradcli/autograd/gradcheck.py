"""``gradcheck`` and ``gradgradcheck``: analytical gradients against central finite differences.

Semantics follow ``torch.autograd.gradcheck``: the numerical Jacobian perturbs each input element
by ``±eps`` (in place, in the input's dtype), the analytical one is built row by row with
``autograd.grad`` (one vector-Jacobian product per output element, run twice to check that
backward is reentrant), and an element passes when ``|a - n| <= atol + rtol * |n|``.
``fast_mode`` compares ``v^T J u`` for random unit vectors ``u``, ``v`` and falls back to the slow
path to locate a failure.

``gradcheck_report`` returns the full comparison as a :class:`GradcheckReport` (Jacobians as
numpy arrays, per pair errors and the failing elements) for tools that render their own reports.

The checks run in :mod:`.gradcheck_checks`, the Jacobians are computed in :mod:`.jacobians`, and
the report types and messages live in :mod:`.gradcheck_results`; all are importable from here, as
before, and load on the first check rather than with ``autogradcli.autograd``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._utils.lazy import lazy_attributes
from ..tensor.tensor import Tensor
from .engine import grad as _autograd_grad

# the report types and the checks load on the first check (see _utils/lazy.py)
_LAZY = {
    "FAILED_NONDET_MSG": ".gradcheck_results:FAILED_NONDET_MSG",
    "GradcheckError": ".gradcheck_results:GradcheckError",
    "GradcheckReport": ".gradcheck_results:GradcheckReport",
    "Mismatch": ".gradcheck_results:Mismatch",
    "PairReport": ".gradcheck_results:PairReport",
    "gradcheck_report": ".gradcheck_checks:gradcheck_report",
}
__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)

__all__ = ["gradcheck", "gradgradcheck", *_LAZY]


def gradcheck(
    func: Callable[..., Any],
    inputs: Any,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    fast_mode: bool = False,
) -> bool:
    """Check the analytical gradients of ``func`` against central finite differences.

    ``inputs`` is a Tensor or a tuple of arguments; the Tensors with ``requires_grad=True`` are
    checked (use float64). Returns True, or raises :class:`GradcheckError` naming the output and
    input, the worst element, the values and the tolerance (``raise_exception=False``: returns
    False instead).
    """
    from .complex_check import as_real_problem
    from .gradcheck_checks import run_gradcheck
    from .gradcheck_results import GradcheckError

    func, inputs = as_real_problem(func, inputs if isinstance(inputs, tuple) else (inputs,))
    if not raise_exception:
        try:
            return run_gradcheck(func, inputs, eps, atol, rtol, nondet_tol, fast_mode)
        except GradcheckError:
            return False
    return run_gradcheck(func, inputs, eps, atol, rtol, nondet_tol, fast_mode)


def gradgradcheck(
    func: Callable[..., Any],
    inputs: Any,
    grad_outputs: Any = None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    fast_mode: bool = False,
) -> bool:
    """Check second-order gradients: gradcheck of ``(inputs, grad_outputs) -> autograd.grad(...)``.

    Without ``grad_outputs``, random ones in [-1, 1) of the outputs' shapes and dtypes are drawn
    (requiring grad, so the gradients with respect to them are checked too).
    """
    from ..tensor.factory import rand_like
    from .jacobians import as_tuple, differentiable_outputs

    tupled = as_tuple(inputs)
    if grad_outputs is None:
        outs = differentiable_outputs(func(*tupled))
        tupled_grads: tuple[Any, ...] = tuple(
            (rand_like(o.detach()) * 2.0 - 1.0).detach().requires_grad_(True) for o in outs
        )
    else:
        tupled_grads = as_tuple(grad_outputs)
    n_out = len(tupled_grads)
    diff_idx = {i for i, x in enumerate(tupled) if isinstance(x, Tensor) and x.requires_grad}

    def new_func(*all_args: Any) -> tuple[Tensor, ...]:
        in_args = all_args[:-n_out] if n_out else all_args
        outs = differentiable_outputs(func(*in_args))
        diff_in = [x for i, x in enumerate(in_args) if i in diff_idx]
        grads = _autograd_grad(
            outs, diff_in, list(all_args[len(in_args) :]), create_graph=True, allow_unused=True
        )
        return tuple(g for g in grads if g is not None)

    return gradcheck(
        new_func,
        tupled + tupled_grads,
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
        nondet_tol=nondet_tol,
        fast_mode=fast_mode,
    )
