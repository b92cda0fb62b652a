"""``agrad gradcheck``: a custom autograd Function's backward against finite differences.

The ``example_inputs`` convention: a Function may declare the inputs it is checked on as a class
attribute ``example_inputs`` holding a tuple, or a staticmethod/classmethod ``example_inputs()``
returning one, in forward's argument order (after ctx). Tensors are cast to float64; if none of
them has ``requires_grad=True``, every floating-point tensor is checked, else only those that
have it. Other values (numbers, strings) are passed as they are.
"""

from __future__ import annotations

import inspect
import json
import sys
import traceback
from dataclasses import dataclass
from typing import Any

from .console import console
from .errors import EXIT_FAILED, EXIT_OK, UserError

DOMAINS = ("any", "positive", "nonzero", "unit")
CONFIG_SUFFIXES = (".yaml", ".yml", ".json")
KINK_LIMIT = 200  # failing elements examined for kinks per pair


@dataclass
class Settings:
    eps: float = 1e-6
    atol: float = 1e-5
    rtol: float = 1e-3
    nondet_tol: float = 0.0
    order: int = 1
    fast: bool = False
    seed: int = 0
    show: int = 5


# ----------------------------------------------------------------------------- targets
def _is_config(target: str) -> bool:
    return target.lower().endswith(CONFIG_SUFFIXES)


def resolve_function(target: str) -> Any:
    """The Function class named by ``module:Name`` / ``file.py:Name`` (UserError otherwise)."""
    import os

    from ..autograd.function import Function
    from ..config.imports import ImportPathError, resolve_import

    if ":" not in target:
        raise UserError(
            f"{target!r} is not a target: expected 'package.module:Name', "
            "'path/to/file.py:Name' or a config file (.yaml)"
        )
    try:
        obj = resolve_import(target, os.getcwd())
    except ImportPathError as err:
        raise UserError(str(err)) from err
    if not (inspect.isclass(obj) and issubclass(obj, Function)):
        what = f"the class {obj.__name__}" if inspect.isclass(obj) else type(obj).__name__
        raise UserError(f"{target} is {what}, not an autograd.Function subclass")
    return obj


