"""``agrad gradcheck``: a custom autograd Function's backward against finite differences.

This module turns the command line into inputs (``--input``/``--arg``/``--domain``, the
Function's ``example_inputs``, or a config's Function layers), calls
:func:`autogradcli.autograd.function_check.check_function`, and draws its report (or writes it
as JSON). The checks themselves live in the library.

The ``example_inputs`` convention: a Function may declare the inputs it is checked on as a class
attribute ``example_inputs`` holding a tuple, or a staticmethod/classmethod ``example_inputs()``
returning one, in forward's argument order (after ctx). Tensors are cast to float64; if none of
them has ``requires_grad=True``, every floating-point tensor is checked, else only those that
have it. Other values (numbers, strings) are passed as they are.
"""

from __future__ import annotations

import inspect
import json
import math
import os
import sys
import traceback
from typing import TYPE_CHECKING, Any

from .console import console
from .errors import EXIT_FAILED, EXIT_OK, UserError

if TYPE_CHECKING:
    from ..autograd.function_check_report import CheckOptions, FunctionCheckReport

DOMAINS = ("any", "positive", "nonzero", "unit")
CONFIG_SUFFIXES = (".yaml", ".yml", ".json")
MAX_INPUT_NUMEL = 10_000_000  # elements of one --input tensor (80 MB in float64)


# ----------------------------------------------------------------------------- targets
def _is_config(target: str) -> bool:
    return target.lower().endswith(CONFIG_SUFFIXES)


def resolve_function(target: str) -> Any:
    """The Function class named by ``module:Name`` / ``file.py:Name`` (UserError otherwise)."""
    from ..autograd.function import Function
    from ..config.imports import ImportPathError, resolve_import

    if ":" not in target:
        raise UserError(
            f"{target!r} is not a target: expected 'package.module:Name', "
            "'path/to/file.py:Name' or a config file (.yaml)"
        )
    try:
        obj = resolve_import(target, os.getcwd())
    except ImportPathError as err:  # sys.exit() while importing too, with the user's line
        raise UserError(str(err)) from err
    if not (inspect.isclass(obj) and issubclass(obj, Function)):
        what = f"the class {obj.__name__}" if inspect.isclass(obj) else type(obj).__name__
        raise UserError(f"{target} is {what}, not an autograd.Function subclass")
    return obj


def takes_varargs(fn: Any) -> bool:
    """Whether ``fn.forward`` takes ``*args`` (then extra ``--input``/``--arg`` names are
    passed by position, in the order given)."""
    params = list(inspect.signature(fn.forward).parameters.values())[1:]
    return any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params)


def forward_names(fn: Any) -> tuple[list[str], dict[str, Any]]:
    """forward's named positional parameters after ctx (those before ``*args``), and their
    defaults."""
    sig = inspect.signature(fn.forward)
    params = list(sig.parameters.values())[1:]
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params):
        params = params[: [p.kind for p in params].index(inspect.Parameter.VAR_POSITIONAL)]
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
        try:
            value = value()
        except (Exception, SystemExit) as err:
            what = (
                f"called sys.exit({err.code!r})"
                if isinstance(err, SystemExit)
                else f"raised {type(err).__name__}: {err}"
            )
            raise UserError(f"{fn.__name__}.example_inputs() {what}", EXIT_FAILED) from err
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def _split(spec: str, option: str) -> tuple[str, str]:
    name, sep, value = spec.partition("=")
    if not sep or not name.strip():
        raise UserError(f"{option} {spec!r}: expected NAME=VALUE")
    return name.strip(), value.strip()


