"""``gradcheck`` and ``gradgradcheck``: analytical gradients against central finite differences.

Semantics follow ``torch.autograd.gradcheck``: the numerical Jacobian perturbs each input element
by ``±eps`` (in place, in the input's dtype), the analytical one is built row by row with
``autograd.grad`` (one vector-Jacobian product per output element, run twice to check that
backward is reentrant), and an element passes when ``|a - n| <= atol + rtol * |n|``.
``fast_mode`` compares ``v^T J u`` for random unit vectors ``u``, ``v`` and falls back to the slow
path to locate a failure.

``gradcheck_report`` returns the full comparison as a :class:`GradcheckReport` (Jacobians as
numpy arrays, per pair errors and the failing elements) for tools that render their own reports.

Numbering, as in PyTorch's messages: "output i" counts the outputs that require grad, "input j"
counts the inputs that require grad (``PairReport.arg_index`` gives the position in ``inputs``).
Jacobians have shape ``(input numel, output numel)``, PyTorch's layout.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..backend import array_module, to_numpy
from ..tensor.tensor import Tensor, _make
from .engine import grad as _autograd_grad

__all__ = [
    "GradcheckError",
    "GradcheckReport",
    "Mismatch",
    "PairReport",
    "gradcheck",
    "gradcheck_report",
    "gradgradcheck",
]


class GradcheckError(RuntimeError):
    """Raised by gradcheck/gradgradcheck when a check fails (as torch's GradcheckError)."""


FAILED_NONDET_MSG = (
    "\n\nNOTE: If your op relies on non-deterministic operations, this failure might be expected: "
    "call gradcheck/gradgradcheck with `nondet_tol=<tol>` as a keyword argument."
)
FAST_FAIL_SLOW_OK_MSG = (
    "Fast gradcheck failed but element-wise differences are small. This means that the\n"
    "test might've passed in slow_mode! Call gradcheck/gradgradcheck with `fast_mode=False`."
)


@dataclass
class Mismatch:
    """One Jacobian element outside the tolerance: d output[output_element] / d input[input_element]."""

    output_index: int
    output_element: tuple[int, ...]
    input_index: int
    input_element: tuple[int, ...]
    numerical: float
    analytical: float
    difference: float  # |analytical - numerical|
    allowed: float  # atol + rtol * |numerical|

    def where(self) -> str:
        """``"output 0[1, 2] w.r.t. input 1[0, 3]"``."""
        return (
            f"output {self.output_index}{_fmt_index(self.output_element)} w.r.t. "
            f"input {self.input_index}{_fmt_index(self.input_element)}"
        )


@dataclass
class PairReport:
    """The comparison of one (output, input) Jacobian block."""

    output_index: int
    input_index: int
    arg_index: int  # the input's position in the ``inputs`` tuple
    output_shape: tuple[int, ...]
    input_shape: tuple[int, ...]
    numerical: np.ndarray  # float64, shape (input numel, output numel)
    analytical: np.ndarray
    atol: float
    rtol: float
    max_abs_error: float  # max |a - n| (nan if any element is nan)
    max_rel_error: float  # max |a - n| / |n| (inf where n == 0 != a)
    n_elements: int
    n_failed: int
    failures: list[Mismatch] = field(default_factory=list)  # worst (largest excess) first
    nondet_max_diff: float = 0.0  # max difference between two backward runs

    @property
    def ok(self) -> bool:
        return self.n_failed == 0

    def message(self) -> str:
        """PyTorch's "Jacobian mismatch" message plus where and by how much it fails."""
        text = (
            f"Jacobian mismatch for output {self.output_index:d} with respect to input "
            f"{self.input_index:d},\n"
        )
        if self.failures:
            w = self.failures[0]
            text += (
                f"worst element: {w.where()}: numerical {w.numerical:.10g}, analytical "
                f"{w.analytical:.10g}, difference {w.difference:.4g} > allowed {w.allowed:.4g} "
                f"(atol {self.atol:g} + rtol {self.rtol:g} * |numerical|)\n"
                f"{self.n_failed} of {self.n_elements} elements of the Jacobian fail\n"
            )
        return (
            text
            + f"numerical:{_fmt_array(self.numerical)}\nanalytical:{_fmt_array(self.analytical)}\n"
        )


@dataclass
class GradcheckReport:
    """Everything gradcheck compared, one :class:`PairReport` per (output, input) pair."""

    pairs: list[PairReport]
    eps: float
    atol: float
    rtol: float
    nondet_tol: float
    n_outputs: int
    n_inputs: int

    @property
    def ok(self) -> bool:
        return self.reentrant and all(p.ok for p in self.pairs)

    @property
    def reentrant(self) -> bool:
        return not any(p.nondet_max_diff > self.nondet_tol for p in self.pairs)

    def pair(self, output_index: int, input_index: int) -> PairReport:
        for p in self.pairs:
            if (p.output_index, p.input_index) == (output_index, input_index):
                return p
        raise KeyError((output_index, input_index))

    def error_message(self) -> str | None:
        """The message gradcheck raises (first failing check, in PyTorch's order), or None."""
        for i in range(self.n_outputs):
            pairs = [p for p in self.pairs if p.output_index == i]
            if any(p.nondet_max_diff > self.nondet_tol for p in pairs):
                return (
                    "Backward is not reentrant, i.e., running backward with same input and "
                    "grad_output multiple times gives different values, although analytical "
                    f"gradient matches numerical gradient.The tolerance for nondeterminism was "
                    f"{self.nondet_tol}." + FAILED_NONDET_MSG
                )
            for p in pairs:
                if not p.ok:
                    return p.message()
        return None


def _fmt_index(idx: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(i) for i in idx) + "]" if idx else ""


def _fmt_array(a: np.ndarray) -> str:
    return np.array2string(a, threshold=100, precision=6, max_line_width=120, prefix=" ")


def _as_tuple(x: Any) -> tuple[Any, ...]:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _diff_outputs(out: Any) -> list[Tensor]:
    return [o for o in _as_tuple(out) if isinstance(o, Tensor) and o.requires_grad]


def _check_inputs(inputs: tuple[Any, ...]) -> list[int]:
    """Positions of the inputs that require grad; PyTorch's warning and errors."""
    diff = []
    for idx, inp in enumerate(inputs):
        if isinstance(inp, Tensor) and inp.requires_grad:
            if inp._data.dtype != np.float64:
                warnings.warn(
                    f"Input #{idx} requires gradient and is not a double precision floating point "
                    "or complex. This check will likely fail if all the inputs are not of double "
                    "precision floating point or complex. ",
                    stacklevel=3,
                )
            arr = inp._data
            if not all(st > 0 or sz <= 1 for st, sz in zip(arr.strides, arr.shape)):
                raise RuntimeError(
                    f"The {idx}th input has a dimension with stride 0. gradcheck only supports "
                    "inputs that are non-overlapping to be able to compute the numerical gradients "
                    "correctly. You should call .contiguous on the input before passing it to "
                    "gradcheck."
                )
            diff.append(idx)
    if not diff:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, but none of them "
            "have requires_grad=True."
        )
    return diff


