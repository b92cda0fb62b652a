"""``check_function``: every check of a custom Function's backward, as a report to read or draw.

Where :func:`.gradcheck.gradcheck` answers yes or raises at the first failure, this runs the whole
checklist and says where and why:

1. backward returns one gradient per forward argument, with the input's shape and dtype;
2. the Jacobian matches central finite differences (``|a - n| <= atol + rtol * |n|``), failing
   elements located and diagnosed, kinks (left and right slopes differ) told apart from failures;
3. backward is deterministic (two runs differ by at most ``nondet_tol``);
4. with ``order=2``, the second-order gradients (gradgradcheck's function of the inputs and the
   incoming gradients).

Jacobians too large to build (more than ``max_jacobian`` elements, or more than
``max_full_numel`` input or output elements to visit one by one) are never built: ``v^T J`` for
a random unit ``v`` is compared at every input element, or at a random sample of them within
``max_work``, and the report says so. ``fast=True`` compares ``v^T J u`` only (PyTorch's fast
mode), locating a failure with the full Jacobians where they are small enough. An exception, ``sys.exit()`` included, raised by the Function's own code
is a failed check, kept in ``report.errors``; KeyboardInterrupt still stops the check.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..tensor.tensor import Tensor
from .function_check_pairs import fast_pairs, full_pair, vjp_pair
from .function_check_report import (
    FAIL,
    PASS,
    SKIP,
    CheckItem,
    CheckOptions,
    FunctionCheckReport,
    InputInfo,
    PairResult,
)

__all__ = ["CheckOptions", "FunctionCheckReport", "check_function", "validate_inputs"]

KINK_LIMIT = 200  # failing elements examined for kinks per pair
JACOBIAN = "Jacobian matches finite differences"
SHAPES = "backward returns one gradient per input, with the input's shape and dtype"
SECOND = "second-order gradients match (gradgradcheck)"


def check_function(
    fn: Any,
    inputs: Sequence[Any],
    names: Sequence[str] | None = None,
    options: CheckOptions | None = None,
    *,
    max_worst: int = 20,
) -> FunctionCheckReport:
    """Run every check on ``fn`` (an ``autograd.Function`` subclass) at ``inputs``.

    ``inputs`` are forward's arguments after ctx (use float64 tensors; those with
    ``requires_grad=True`` are checked), ``names`` name them in the report (default ``input
    0``...). Keeps at most ``max_worst`` failing elements per pair. Raises ValueError for
    options out of range or when there is nothing to check (see :func:`validate_inputs`);
    a wrong backward is a failed check in the report, never an exception.
    """
    options = options or CheckOptions()
    options.validate()
    inputs = tuple(inputs)
    names = list(names) if names is not None else [f"input {i}" for i in range(len(inputs))]
    if len(names) != len(inputs):
        raise ValueError(f"{len(names)} names for {len(inputs)} inputs")
    validate_inputs(inputs, names)
    return _Checker(fn, inputs, names, options, max_worst).run()


def validate_inputs(inputs: Sequence[Any], names: Sequence[str]) -> None:
    """ValueError unless some input is a float tensor that requires grad and has elements."""
    diff = [(n, x) for n, x in zip(names, inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not diff:
        raise ValueError("no input requires grad: there is nothing to check")
    if all(x.numel() == 0 for _, x in diff):
        shapes = ", ".join(f"{n} {tuple(x.shape)}" for n, x in diff)
        raise ValueError(f"every input that requires grad is empty ({shapes}): nothing to check")


def _as_tuple(out: Any) -> tuple[Any, ...]:
    return out if isinstance(out, tuple) else (out,)


def _describe_error(stage: str, err: BaseException) -> str:
    if isinstance(err, SystemExit):
        return f"{stage} called sys.exit({err.code!r})"
    return f"{stage} raised {type(err).__name__}: {err}"


class _Checker:
    """One run of the checklist; fills a :class:`FunctionCheckReport`."""

    def __init__(
        self,
        fn: Any,
        inputs: tuple[Any, ...],
        names: list[str],
        options: CheckOptions,
        max_worst: int,
    ) -> None:
        self.fn, self.inputs, self.names, self.o = fn, inputs, names, options
        self.max_worst = max_worst
        self.none_args: set[int] = set()
        self.report = FunctionCheckReport(
            getattr(fn, "__qualname__", str(fn)), _input_infos(inputs, names), options
        )

    # ------------------------------------------------------------------ helpers
    def add(self, name: str, status: str, detail: str = "") -> None:
        self.report.checks.append(CheckItem(name, status, detail))

    def fail(self, name: str, stage: str, err: BaseException) -> None:
        self.report.errors.append(err)
        self.add(name, FAIL, _describe_error(stage, err))

    def func(self, *args: Any) -> Any:
        return self.fn.apply(*args)

    def diff_names(self) -> list[str]:
        return [n for n, x in zip(self.names, self.inputs) if _requires_grad(x)]

    @staticmethod
    def output_names(n: int) -> list[str]:
        return ["y"] if n == 1 else [f"y{i}" for i in range(n)]

    def plan(self, n_in: int, n_out: int) -> tuple[str, str]:
        """How an ``n_in`` x ``n_out`` Jacobian is checked, and why not in full when it is not:
        ``full`` (every element) or ``vjp`` (``v^T J`` for a random ``v`` at every input element,
        or at a random sample of them when that is more than ``max_full_numel`` elements or
        ``max_work``: 2 forward calls per element, memory ``n_in + n_out``)."""
        o = self.o
        size = f"the Jacobian has {n_in:,} x {n_out:,} = {n_in * n_out:,} elements"
        if n_in * n_out > o.max_jacobian:
            why = f"{size}, more than the {o.max_jacobian:,} a full check builds"
        elif max(n_in, n_out) > o.max_full_numel:
            why = f"{size}, too many rows or columns to visit one by one ({o.max_full_numel:,})"
        else:
            return "full", ""
        return "vjp", why

    def sample_size(self, n_in: int, n_out: int, n_args: int) -> int:
        """How many elements of each input the ``vjp`` mode visits."""
        o = self.o
        total = max(1, min(o.max_full_numel, o.max_work // max(1, 2 * (n_in + n_out))))
        return max(1, total // max(1, n_args))

    # ------------------------------------------------------------------ the checklist
    def run(self) -> FunctionCheckReport:
        from .grad_mode import enable_grad
        from .gradcheck_diagnosis import check_backward_outputs

        o = self.o
        try:
            with enable_grad():
                outs = _as_tuple(self.func(*self.inputs))
        except (Exception, SystemExit) as err:
            self.fail(SHAPES, "forward", err)
            return self.report
        try:
            issues, _ = check_backward_outputs(self.fn, self.inputs, self.names)
        except (Exception, SystemExit) as err:
            self.fail(SHAPES, "backward", err)
            return self.report
        fatal = [i for i in issues if i.fatal]
        self.none_args = {i.arg_index for i in issues if i.kind == "missing"}
        bad = fatal or self.none_args
        self.add(SHAPES, FAIL if bad else PASS, "; ".join(i.message for i in issues))
        diff_outs = [y for y in outs if _requires_grad(y)]
        n_in = sum(x.numel() for x in self.inputs if _requires_grad(x))
        n_out = sum(y.numel() for y in diff_outs)
        mode, why = self.plan(n_in, n_out)
        jac = JACOBIAN + _MODE_NAME["fast" if o.fast else mode]
        det = f"backward is deterministic (nondet_tol {o.nondet_tol:g})"
        if fatal:
            self.add(jac, SKIP, "backward's result has the wrong structure")
            self.add(det, SKIP, "")
        else:
            try:
                self.first_order(diff_outs, jac, det, mode, why)
            except (Exception, SystemExit) as err:
                self.fail(jac, "forward/backward", err)
        if o.order < 2:
            self.add(SECOND, SKIP, "run with --order 2")
        elif fatal:
            self.add(SECOND, SKIP, "first order failed")
        else:
            try:
                self.second_order()
            except (Exception, SystemExit) as err:
                self.fail(SECOND, "forward/backward", err)
        return self.report

    # ------------------------------------------------------------------ first order
    def first_order(self, outs: list[Tensor], jac: str, det: str, mode: str, why: str) -> None:
        """``outs``: forward's outputs that require grad (``run`` computed them)."""
        from .gradcheck_diagnosis import fast_projection

        o = self.o
        in_names = self.diff_names()
        note = ""
        if mode == "vjp" and not o.fast:
            pairs = self._vjp_pairs(1, self.func, self.inputs, self.output_names(len(outs)))
            self._vjp_verdict(jac, pairs, why)
            self._det(det, max((p.nondet_max_diff for p in pairs), default=0.0))
            return
        if o.fast:
            proj = fast_projection(
                self.func, self.inputs, eps=o.eps, atol=o.atol, rtol=o.rtol, seed=o.seed
            )
            nondet = max((p.nondet_diff for p in proj), default=0.0)
            out_names = self.output_names(len(outs))
            fast = fast_pairs(1, proj, out_names, in_names, self.inputs, outs)
            if all(p.ok for p in proj) or mode == "vjp":
                self.report.pairs.extend(fast)
                self._fast_verdict(jac, fast, why)
                self._det(det, nondet)
                return
            note = "the fast check failed; full Jacobians computed to locate the failure"
        report = self._gradcheck_report(self.func, self.inputs)
        outs = self.output_names(report.n_outputs)
        pairs = [self._pair(1, p, outs, in_names, self.func, self.inputs) for p in report.pairs]
        self.report.pairs.extend(pairs)
        detail = _failed_detail(pairs)
        kinks = sum(p.n_kinks for p in pairs)
        if kinks:
            detail = (detail + "; " if detail else "") + f"{kinks} kink(s), not failures"
        if note:
            detail = note + ("; " + detail if detail else "")
        self.add(jac, FAIL if any(not p.ok for p in pairs) else PASS, detail)
        self._det(det, max((p.nondet_max_diff for p in report.pairs), default=0.0))

    def _fast_verdict(self, name: str, pairs: list[PairResult], why: str) -> None:
        failed = [p for p in pairs if not p.ok]
        if failed:
            detail = "; ".join(
                f"{p.output} w.r.t. {p.input}: v^T J u numerical {p.numerical:.6g}, "
                f"analytical {p.analytical:.6g}"
                for p in failed
            )
        else:
            detail = "v^T J u matches for random unit u, v"
        if why:
            located = "; failing elements not located" if failed else ""
            detail += f" (fast mode: {why}{located})"
        self.add(name, FAIL if failed else PASS, detail)

    def _vjp_verdict(self, name: str, pairs: list[PairResult], why: str) -> None:
        sampled = any(p.n_elements < (p.input_numel or 0) for p in pairs)
        if sampled:
            name = name.replace(_MODE_NAME["vjp"], " (v^T J at sampled input elements)")
            seen: dict[str, PairResult] = {p.input: p for p in pairs}
            where = ", ".join(
                f"{p.n_elements:,} of {p.input_numel:,} of {i}" for i, p in seen.items()
            )
            ok = f"v^T J matches at {where}, drawn at random, for a random unit v"
        else:
            ok = "v^T J matches at every input element for a random unit v"
        detail = _failed_detail(pairs) or ok
        self.add(name, FAIL if any(not p.ok for p in pairs) else PASS, f"{detail} ({why})")

    def _vjp_pairs(
        self, order: int, func: Callable[..., Any], inputs: tuple[Any, ...], out_names: list[str]
    ) -> list[PairResult]:
        """Per (output, input): ``v^T J`` at every input element, by central differences and by
        one backward (run twice, for determinism); failures located at input elements."""
        from .grad_mode import enable_grad
        from .jacobians import float_outputs, numerical_vjp, random_unit, vjp

        o = self.o
        rng = np.random.default_rng(o.seed)
        with enable_grad():
            ref = list(_as_tuple(func(*inputs)))
        floats = float_outputs(ref)
        vs = [random_unit(rng, y.numel()) if y.requires_grad else None for y in floats]
        args = [i for i, x in enumerate(inputs) if _requires_grad(x)]
        in_names = [n for n, x in zip(self.names, inputs) if _requires_grad(x)]
        in_names += [f"grad_{n}" for n in self.output_names(len(args) - len(in_names))]
        diff_inputs = [inputs[a] for a in args]
        n_in = sum(x.numel() for x in diff_inputs)
        n_out = sum(y.numel() for y, v in zip(floats, vs) if v is not None)
        k_max = self.sample_size(n_in, n_out, len(args))
        samples = [
            None if x.numel() <= k_max else np.sort(rng.choice(x.numel(), k_max, replace=False))
            for x in diff_inputs
        ]
        numerical = [
            numerical_vjp(func, inputs, ref, a, o.eps, vs, e) for a, e in zip(args, samples)
        ]
        pairs = []
        k = 0
        for pos, (y, v) in enumerate(zip(floats, vs)):
            if v is None:
                continue
            first = vjp(y, diff_inputs, v.reshape(y._data.shape))
            second = vjp(y, diff_inputs, v.reshape(y._data.shape))
            for j, x in enumerate(diff_inputs):
                n = numerical[j][pos]
                a = np.zeros_like(n) if first[j] is None else first[j].reshape(-1)
                if first[j] is not None and samples[j] is not None:
                    a = a[samples[j]]
                nondet = 0.0
                if first[j] is not None and second[j] is not None and a.size:
                    nondet = float(np.abs(first[j] - second[j]).max())
                pairs.append(
                    vjp_pair(
                        order,
                        out_names[k],
                        in_names[j],
                        y,
                        x,
                        n,
                        a,
                        float(v.sum()),
                        o.atol,
                        o.rtol,
                        self.max_worst,
                        samples[j],
                    )
                )
                pairs[-1].nondet_max_diff = nondet
            k += 1
        self.report.pairs.extend(pairs)
        return pairs

    def _det(self, name: str, diff: float) -> None:
        ok = diff <= self.o.nondet_tol
        self.add(name, PASS if ok else FAIL, f"max difference between two runs {diff:.3g}")

    def _gradcheck_report(self, func: Callable[..., Any], inputs: tuple[Any, ...]) -> Any:
        from .gradcheck import gradcheck_report

        o = self.o
        return gradcheck_report(
            func,
            inputs,
            eps=o.eps,
            atol=o.atol,
            rtol=o.rtol,
            nondet_tol=o.nondet_tol,
            max_failures=KINK_LIMIT + 50,
        )

    def _pair(
        self,
        order: int,
        p: Any,
        out_names: list[str],
        in_names: list[str],
        func: Callable[..., Any],
        inputs: tuple[Any, ...],
    ) -> PairResult:
        """A full-mode :class:`PairResult` from a gradcheck PairReport: kinks split off,
        the failure diagnosed."""
        from .gradcheck_diagnosis import diagnose, find_kinks

        oname, iname = out_names[p.output_index], in_names[p.input_index]
        kinks, failures = [], []
        if p.failures:
            if order == 1:
                kinks, failures = find_kinks(func, inputs, p, self.o.eps, limit=KINK_LIMIT)
            else:
                failures = list(p.failures)
        n_failed = p.n_failed - len(kinks)
        diagnosis = None
        if n_failed:
            missing = order == 1 and p.arg_index in self.none_args
            diagnosis = diagnose(p, iname, oname, grad_was_none=missing)
        return full_pair(order, p, oname, iname, kinks, failures, diagnosis, self.max_worst)

    # ------------------------------------------------------------------ second order
    def second_order(self) -> None:
        """gradcheck of ``(inputs, grad_outputs) -> grad(outputs, inputs, grad_outputs)``."""
        from .engine import grad as autograd_grad

        o = self.o
        with_grad = [i for i, x in enumerate(self.inputs) if _requires_grad(x)]
        outs = _as_tuple(self.func(*self.inputs))
        diff_outs = [y for y in outs if _requires_grad(y)]
        rng = np.random.default_rng(o.seed + 1)
        gos = tuple(_uniform_like(y, rng) for y in diff_outs)
        n_in = len(self.inputs)

        def f2(*all_args: Any) -> tuple[Any, ...]:
            ins = all_args[:n_in]
            ys = [y for y in _as_tuple(self.func(*ins)) if _requires_grad(y)]
            gs = autograd_grad(
                ys,
                [ins[i] for i in with_grad],
                list(all_args[n_in:]),
                create_graph=True,
                allow_unused=True,
            )
            return tuple(g for g in gs if g is not None)

        diff_in = self.diff_names()
        go_names = [f"grad_{n}" for n in self.output_names(len(diff_outs))]
        all_inputs = self.inputs + gos
        grads = autograd_grad(
            diff_outs, [self.inputs[i] for i in with_grad], list(gos), allow_unused=True
        )
        f2_outs = [f"grad_{n}" for n, g in zip(diff_in, grads) if g is not None]
        n_rows = sum(x.numel() for x in all_inputs if _requires_grad(x))
        n_cols = sum(g.numel() for g in grads if g is not None)
        mode, why = self.plan(n_rows, n_cols)
        if mode == "vjp":
            pairs = self._vjp_pairs(2, f2, all_inputs, f2_outs)
            self._vjp_verdict(SECOND + _MODE_NAME["vjp"], pairs, why)
            return
        report = self._gradcheck_report(f2, all_inputs)
        f2_outs = f2_outs[: report.n_outputs]
        pairs = [
            self._pair(2, p, f2_outs, diff_in + go_names, f2, all_inputs) for p in report.pairs
        ]
        self.report.pairs.extend(pairs)
        self.add(SECOND, FAIL if any(not p.ok for p in pairs) else PASS, _failed_detail(pairs))


_MODE_NAME = {"full": "", "vjp": " (v^T J at every input element)", "fast": " (fast mode)"}


def _requires_grad(x: Any) -> bool:
    return isinstance(x, Tensor) and x.requires_grad


def _uniform_like(y: Tensor, rng: np.random.Generator) -> Tensor:
    """A leaf requiring grad, uniform in [-1, 1), with ``y``'s shape, dtype and device."""
    from ..tensor.factory import tensor

    values = rng.uniform(-1.0, 1.0, tuple(y.shape))
    return tensor(values, dtype=y.dtype, device=y.device, requires_grad=True)


def _failed_detail(pairs: list[PairResult]) -> str:
    return "; ".join(
        f"{p.output} w.r.t. {p.input}: {p.n_failed} of {p.n_elements} elements"
        for p in pairs
        if not p.ok
    )


def _input_infos(inputs: tuple[Any, ...], names: list[str]) -> list[InputInfo]:
    infos = []
    for n, x in zip(names, inputs):
        if isinstance(x, Tensor):
            infos.append(InputInfo(n, tuple(x.shape), x.dtype.name, bool(x.requires_grad)))
        else:
            infos.append(InputInfo(n, value=repr(x)))
    return infos
