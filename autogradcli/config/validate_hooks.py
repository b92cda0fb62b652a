"""Validation of the ``hooks`` section: built-in trainer hooks with their settings, module hooks
on a named layer, and the user's callbacks by import path. ``Checkpoint`` and
``NonFiniteGuard`` are appended when absent; without validation data, a default
``monitor: val_loss`` becomes ``train_loss``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..trainer.builtin import missing_defaults
from ..trainer.metrics import DEFAULT_MONITOR, METRICS, MODE_VALUES, metric_key, mode_problem
from ..trainer.metrics import monitors as known_monitors
from .checks import describe, is_int, show
from .errors import Path, did_you_mean
from .imports import is_import_path
from .registry import builtin_hooks, hook_defaults
from .schema import MODULE_HOOKS, hook_checks

if TYPE_CHECKING:
    from .validator import Validator

__all__ = ["validate_hooks", "validate_metrics"]


def validate_metrics(v: Validator, value: Any, path: Path) -> list[str] | None:
    """``metrics``: a list of metric names (``trainer.metrics.METRICS``), or None for the task's
    default (decided at build time from the loss)."""
    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        v.error(path, f"expected a list of metric names ({', '.join(METRICS)}), got {show(value)}")
        return None
    out = []
    for i, name in enumerate(value):
        if name not in METRICS:
            hint = did_you_mean(str(name), list(METRICS)) if isinstance(name, str) else ""
            hint = hint or f" (metrics: {', '.join(METRICS)})"
            v.error(
                path + (i,),
                f"unknown metric {name!r}{hint}"
                if isinstance(name, str)
                else f"expected a metric name ({', '.join(METRICS)}), got {show(name)}",
            )
        elif name not in out:
            out.append(name)
    return out


def _unlogged(monitor: str, metrics: list[str] | None) -> str | None:
    """Why ``monitor`` will never be logged with ``metrics`` (None: it will, or may)."""
    name = monitor.split("_", 1)[1]
    if metrics is None or name == "loss" or name in [metric_key(m) for m in metrics]:
        return None
    wanted = next((m for m in METRICS if metric_key(m) == name), name)
    return f"{monitor} is not logged: add {wanted} to metrics (metrics: {metrics})"


def validate_hooks(
    v: Validator, value: Any, path: Path, has_val: bool, metrics: list[str] | None = None
) -> list[Any]:
    """The hook specs, each ``{type, ...}``, with the default hooks appended; a monitored
    metric must be among ``metrics`` (when given)."""
    if value is None:
        value = []
    if not isinstance(value, list):
        v.error(path, f"expected a list of hooks, got {show(value)}")
        return []
    out: list[Any] = []
    builtin = builtin_hooks()
    monitors = known_monitors()
    names = [*builtin, *MODULE_HOOKS]
    for i, item in enumerate(value):
        hpath = path + (i,)
        spec = v.named_spec(item, hpath, "a hook")
        if spec is None:
            out.append(item)
            continue
        kind = spec["type"]
        if not isinstance(kind, str):
            v.error(hpath + ("type",), f"expected a hook name or import path, got {show(kind)}")
        elif kind in builtin:
            spec = _builtin_hook(v, spec, item, hpath, has_val)
            monitor = spec.get("monitor")
            problem = _unlogged(monitor, metrics) if monitor in monitors else None
            if problem and spec.get("enabled", True):
                v.error(hpath + ("monitor",) if "monitor" in item else hpath, problem)
        elif kind in MODULE_HOOKS:
            _module_hook(v, spec, hpath)
        elif is_import_path(kind):
            _callback(v, spec, hpath)
        else:
            v.error(
                hpath + ("type",),
                f"unknown hook {kind!r}{did_you_mean(kind, names)}; expected one of "
                f"{', '.join(names)} or an import path",
            )
        out.append(spec)
    present = {h.get("type") for h in out if isinstance(h, dict) and isinstance(h.get("type"), str)}
    for kind in missing_defaults(present):
        out.append(_follow_default_monitor({"type": kind, **hook_defaults(kind)}, has_val))
    return out


def _follow_default_monitor(spec: dict[str, Any], has_val: bool) -> dict[str, Any]:
    """A hook whose ``monitor`` is None (Checkpoint: the trainer's) gets the trainer's default
    (``val_loss``), as ``train_loss`` without validation data, so the resolved config says it."""
    if "monitor" in spec and spec["monitor"] is None:
        key = DEFAULT_MONITOR.partition("_")[2]
        spec["monitor"] = DEFAULT_MONITOR if has_val else f"train_{key}"
    return spec


def _builtin_hook(
    v: Validator, spec: dict[str, Any], item: Any, path: Path, has_val: bool
) -> dict[str, Any]:
    """A built-in hook's settings (its class's signature: ``registry.hook_defaults``), checked
    and completed.

    Checkpoint's unset monitor becomes ``val_loss`` (``train_loss`` without validation data);
    a ``val_`` monitor the user wrote (or EarlyStopping's default) is an error without it. A
    ``mode`` against the direction of a known metric (``val_acc`` with ``min``) is an error
    unless written ``min!``."""
    kind = spec["type"]
    settings = {k: x for k, x in spec.items() if k != "type"}
    spec = {
        "type": kind,
        **v.fields(settings, path, hook_defaults(kind), hook_checks(), kind),
    }
    spec = _follow_default_monitor(spec, has_val)
    monitors = known_monitors()
    problem = (
        mode_problem(spec["monitor"], spec["mode"])
        if spec.get("monitor") in monitors and spec.get("mode") in MODE_VALUES
        else None
    )
    if problem:
        v.error(path + ("mode",) if "mode" in item else path, problem)
    if (
        (spec.get("monitor") in monitors and spec.get("enabled", True))
        and spec["monitor"].startswith("val_")
        and not has_val
    ):
        v.monitor(spec["monitor"], path + ("monitor",), has_val)
    return spec


def _module_hook(v: Validator, spec: dict[str, Any], path: Path) -> None:
    """A module hook: ``layer`` (a ``named_modules()`` name) and ``fn`` (an import path)."""
    kind = spec["type"]
    v.unknown_keys(spec, path, ("type", "layer", "fn"), f"a {kind} hook")
    layer = spec.get("layer")
    if is_int(layer):
        spec["layer"] = layer = str(layer)
    if not isinstance(layer, str):
        v.error(
            path + ("layer",) if "layer" in spec else path,
            f"a {kind} hook needs 'layer' (a named_modules() name)",
        )
    fn = spec.get("fn")
    if not is_import_path(fn):
        v.error(
            path + ("fn",) if "fn" in spec else path,
            f"a {kind} hook needs 'fn' (an import path to the hook function)",
        )
    else:
        obj = v.resolve(fn, path + ("fn",))
        if obj is not None and not callable(obj):
            v.error(path + ("fn",), f"{fn!r} is {describe(obj)}, not a function")


def _callback(v: Validator, spec: dict[str, Any], path: Path) -> None:
    """A user callback by import path: a class (the other keys are its keyword arguments) or a
    function."""
    kind = spec["type"]
    obj = v.resolve(kind, path + ("type",))
    if obj is None:
        return
    if not callable(obj):
        v.error(path + ("type",), f"{kind!r} is {describe(obj)}, not a class or function")
    elif isinstance(obj, type):
        v.kwargs({k: x for k, x in spec.items() if k != "type"}, path, obj, obj.__name__)