def _eval(func: Callable, inputs: tuple[Any, ...], ref: list[Any], eps: float) -> list[np.ndarray]:
    """Run ``func`` and copy out its float outputs (checked against the unperturbed ones)."""
    outs = _as_tuple(func(*inputs))
    arrays = []
    for o, r in zip(outs, ref):
        if not (isinstance(o, Tensor) and o._data.dtype.kind == "f"):
            continue
        if o._data.shape != r._data.shape:
            raise AssertionError(
                "Expected `func` to return outputs with the same shape when inputs are perturbed "
                f"by {eps}, but got: shapes {o.shape} and {r.shape}."
            )
        if o._data.dtype != r._data.dtype:
            raise AssertionError(
                "Expected `func` to return outputs with the same dtype when inputs are perturbed "
                f"by {eps}, but got: dtypes {o.dtype} and {r.dtype}."
            )
        arrays.append(np.array(to_numpy(o._data)))
    return arrays


def _numerical_jvp(
    func: Callable, inputs: tuple[Any, ...], ref: list[Any], arr: Any, delta: Any, eps: float
) -> list[np.ndarray]:
    """Central difference of every float output when ``arr`` (an input's data) moves by ``delta``."""
    orig = arr.copy()
    arr[...] = orig - delta
    outa = _eval(func, inputs, ref, eps)
    arr[...] = orig + delta
    outb = _eval(func, inputs, ref, eps)
    arr[...] = orig
    return [((b - a) / (2 * eps)).reshape(-1) for a, b in zip(outa, outb)]


