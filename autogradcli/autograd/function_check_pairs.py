"""The :class:`PairResult` of one (output, input) pair in each mode of
:func:`~.function_check.check_function`: ``full`` (from gradcheck's PairReport, kinks split off),
``vjp`` (``v^T J`` at every input element) and ``fast`` (``v^T J u``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..tensor.tensor import Tensor
from .function_check_report import ElementResult, PairResult

__all__ = ["fast_pairs", "full_pair", "vjp_pair"]


def _fmt_index(idx: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(i) for i in idx) + "]" if idx else ""


def full_pair(
    order: int,
    p: Any,
    oname: str,
    iname: str,
    kinks: list[Any],
    failures: list[Any],
    diagnosis: str | None,
    max_worst: int,
) -> PairResult:
    """From a gradcheck PairReport ``p``, its ``kinks`` and remaining ``failures``."""
    n_failed = p.n_failed - len(kinks)

    def element(m: Any, left: float | None = None, right: float | None = None) -> Any:
        where = f"{oname}{_fmt_index(m.output_element)} w.r.t. {iname}{_fmt_index(m.input_element)}"
        return ElementResult(
            m.output_element,
            m.input_element,
            where,
            m.numerical,
            m.analytical,
            m.difference,
            m.allowed,
            left,
            right,
        )

    return PairResult(
        order=order,
        output=oname,
        input=iname,
        mode="full",
        output_shape=tuple(p.output_shape),
        input_shape=tuple(p.input_shape),
        ok=n_failed == 0,
        max_abs_error=p.max_abs_error,
        max_rel_error=p.max_rel_error,
        n_elements=p.n_elements,
        n_failed=n_failed,
        n_kinks=len(kinks),
        nondet_max_diff=p.nondet_max_diff,
        diagnosis=diagnosis,
        worst=[element(m) for m in failures[:max_worst]],
        kinks=[element(k.mismatch, k.left, k.right) for k in kinks[:max_worst]],
    )


def vjp_pair(
    order: int,
    oname: str,
    iname: str,
    y: Tensor,
    x: Tensor,
    n: np.ndarray,
    a: np.ndarray,
    v_sum: float,
    atol: float,
    rtol: float,
    max_worst: int,
    elements: np.ndarray | None = None,
) -> PairResult:
    """``v^T J`` at every input element: numerical ``n`` against analytical ``a`` (flat), the
    tolerance ``atol * sum(v) + rtol * |n|`` (``v`` non-negative), failures worst first;
    ``elements``: the flat input elements ``n`` and ``a`` are at (all when None)."""
    diff = np.abs(a - n)
    allowed = atol * v_sum + rtol * np.abs(n)
    failing = np.flatnonzero(~(diff <= allowed))
    order_ = np.argsort(-np.nan_to_num(diff - allowed, nan=np.inf)[failing], kind="stable")
    worst = []
    for r in failing[order_][:max_worst]:
        flat = r if elements is None else elements[r]
        idx = tuple(int(i) for i in np.unravel_index(flat, tuple(x.shape)))
        worst.append(
            ElementResult(
                (),
                idx,
                f"v^T {oname} w.r.t. {iname}{_fmt_index(idx)}",
                float(n[r]),
                float(a[r]),
                float(diff[r]),
                float(allowed[r]),
            )
        )
    return PairResult(
        order=order,
        output=oname,
        input=iname,
        mode="vjp",
        output_shape=tuple(y.shape),
        input_shape=tuple(x.shape),
        ok=failing.size == 0,
        max_abs_error=float(diff.max()) if diff.size else 0.0,
        max_rel_error=None,
        n_elements=int(diff.size),
        n_failed=int(failing.size),
        worst=worst,
        input_numel=x.numel(),
    )


def fast_pairs(
    order: int,
    proj: list[Any],
    out_names: list[str],
    in_names: list[str],
    inputs: tuple[Any, ...],
    outputs: list[Any],
) -> list[PairResult]:
    """One result per fast-mode Projection in ``proj``."""
    pairs = []
    for p in proj:
        x, y = inputs[p.arg_index], outputs[p.output_index]
        pairs.append(
            PairResult(
                order=order,
                output=out_names[p.output_index],
                input=in_names[p.input_index],
                mode="fast",
                output_shape=tuple(y.shape),
                input_shape=tuple(x.shape),
                ok=p.ok,
                max_abs_error=abs(p.analytical - p.numerical),
                max_rel_error=None,
                n_elements=x.numel() * y.numel(),
                n_failed=0 if p.ok else None,
                nondet_max_diff=p.nondet_diff,
                numerical=p.numerical,
                analytical=p.analytical,
                allowed=p.allowed,
            )
        )
    return pairs
