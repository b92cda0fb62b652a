"""Validation of the ``sweep`` section (``agrad sweep``): the metric and its direction, the
number of trials, the sampler and pruner, and each parameter's search space. A parameter's
path is checked against the rest of the config by ``sweep.space`` (it needs the whole config).

A parameter's space is one of ``{loguniform: [low, high]}``, ``{uniform: [low, high]}``,
``{int: [low, high]}`` (both with an optional ``step`` or ``log: true``) or ``{choice: [...]}``;
it is resolved to ``{type: float|int|choice, low, high, step, log}`` / ``{type: choice,
values}``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..trainer.metrics import DEFAULT_MONITOR, MODE_VALUES, mode_problem, monitors
from .checks import NONNEG_INT, POS_INT, is_int, is_num, show
from .errors import Path, did_you_mean
from .validate_hooks import _unlogged

if TYPE_CHECKING:
    from .issues import IssueCollector
    from .validator import Validator

__all__ = [
    "PARAM_KINDS",
    "PRUNERS",
    "SAMPLERS",
    "SWEEP_DEFAULTS",
    "validate_param",
    "validate_sweep",
]

SAMPLERS = ("tpe", "random", "grid")
PRUNERS = ("median", "none")
PARAM_KINDS = ("loguniform", "uniform", "int", "choice")
SWEEP_DEFAULTS: dict[str, Any] = {
    "metric": DEFAULT_MONITOR,
    "mode": "auto",  # as a hook's: from the metric (val_acc max, val_loss min)
    "trials": 20,
    "sampler": "tpe",
    "pruner": "median",
    "pruner_warmup": 1,  # epochs reported before a trial may be pruned
    "pruner_startup": 3,  # trials finished before any is pruned
    "seed": None,  # the sampler's seed; null: the config's seed
    "params": {},
}
_SPACE_HINT = (
    "{loguniform: [low, high]}, {uniform: [low, high]}, {int: [low, high]} or {choice: [...]}"
)


def validate_sweep(
    v: Validator, value: Any, path: Path, has_val: bool, metrics: list[str] | None = None
) -> dict[str, Any] | None:
    """The ``sweep`` section with its defaults filled in (None after reporting a non-mapping);
    its metric must be among the run's ``metrics`` (when given), as a hook's monitor must."""
    spec = v.mapping(value, path, "'sweep'")
    if spec is None:
        return None
    checks = {
        "trials": POS_INT,
        "mode": (", ".join(MODE_VALUES), lambda m: m in MODE_VALUES),
        "sampler": (" | ".join(SAMPLERS), lambda s: s in SAMPLERS),
        "pruner": (" | ".join(PRUNERS), lambda s: s in PRUNERS),
        "pruner_warmup": NONNEG_INT,
        "pruner_startup": NONNEG_INT,
        "seed": ("null or a non-negative integer", lambda s: s is None or (is_int(s) and s >= 0)),
        "params": ("a mapping of key.path: space", lambda p: isinstance(p, dict)),
    }
    out = v.fields(spec, path, SWEEP_DEFAULTS, checks, "'sweep'")
    if "metric" in spec:
        v.monitor(out["metric"], path + ("metric",), has_val)
        if out["metric"] in monitors():
            unlogged = _unlogged(out["metric"], metrics)
            if unlogged:
                v.error(path + ("metric",), unlogged)
    if isinstance(out["metric"], str) and out["mode"] in MODE_VALUES:
        problem = mode_problem(out["metric"], out["mode"])
        if problem:
            v.error(path + ("mode",), problem)
    params = out["params"] if isinstance(out["params"], dict) else {}
    out["params"] = {
        str(key): validate_param(v, space, path + ("params", key)) for key, space in params.items()
    }
    return out


def _range(v: IssueCollector, bounds: Any, path: Path, integer: bool, log: bool) -> bool:
    what = "integers" if integer else "numbers"
    ok = is_int if integer else is_num
    if not (isinstance(bounds, list) and len(bounds) == 2 and all(ok(b) for b in bounds)):
        v.error(path, f"expected [low, high], two {what}, got {show(bounds)}")
        return False
    low, high = bounds
    if low >= high:
        v.error(path, f"low must be below high, got [{low}, {high}]")
        return False
    if log and low <= 0:
        v.error(path, f"a log range needs low > 0, got [{low}, {high}]")
        return False
    return True


def validate_param(v: IssueCollector, space: Any, path: Path) -> dict[str, Any] | None:
    """One parameter's space, resolved (see the module docstring); None after reporting it."""
    if not isinstance(space, dict):
        v.error(path, f"expected a search space, {_SPACE_HINT}; got {show(space)}")
        return None
    kinds = [k for k in space if k in PARAM_KINDS]
    if len(kinds) != 1:
        found = f"both {' and '.join(map(repr, kinds))}" if kinds else "none"
        v.error(path, f"expected one of {', '.join(PARAM_KINDS)} ({_SPACE_HINT}); found {found}")
        return None
    kind = kinds[0]
    allowed = () if kind in ("choice", "loguniform") else ("step", "log")
    for key in space:
        if key != kind and key not in allowed:
            hint = did_you_mean(str(key), allowed) or (
                f" ({kind} takes {' and '.join(allowed)})" if allowed else f" ({kind} takes none)"
            )
            v.error(path + (key,), f"unknown setting {key!r} for the {kind} space{hint}")
    if kind == "choice":
        values = space["choice"]
        if not isinstance(values, list) or not values:
            what = "an empty choice" if values == [] else f"got {show(values)}"
            v.error(path + ("choice",), f"expected a non-empty list of values, {what}")
            return None
        return {"type": "choice", "values": values}
    log = kind == "loguniform" or space.get("log", False)
    if not isinstance(log, bool):
        v.error(path + ("log",), f"expected true or false, got {show(log)}")
        return None
    integer = kind == "int"
    step = space.get("step")
    if step is not None:
        good = (is_int(step) if integer else is_num(step)) and step > 0
        if not good:
            v.error(
                path + ("step",),
                f"expected a positive {'integer' if integer else 'number'}, got {show(step)}",
            )
            return None
        if log:
            v.error(path + ("step",), "step and log cannot be combined")
            return None
    if not _range(v, space[kind], path + (kind,), integer, log):
        return None
    low, high = space[kind]
    return {
        "type": "int" if integer else "float",
        "low": low,
        "high": high,
        "step": step,
        "log": log,
    }