def _numerical_jacobian(
    func: Callable, inputs: tuple[Any, ...], ref: list[Any], arg: int, eps: float
) -> list[np.ndarray]:
    """One (input numel, output numel) float64 Jacobian per float output, for input ``arg``."""
    arr = inputs[arg]._data
    float_outs = [o for o in ref if isinstance(o, Tensor) and o._data.dtype.kind == "f"]
    jac = [np.zeros((arr.size, o._data.size)) for o in float_outs]
    for k, idx in enumerate(np.ndindex(arr.shape)):
        orig = arr[idx].copy()
        arr[idx] = orig - eps
        outa = _eval(func, inputs, ref, eps)
        arr[idx] = orig + eps
        outb = _eval(func, inputs, ref, eps)
        arr[idx] = orig
        for j, (a, b) in enumerate(zip(outa, outb)):
            jac[j][k] = ((b - a) / (2 * eps)).reshape(-1)
    return jac


def _vjp(output: Tensor, diff_inputs: list[Tensor], v: Any) -> list[np.ndarray | None]:
    grads = _autograd_grad(output, diff_inputs, _make(v), retain_graph=True, allow_unused=True)
    return [None if g is None else np.array(to_numpy(g._data), dtype=np.float64) for g in grads]


def _analytical_jacobian(output: Tensor, diff_inputs: list[Tensor]) -> list[np.ndarray]:
    """Row by row: the vector-Jacobian product with each basis vector of the output."""
    jac = [np.zeros((t._data.size, output._data.size)) for t in diff_inputs]
    base = array_module(output._data).zeros_like(output._data)
    flat = base.reshape(-1)
    for r in range(output._data.size):
        flat[...] = 0
        flat[r] = 1
        for j, g in enumerate(_vjp(output, diff_inputs, base.copy())):
            if g is not None:
                jac[j][:, r] = g.reshape(-1)
    return jac


def _compare(
    out_idx: int,
    in_idx: int,
    arg: int,
    out: Tensor,
    inp: Tensor,
    n: np.ndarray,
    a: np.ndarray,
    atol: float,
    rtol: float,
    max_failures: int | None,
) -> PairReport:
    diff = np.abs(a - n)
    allowed = atol + rtol * np.abs(n)
    failing = ~(diff <= allowed)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(diff == 0, 0.0, diff / np.abs(n))
    rows, cols = np.nonzero(failing)
    order = np.argsort(-np.nan_to_num(diff - allowed, nan=np.inf)[rows, cols], kind="stable")
    if max_failures is not None:
        order = order[:max_failures]
    failures = [
        Mismatch(
            out_idx,
            tuple(int(i) for i in np.unravel_index(cols[k], out.shape)),
            in_idx,
            tuple(int(i) for i in np.unravel_index(rows[k], inp.shape)),
            float(n[rows[k], cols[k]]),
            float(a[rows[k], cols[k]]),
            float(diff[rows[k], cols[k]]),
            float(allowed[rows[k], cols[k]]),
        )
        for k in order
    ]
    return PairReport(
        out_idx,
        in_idx,
        arg,
        tuple(out.shape),
        tuple(inp.shape),
        n,
        a,
        atol,
        rtol,
        float(diff.max()) if diff.size else 0.0,
        float(rel.max()) if rel.size else 0.0,
        int(diff.size),
        int(failing.sum()),
        failures,
    )


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
    inputs = _as_tuple(inputs)
    args = _check_inputs(inputs)
    func_out = func(*inputs)
    ref = list(_as_tuple(func_out))
    outputs = _diff_outputs(func_out)
    diff_inputs = [inputs[i] for i in args]
    numerical = [_numerical_jacobian(func, inputs, ref, arg, eps) for arg in args]
    float_outs = [o for o in ref if isinstance(o, Tensor) and o._data.dtype.kind == "f"]
    if not outputs:
        for j, per_out in enumerate(numerical):
            for n in per_out:
                if n.size and not np.all(np.abs(n) <= nondet_tol):
                    raise GradcheckError(
                        f"Numerical gradient for function expected to be zero (input {j})"
                    )
    keep = [k for k, o in enumerate(float_outs) if o.requires_grad]
    pairs = []
    for i, o in enumerate(outputs):
        first = _analytical_jacobian(o, diff_inputs)
        second = _analytical_jacobian(o, diff_inputs)
        for j, arg in enumerate(args):
            p = _compare(
                i, j, arg, o, inputs[arg], numerical[j][keep[i]], first[j], atol, rtol, max_failures
            )
            p.nondet_max_diff = float(np.abs(first[j] - second[j]).max()) if first[j].size else 0.0
            pairs.append(p)
    return GradcheckReport(pairs, eps, atol, rtol, nondet_tol, len(outputs), len(args))