def forward_names(fn: Any) -> tuple[list[str], dict[str, Any]]:
    """forward's parameter names after ctx, and their defaults."""
    sig = inspect.signature(fn.forward)
    params = list(sig.parameters.values())[1:]
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params):
        return [p.name for p in params if p.kind is not inspect.Parameter.VAR_POSITIONAL], {}
    names = [
        p.name
        for p in params
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    defaults = {p.name: p.default for p in params if p.default is not inspect.Parameter.empty}
    return names, defaults


def _example_inputs(fn: Any) -> tuple[Any, ...] | None:
    ex = inspect.getattr_static(fn, "example_inputs", None)
    if ex is None:
        return None
    value = fn.example_inputs
    if callable(value):
        value = value()
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def _split(spec: str, option: str) -> tuple[str, str]:
    name, sep, value = spec.partition("=")
    if not sep or not name.strip():
        raise UserError(f"{option} {spec!r}: expected NAME=VALUE")
    return name.strip(), value.strip()


def _check_name(name: str, names: list[str], option: str) -> None:
    if name not in names:
        from ..config.errors import did_you_mean

        hint = did_you_mean(name, names) or f" (forward takes: {', '.join(names) or 'nothing'})"
        raise UserError(f"{option} {name}: forward has no parameter {name!r}{hint}")


def parse_shape(text: str, spec: str) -> tuple[int, ...]:
    t = text.strip().strip("()[]").strip()
    if t in ("", "scalar"):
        return ()
    try:
        dims = tuple(int(d) for d in t.replace("x", ",").split(",") if d.strip() != "")
    except ValueError:
        raise UserError(
            f"--input {spec!r}: a shape is comma-separated sizes, e.g. x=4,3 (x=() for a scalar)"
        ) from None
    if any(d < 0 for d in dims):
        raise UserError(f"--input {spec!r}: sizes must be >= 0")
    return dims


def _draw(shape: tuple[int, ...], domain: str, rng: Any) -> Any:
    import numpy as np

    if domain == "positive":
        return rng.uniform(0.5, 2.0, shape)
    if domain == "nonzero":
        return rng.uniform(0.5, 2.0, shape) * np.where(rng.random(shape) < 0.5, -1.0, 1.0)
    if domain == "unit":
        return rng.uniform(-0.9, 0.9, shape)
    return rng.standard_normal(shape)


def build_inputs(
    fn: Any, input_specs: list[str], arg_specs: list[str], domain_specs: list[str], seed: int
) -> tuple[tuple[Any, ...], list[str]]:
    """The checked inputs (float64 tensors, requiring grad) and their names."""
    import numpy as np
    import yaml

    from ..tensor.factory import tensor
    from ..tensor.tensor import Tensor

    names, defaults = forward_names(fn)
    domains: dict[str, str] = {}
    for spec in domain_specs:
        name, value = _split(spec, "--domain")
        _check_name(name, names, "--domain")
        if value not in DOMAINS:
            raise UserError(f"--domain {spec!r}: the domain is one of {', '.join(DOMAINS)}")
        domains[name] = value
    values: dict[str, Any] = {}
    example = _example_inputs(fn)
    if example is not None:
        if len(example) > len(names) and len(names) == len(forward_names(fn)[0]):
            names = names + [f"arg{i}" for i in range(len(names), len(example))]
        explicit = any(isinstance(v, Tensor) and v.requires_grad for v in example)
        for name, v in zip(names, example):
            if isinstance(v, Tensor):
                if v.dtype.is_floating_point:
                    grad = v.requires_grad or not explicit
                    v = v.detach().double().clone().requires_grad_(grad)
                else:
                    v = v.detach().clone()
            values[name] = v
    rng = np.random.default_rng(seed)
    for spec in input_specs:
        name, value = _split(spec, "--input")
        _check_name(name, names, "--input")
        shape = parse_shape(value, spec)
        arr = _draw(shape, domains.get(name, "any"), rng)
        values[name] = tensor(np.asarray(arr, dtype=np.float64)).requires_grad_(True)
    for spec in arg_specs:
        name, value = _split(spec, "--arg")
        _check_name(name, names, "--arg")
        try:
            values[name] = yaml.safe_load(value) if value else None
        except yaml.YAMLError:
            values[name] = value
    for name, dom in domains.items():  # re-draw example tensors in the asked domain
        v = values.get(name)
        if isinstance(v, Tensor) and name not in {_split(s, "")[0] for s in input_specs}:
            arr = _draw(tuple(v.shape), dom, rng)
            values[name] = tensor(np.asarray(arr, dtype=np.float64)).requires_grad_(True)
    missing = [n for n in names if n not in values and n not in defaults]
    if missing:
        hint = " ".join(f"--input {n}=SHAPE" for n in missing)
        why = (
            f"{fn.__name__} declares no example_inputs"
            if example is None
            else "its example_inputs do not cover them"
        )
        raise UserError(
            f"no value for {', '.join(missing)} (forward({', '.join(names)})): give {hint} "
            f"(or --arg NAME=VALUE for non-tensors); {why}"
        )
    inputs = []
    used = []
    for n in names:
        if n in values:
            inputs.append(values[n])
            used.append(n)
        elif n in defaults:
            inputs.append(defaults[n])
            used.append(n)
    if not any(isinstance(v, Tensor) and v.requires_grad for v in inputs):
        raise UserError("no floating-point tensor input to check: give --input NAME=SHAPE")
    return tuple(inputs), used


# ----------------------------------------------------------------------------- the checks
def _fmt_index(idx: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(i) for i in idx) + "]" if idx else ""


def _num(v: float) -> float | str:
    import math

    return v if math.isfinite(v) else str(v)


class Checker:
    """Runs every check on one Function and collects a JSON-able report."""

    def __init__(self, fn: Any, inputs: tuple[Any, ...], names: list[str], s: Settings):
        self.fn, self.inputs, self.names, self.s = fn, inputs, names, s
        self.checks: list[dict[str, Any]] = []
        self.pairs: list[dict[str, Any]] = []

    def check(self, name: str, status: str, detail: str = "") -> None:
        self.checks.append({"name": name, "status": status, "detail": detail})

    def func(self, *args: Any) -> Any:
        return self.fn.apply(*args)

    def diff_names(self) -> list[str]:
        from ..tensor.tensor import Tensor

        return [
            n for n, x in zip(self.names, self.inputs) if isinstance(x, Tensor) and x.requires_grad
        ]

    def output_names(self, n: int) -> list[str]:
        return ["y"] if n == 1 else [f"y{i}" for i in range(n)]

    def run(self) -> dict[str, Any]:
        from ..autograd.gradcheck_diagnosis import check_backward_outputs

        s = self.s
        name1 = "backward returns one gradient per input, with the input's shape and dtype"
        try:
            issues, _ = check_backward_outputs(self.fn, self.inputs, self.names)
        except Exception as err:
            self.check(name1, "fail", f"forward/backward raised {type(err).__name__}: {err}")
            self._trace(err)
            return self.result()
        fatal = [i for i in issues if i.fatal]
        notes = "; ".join(i.message for i in issues)
        self.none_args = {i.arg_index for i in issues if i.kind == "missing"}
        self.check(name1, "fail" if fatal or self.none_args else "pass", notes)
        jac = "Jacobian matches finite differences" + (" (fast mode)" if s.fast else "")
        det = f"backward is deterministic (nondet_tol {s.nondet_tol:g})"
        if fatal:
            self.check(jac, "skip", "backward's result has the wrong structure")
            self.check(det, "skip", "")
        else:
            try:
                self.first_order(jac, det)
            except Exception as err:
                self.check(jac, "fail", f"{type(err).__name__}: {err}")
                self._trace(err)
        so = "second-order gradients match (gradgradcheck)"
        if s.order < 2:
            self.check(so, "skip", "run with --order 2")
        elif fatal:
            self.check(so, "skip", "first order failed")
        else:
            try:
                self.second_order(so)
            except Exception as err:
                self.check(so, "fail", f"{type(err).__name__}: {err}")
                self._trace(err)
        return self.result()

    def _trace(self, err: BaseException) -> None:
        from .app import _STATE

        if _STATE["debug"]:
            traceback.print_exception(type(err), err, err.__traceback__, file=sys.stderr)

    def result(self) -> dict[str, Any]:
        from ..tensor.tensor import Tensor

        inputs = []
        for n, x in zip(self.names, self.inputs):
            if isinstance(x, Tensor):
                inputs.append(
                    {
                        "name": n,
                        "shape": list(x.shape),
                        "dtype": x.dtype.name,
                        "requires_grad": bool(x.requires_grad),
                    }
                )
            else:
                inputs.append({"name": n, "value": repr(x)})
        ok = all(c["status"] != "fail" for c in self.checks)
        return {
            "function": getattr(self.fn, "__qualname__", str(self.fn)),
            "ok": ok,
            "inputs": inputs,
            "settings": vars(self.s).copy(),
            "checks": self.checks,
            "pairs": self.pairs,
        }

    def _pair_dict(
        self, order: int, p: Any, out_names: list[str], in_names: list[str], func: Any, inputs: Any
    ) -> dict[str, Any]:
        from ..autograd.gradcheck_diagnosis import diagnose, find_kinks

        oname, iname = out_names[p.output_index], in_names[p.input_index]
        kinks, failures = ([], [])
        if p.failures:
            if order == 1:
                kinks, failures = find_kinks(func, inputs, p, self.s.eps, limit=KINK_LIMIT)
            else:
                failures = list(p.failures)
        n_failed = p.n_failed - len(kinks)
        diagnosis = None
        if n_failed:
            diagnosis = diagnose(
                p, iname, oname, grad_was_none=order == 1 and p.arg_index in self.none_args
            )

        def elem(m: Any) -> dict[str, Any]:
            return {
                "output": list(m.output_element),
                "input": list(m.input_element),
                "where": f"{oname}{_fmt_index(m.output_element)} w.r.t. "
                f"{iname}{_fmt_index(m.input_element)}",
                "numerical": _num(m.numerical),
                "analytical": _num(m.analytical),
                "difference": _num(m.difference),
                "allowed": _num(m.allowed),
            }

        return {
            "order": order,
            "output": oname,
            "input": iname,
            "output_shape": list(p.output_shape),
            "input_shape": list(p.input_shape),
            "max_abs_error": _num(p.max_abs_error),
            "max_rel_error": _num(p.max_rel_error),
            "n_elements": p.n_elements,
            "n_failed": n_failed,
            "n_kinks": len(kinks),
            "ok": n_failed == 0,
            "nondet_max_diff": _num(p.nondet_max_diff),
            "diagnosis": diagnosis,
            "worst": [elem(m) for m in failures[: max(self.s.show, 20)]],
            "kinks": [
                {**elem(k.mismatch), "left": _num(k.left), "right": _num(k.right)}
                for k in kinks[:20]
            ],
        }

    def _report(self, func: Any, inputs: Any) -> Any:
        from ..autograd.gradcheck import gradcheck_report

        s = self.s
        return gradcheck_report(
            func,
            inputs,
            eps=s.eps,
            atol=s.atol,
            rtol=s.rtol,
            nondet_tol=s.nondet_tol,
            max_failures=KINK_LIMIT + 50,
        )

    def first_order(self, jac: str, det: str) -> None:
        from ..autograd.gradcheck_diagnosis import fast_projection

        s = self.s
        in_names = self.diff_names()
        note = ""
        if s.fast:
            proj = fast_projection(
                self.func, self.inputs, eps=s.eps, atol=s.atol, rtol=s.rtol, seed=s.seed
            )
            nondet = max((p.nondet_diff for p in proj), default=0.0)
            if all(p.ok for p in proj):
                n_out = 1 + max((p.output_index for p in proj), default=0)
                outs = self.output_names(n_out)
                for p in proj:
                    self.pairs.append(
                        {
                            "order": 1,
                            "output": outs[p.output_index],
                            "input": in_names[p.input_index],
                            "mode": "fast",
                            "numerical": p.numerical,
                            "analytical": p.analytical,
                            "max_abs_error": abs(p.analytical - p.numerical),
                            "allowed": p.allowed,
                            "ok": True,
                            "n_failed": 0,
                            "n_kinks": 0,
                        }
                    )
                self.check(jac, "pass", "v^T J u matches for random unit u, v")
                self._det(det, nondet)
                return
            note = "the fast check failed; full Jacobians computed to locate the failure"
        report = self._report(self.func, self.inputs)
        outs = self.output_names(report.n_outputs)
        pairs = [
            self._pair_dict(1, p, outs, in_names, self.func, self.inputs) for p in report.pairs
        ]
        self.pairs.extend(pairs)
        failed = [p for p in pairs if not p["ok"]]
        kinks = sum(p["n_kinks"] for p in pairs)
        detail = "; ".join(
            f"{p['output']} w.r.t. {p['input']}: {p['n_failed']} of {p['n_elements']} elements"
            for p in failed
        )
        if kinks:
            detail = (detail + "; " if detail else "") + f"{kinks} kink(s), not failures"
        if note:
            detail = note + ("; " + detail if detail else "")
        self.check(jac, "fail" if failed else "pass", detail)
        self._det(det, max((p.nondet_max_diff for p in report.pairs), default=0.0))

    def _det(self, name: str, diff: float) -> None:
        ok = diff <= self.s.nondet_tol
        self.check(name, "pass" if ok else "fail", f"max difference between two runs {diff:.3g}")

    def second_order(self, name: str) -> None:
        from ..autograd.engine import grad as autograd_grad
        from ..tensor.factory import rand_like
        from ..tensor.tensor import Tensor

        with_grad = [
            i for i, x in enumerate(self.inputs) if isinstance(x, Tensor) and x.requires_grad
        ]
        outs = self.func(*self.inputs)
        outs = outs if isinstance(outs, tuple) else (outs,)
        diff_outs = [o for o in outs if isinstance(o, Tensor) and o.requires_grad]
        gos = tuple(
            (rand_like(o.detach()) * 2.0 - 1.0).detach().requires_grad_(True) for o in diff_outs
        )
        n_in = len(self.inputs)

        def f2(*all_args: Any) -> tuple[Any, ...]:
            ins = all_args[:n_in]
            o = self.func(*ins)
            o = o if isinstance(o, tuple) else (o,)
            d = [x for x in o if isinstance(x, Tensor) and x.requires_grad]
            gs = autograd_grad(
                d,
                [ins[i] for i in with_grad],
                list(all_args[n_in:]),
                create_graph=True,
                allow_unused=True,
            )
            return tuple(g for g in gs if g is not None)

        diff_in = self.diff_names()
        out_names = self.output_names(len(diff_outs))
        go_names = [f"grad_{n}" for n in out_names]
        all_inputs = self.inputs + gos
        report = self._report(f2, all_inputs)
        # the outputs of f2 are the gradients w.r.t. the inputs that got one
        probe = f2(*all_inputs)
        grads = autograd_grad(
            diff_outs, [self.inputs[i] for i in with_grad], list(gos), allow_unused=True
        )
        got = [n for n, g in zip(diff_in, grads) if g is not None]
        f2_outs = [f"grad_{n}" for n in got][: len(probe)]
        pairs = [
            self._pair_dict(2, p, f2_outs, diff_in + go_names, f2, all_inputs) for p in report.pairs
        ]
        self.pairs.extend(pairs)
        failed = [p for p in pairs if not p["ok"]]
        detail = "; ".join(
            f"{p['output']} w.r.t. {p['input']}: {p['n_failed']} of {p['n_elements']} elements"
            for p in failed
        )
        self.check(name, "fail" if failed else "pass", detail)


# ----------------------------------------------------------------------------- config mode
def config_functions(
    path: str, overrides: list[str]
) -> list[tuple[str, Any, tuple[Any, ...], list[str]]]:
    """(layer name, Function, inputs, names) for every FunctionLayer of the config's model."""
    from ..autograd.grad_mode import no_grad
    from ..config import build_experiment, load_config
    from ..nn.function_layer import FunctionLayer
    from ..tensor.tensor import Tensor

    config = load_config(path, overrides)
    exp = build_experiment(config)
    layers = [(n, m) for n, m in exp.model.named_modules() if isinstance(m, FunctionLayer)]
    if not layers:
        return []
    seen: dict[str, tuple[Any, ...]] = {}
    handles = []
    for name, mod in layers:

        def hook(module: Any, args: tuple[Any, ...], _name: str = name) -> None:
            seen.setdefault(_name, args)

        handles.append(mod.register_forward_pre_hook(hook))
    x = next(iter(exp.train_loader))[0]
    x = x[:2] if isinstance(x, Tensor) and x.dim() >= 1 else x
    try:
        with no_grad():
            exp.model.eval()
            exp.model(x)
    finally:
        for h in handles:
            h.remove()
    found = []
    for name, mod in layers:
        args = seen.get(name)
        if args is None:
            continue
        names, _ = forward_names(mod.fn)
        inputs: list[Any] = []
        for a in args:
            if isinstance(a, Tensor) and a.dtype.is_floating_point:
                inputs.append(a.detach().double().clone().requires_grad_(True))
            else:
                inputs.append(a)
        for pname in mod.param_names:
            p = getattr(mod, pname)
            inputs.append(p.detach().double().clone().requires_grad_(p.requires_grad))
        inputs.extend(mod.args)
        if len(names) < len(inputs):
            names = names + [f"arg{i}" for i in range(len(names), len(inputs))]
        found.append((name, mod.fn, tuple(inputs), names[: len(inputs)]))
    return found


# ----------------------------------------------------------------------------- entry
def run_gradcheck(
    target: str,
    input_specs: list[str],
    arg_specs: list[str],
    domain_specs: list[str],
    s: Settings,
    overrides: list[str],
    as_json: bool,
) -> int:
    if s.eps <= 0 or s.atol < 0 or s.rtol < 0 or s.nondet_tol < 0:
        raise UserError("--eps must be > 0 and --atol/--rtol/--nondet-tol >= 0")
    reports: list[dict[str, Any]] = []
    if _is_config(target):
        if input_specs or arg_specs:
            raise UserError("--input/--arg are for a Function target; a config gives the inputs")
        import os

        if not os.path.isfile(target):
            raise UserError(f"config file not found: {target}")
        for layer, fn, inputs, names in config_functions(target, overrides):
            rep = Checker(fn, inputs, names, s).run()
            rep["layer"] = layer
            rep["target"] = f"{target} (model.{layer})"
            reports.append(rep)
    else:
        fn = resolve_function(target)
        inputs, names = build_inputs(fn, input_specs, arg_specs, domain_specs, s.seed)
        rep = Checker(fn, inputs, names, s).run()
        rep["target"] = target
        reports.append(rep)
    ok = all(r["ok"] for r in reports)
    if as_json:
        doc: dict[str, Any] = {"target": target, "ok": ok, "functions": reports}
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    else:
        out = console()
        if not reports:
            out.print(f"{target}: the model uses no custom autograd Function; nothing to check")
        for rep in reports:
            render(out, rep, s)
    return EXIT_OK if ok else EXIT_FAILED


# ----------------------------------------------------------------------------- rendering
_MARK = {"pass": "[green]PASS[/green]", "fail": "[red]FAIL[/red]", "skip": "[dim]SKIP[/dim]"}


def _g(v: Any) -> str:
    return f"{v:.3g}" if isinstance(v, float) else str(v)


def render(out: Any, rep: dict[str, Any], s: Settings) -> None:
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    out.print(
        f"[bold]gradcheck {escape(rep['function'])}[/bold] ({escape(rep['target'])}) in float64: "
        f"eps {s.eps:g}, atol {s.atol:g}, rtol {s.rtol:g}"
    )
    parts = []
    for i in rep["inputs"]:
        if "shape" in i:
            flag = "" if i["requires_grad"] else ", no grad"
            parts.append(f"{i['name']} {tuple(i['shape'])}{flag}")
        else:
            parts.append(f"{i['name']}={i['value']}")
    out.print("inputs: " + escape(", ".join(parts)))
    for c in rep["checks"]:
        detail = f"  [dim]{escape(c['detail'])}[/dim]" if c["detail"] else ""
        out.print(f"  {_MARK[c['status']]}  {escape(c['name'])}{detail}")
    for order in (1, 2):
        pairs = [p for p in rep["pairs"] if p["order"] == order]
        if not pairs:
            continue
        title = "first order" if order == 1 else "second order (gradients of the gradients)"
        table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD)
        for col, just in (
            ("output", "left"),
            ("w.r.t.", "left"),
            ("max abs err", "right"),
            ("max rel err", "right"),
            ("failed", "right"),
            ("kinks", "right"),
            ("result", "left"),
        ):
            table.add_column(col, justify=just, no_wrap=True)  # type: ignore[arg-type]
        for p in pairs:
            if p.get("mode") == "fast":
                failed, rel = "-", "-"
            else:
                failed, rel = f"{p['n_failed']}/{p['n_elements']}", _g(p["max_rel_error"])
            table.add_row(
                p["output"],
                p["input"],
                _g(p["max_abs_error"]),
                rel,
                failed,
                str(p.get("n_kinks", 0)),
                "[green]pass[/green]" if p["ok"] else "[red]FAIL[/red]",
            )
        out.print(table)
        for p in pairs:
            if p.get("mode") == "fast":
                continue
            if not p["ok"]:
                head = f"[red]{p['output']} w.r.t. {p['input']}[/red]: {p['n_failed']} of {p['n_elements']} Jacobian elements fail"
                out.print(head)
                if p["diagnosis"]:
                    out.print(f"  diagnosis: [bold]{escape(p['diagnosis'])}[/bold]")
                t = Table(box=box.SIMPLE_HEAD, title="worst elements", title_justify="left")
                for col in ("element", "numerical", "analytical", "difference", "allowed"):
                    t.add_column(col, justify="left" if col == "element" else "right", no_wrap=True)
                for w in p["worst"][: s.show]:
                    t.add_row(
                        escape(w["where"]),
                        f"{w['numerical']:.6g}"
                        if isinstance(w["numerical"], float)
                        else str(w["numerical"]),
                        f"{w['analytical']:.6g}"
                        if isinstance(w["analytical"], float)
                        else str(w["analytical"]),
                        _g(w["difference"]),
                        _g(w["allowed"]),
                    )
                out.print(t)
            if p.get("kinks"):
                out.print(
                    f"[yellow]{p['output']} w.r.t. {p['input']}[/yellow]: {p['n_kinks']} kink(s) "
                    "(one-sided slopes differ; the function is not differentiable there; "
                    "not counted as failures):"
                )
                for k in p["kinks"][: s.show]:
                    out.print(
                        f"  {escape(k['where'])}: left slope {_g(k['left'])}, right slope "
                        f"{_g(k['right'])}, analytical {_g(k['analytical'])}"
                    )
    verdict = "[green]all checks passed[/green]" if rep["ok"] else "[red]gradcheck FAILED[/red]"
    out.print(verdict)
    out.print()
