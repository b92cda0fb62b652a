"""What gradcheck found: :class:`GradcheckReport` with one :class:`PairReport` per (output,
input) Jacobian block and a :class:`Mismatch` per failing element, the messages gradcheck raises
(PyTorch's wording) and :class:`GradcheckError`.

Numbering, as in PyTorch's messages: "output i" counts the outputs that require grad, "input j"
counts the inputs that require grad (``PairReport.arg_index`` gives the position in ``inputs``).
Jacobians have shape ``(input numel, output numel)``, PyTorch's layout.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..tensor.tensor import Tensor

__all__ = [
    "FAILED_NONDET_MSG",
    "FAST_FAIL_SLOW_OK_MSG",
    "GradcheckError",
    "GradcheckReport",
    "Mismatch",
    "PairReport",
    "compare_jacobians",
    "not_reentrant_message",
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
                return not_reentrant_message(self.nondet_tol)
            for p in pairs:
                if not p.ok:
                    return p.message()
        return None


def _fmt_index(idx: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(i) for i in idx) + "]" if idx else ""


def _fmt_array(a: np.ndarray) -> str:
    return np.array2string(a, threshold=100, precision=6, max_line_width=120, prefix=" ")


def not_reentrant_message(nondet_tol: float) -> str:
    """PyTorch's message for a backward that gives different results when run twice."""
    return (
        "Backward is not reentrant, i.e., running backward with same input and "
        "grad_output multiple times gives different values, although analytical "
        f"gradient matches numerical gradient.The tolerance for nondeterminism was "
        f"{nondet_tol}." + FAILED_NONDET_MSG
    )


def compare_jacobians(
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
    """The :class:`PairReport` of numerical ``n`` against analytical ``a`` for one block:
    errors, failure count and at most ``max_failures`` failing elements, worst first."""
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