def _unit_vector(rng: np.random.Generator, t: Tensor) -> Any:
    """A random non-negative unit vector with ``t``'s size, dtype and device (flat)."""
    v = rng.random(t._data.size)
    norm = np.linalg.norm(v)
    v = (v / norm if norm > 0 else v).astype(t._data.dtype)
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
    ref = list(_as_tuple(func_out))
    outputs = _diff_outputs(func_out)
    diff_inputs = [inputs[i] for i in args]
    rng = np.random.default_rng(67280421310721)
    all_u = [_unit_vector(rng, t) for t in diff_inputs]
    all_v = [_unit_vector(rng, o) for o in outputs]
    float_outs = [o for o in ref if isinstance(o, Tensor) and o._data.dtype.kind == "f"]
    keep = [k for k, o in enumerate(float_outs) if o.requires_grad]
    numerical = []  # [input][output] scalars v^T (J u)
    for arg, u in zip(args, all_u):
        arr = inputs[arg]._data
        ju = _numerical_jvp(func, inputs, ref, arr, u.reshape(arr.shape) * eps, eps)
        if not outputs and any(np.any(np.abs(x) > nondet_tol) for x in ju):
            raise GradcheckError("Numerical gradient for function expected to be zero")
        numerical.append([float(to_numpy(v) @ ju[k]) for k, v in zip(keep, all_v)])
    for i, (o, v) in enumerate(zip(outputs, all_v)):
        first = _vjp(o, diff_inputs, v.reshape(o._data.shape))
        second = _vjp(o, diff_inputs, v.reshape(o._data.shape))
        for g1, g2 in zip(first, second):
            if g1 is not None and g2 is not None and g1.size and np.abs(g1 - g2).max() > nondet_tol:
                raise GradcheckError(
                    "Backward is not reentrant, i.e., running backward with same input and "
                    "grad_output multiple times gives different values, although analytical "
                    f"gradient matches numerical gradient.The tolerance for nondeterminism was "
                    f"{nondet_tol}." + FAILED_NONDET_MSG
                )
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
    zeros = [_make(array_module(o._data).zeros_like(o._data)) for o in outputs]
    grads = _autograd_grad(outputs, diff_inputs, zeros, allow_unused=True)
    for g, t in zip(grads, diff_inputs):
        if g is None:
            continue
        if np.any(to_numpy(g._data) != 0):
            raise GradcheckError("backward not multiplied by grad_output")
        if g._data.shape != t._data.shape:
            raise GradcheckError("grad is incorrect size")


def _gradcheck(
    func: Callable,
    inputs: Any,
    eps: float,
    atol: float,
    rtol: float,
    nondet_tol: float,
    fast_mode: bool,
) -> bool:
    inputs = _as_tuple(inputs)
    args = _check_inputs(inputs)
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
    outputs = _diff_outputs(func_out)
    if outputs:
        _check_mul_by_grad_output(outputs, [inputs[i] for i in args])
    return True


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
    if not raise_exception:
        try:
            return _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, fast_mode)
        except GradcheckError:
            return False
    return _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, fast_mode)


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

    tupled = _as_tuple(inputs)
    if grad_outputs is None:
        outs = _diff_outputs(func(*tupled))
        tupled_grads: tuple[Any, ...] = tuple(
            (rand_like(o.detach()) * 2.0 - 1.0).detach().requires_grad_(True) for o in outs
        )
    else:
        tupled_grads = _as_tuple(grad_outputs)
    n_out = len(tupled_grads)
    diff_idx = {i for i, x in enumerate(tupled) if isinstance(x, Tensor) and x.requires_grad}

    def new_func(*all_args: Any) -> tuple[Tensor, ...]:
        in_args = all_args[:-n_out] if n_out else all_args
        outs = _diff_outputs(func(*in_args))
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