def _check_name(name: str, names: list[str], option: str, varargs: bool = False) -> None:
    """Refuse a NAME forward does not take; with ``*args`` a new name is the next position."""
    if varargs:
        if name not in names:
            names.append(name)
        return
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
    numel = math.prod(dims)
    if numel == 0:
        raise UserError(
            f"--input {spec!r}: a tensor of shape {dims} has no elements, so there is nothing "
            "to check; give sizes >= 1"
        )
    if numel > MAX_INPUT_NUMEL:
        raise UserError(
            f"--input {spec!r}: {numel:,} elements is more than gradcheck draws for one input "
            f"({MAX_INPUT_NUMEL:,} at most)"
        )
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
    varargs = takes_varargs(fn)
    domains: dict[str, str] = {}
    for spec in domain_specs:
        name, value = _split(spec, "--domain")
        if not varargs:
            _check_name(name, names, "--domain")
        if value not in DOMAINS:
            raise UserError(f"--domain {spec!r}: the domain is one of {', '.join(DOMAINS)}")
        domains[name] = value
    values: dict[str, Any] = {}
    example = _example_inputs(fn)
    if example is not None:
        if len(example) > len(names):
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
        _check_name(name, names, "--input", varargs)
        shape = parse_shape(value, spec)
        arr = _draw(shape, domains.get(name, "any"), rng)
        values[name] = tensor(np.asarray(arr, dtype=np.float64)).requires_grad_(True)
    for spec in arg_specs:
        name, value = _split(spec, "--arg")
        _check_name(name, names, "--arg", varargs)
        try:
            values[name] = yaml.safe_load(value) if value else None
        except yaml.YAMLError:
            values[name] = value
    for name in domains:  # with *args, a --domain name must still be one of the inputs
        _check_name(name, names, "--domain")
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
def _check_number(flag: str, value: float, *, positive: bool = False) -> None:
    if not (math.isfinite(value) and (value > 0 if positive else value >= 0)):
        bound = "> 0" if positive else ">= 0"
        raise UserError(f"{flag} {value!r}: must be a finite number {bound}")


def check_options(options: CheckOptions) -> None:
    """A UserError naming the flag for a tolerance or step that is nan, inf or out of range."""
    _check_number("--eps", options.eps, positive=True)
    _check_number("--atol", options.atol)
    _check_number("--rtol", options.rtol)
    _check_number("--nondet-tol", options.nondet_tol)


def _run_one(fn: Any, inputs: tuple[Any, ...], names: list[str], options: CheckOptions, show: int):
    from ..autograd.function_check import check_function, validate_inputs

    try:
        validate_inputs(inputs, names)
    except ValueError as err:
        raise UserError(f"{fn.__name__}: {err}") from None
    return check_function(fn, inputs, names, options, max_worst=max(show, 20))


def run_gradcheck(
    target: str,
    input_specs: list[str],
    arg_specs: list[str],
    domain_specs: list[str],
    options: CheckOptions,
    *,
    show: int = 5,
    overrides: list[str] | None = None,
    as_json: bool = False,
    debug: bool = False,
) -> int:
    """Check the Function(s) named by ``target``, print the report(s), return the exit code."""
    check_options(options)
    checked: list[tuple[str, str | None, FunctionCheckReport]] = []  # (target, layer, report)
    if _is_config(target):
        if input_specs or arg_specs:
            raise UserError("--input/--arg are for a Function target; a config gives the inputs")
        if not os.path.isfile(target):
            raise UserError(f"config file not found: {target}")
        try:
            found = config_functions(target, overrides or [])
        except SystemExit as err:
            raise UserError(
                f"{target}: the model's code called sys.exit({err.code!r}) while gradcheck "
                "built it and ran one batch",
                EXIT_FAILED,
            ) from None
        for layer, fn, inputs, names in found:
            rep = _run_one(fn, inputs, names, options, show)
            checked.append((f"{target} (model.{layer})", layer, rep))
    else:
        fn = resolve_function(target)
        inputs, names = build_inputs(fn, input_specs, arg_specs, domain_specs, options.seed)
        checked.append((target, None, _run_one(fn, inputs, names, options, show)))
    if debug:
        for _, _, rep in checked:
            for err in rep.errors:
                traceback.print_exception(type(err), err, err.__traceback__, file=sys.stderr)
    ok = all(rep.ok for _, _, rep in checked)
    if as_json:
        functions = []
        for where, layer, rep in checked:
            doc = rep.to_dict()
            doc["settings"]["show"] = show
            doc["target"] = where
            if layer is not None:
                doc["layer"] = layer
            functions.append(doc)
        sys.stdout.write(json.dumps({"target": target, "ok": ok, "functions": functions}, indent=2))
        sys.stdout.write("\n")
    else:
        from .gradcheck_render import render

        out = console()
        if not checked:
            out.print(f"{target}: the model uses no custom autograd Function; nothing to check")
        for where, _, rep in checked:
            render(out, rep, where, show)
    return EXIT_OK if ok else EXIT_FAILED
