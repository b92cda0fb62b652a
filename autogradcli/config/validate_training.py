"""Validation of the training sections: ``loss``, ``optimizer`` (with ``param_groups``),
``scheduler`` and ``train``. Each ``type`` is a built-in name (matched loosely) or an import
path, and the other keys are checked as the class's keyword arguments."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import registry
from .arguments import NO_DEFAULT, argument_check
from .checks import describe, show
from .errors import Path, did_you_mean
from .schema import TRAIN_CHECKS, TRAIN_DEFAULTS

if TYPE_CHECKING:
    from .validator import Validator

__all__ = ["validate_loss", "validate_optimizer", "validate_scheduler", "validate_train"]


def validate_loss(v: Validator, value: Any, path: Path) -> Any:
    """The loss as ``{type: <canonical name or import path>, **kwargs}``."""
    from ..nn.module import Module

    spec = v.named_spec(value, path, "the loss")
    if spec is None:
        return value
    target = v.named_target(spec, path, registry.loss_types(), "loss", Module, "loss")
    if target is not None:
        v.kwargs({k: x for k, x in spec.items() if k != "type"}, path, target, spec["type"])
    return spec


def validate_optimizer(v: Validator, value: Any, path: Path) -> Any:
    """The optimizer as ``{type, param_groups: [...], **kwargs}``; each param group needs
    ``params`` (fnmatch patterns) and takes the optimizer's own keyword arguments."""
    from ..optim import Optimizer

    spec = v.named_spec(value, path, "the optimizer")
    if spec is None:
        return value
    target = v.named_target(spec, path, registry.optimizer_types(), "optimizer", Optimizer)
    groups = spec.get("param_groups", [])
    if not isinstance(groups, list):
        v.error(path + ("param_groups",), f"expected a list of groups, got {show(groups)}")
        groups = []
    spec["param_groups"] = groups
    if target is None:
        return spec
    name = spec["type"]
    v.kwargs(
        {k: x for k, x in spec.items() if k not in ("type", "param_groups")},
        path,
        target,
        name,
        ("params",),
    )
    sig = registry.signature_of(target, ("params",))
    for i, group in enumerate(groups):
        gpath = path + ("param_groups", i)
        if v.mapping(group, gpath, "a param group") is None:
            continue
        pats = group.get("params")
        if pats is None:
            v.error(gpath, "the param group needs 'params' (fnmatch patterns on parameter names)")
        elif not (
            isinstance(pats, str)
            or (isinstance(pats, list) and pats and all(isinstance(p, str) for p in pats))
        ):
            v.error(
                gpath + ("params",),
                f"expected a pattern or a list of patterns, got {show(pats)}",
            )
        if not sig.var_keyword:
            for key in group:
                if key != "params" and key not in sig.names:
                    v.error(
                        gpath + (key,),
                        f"{name} got an unexpected argument {key!r}"
                        f"{did_you_mean(str(key), sig.names)}",
                    )
                elif key != "params":
                    v.check(
                        group[key],
                        gpath + (key,),
                        argument_check(key, sig.defaults.get(key, NO_DEFAULT)),
                    )
    return spec


def validate_scheduler(v: Validator, value: Any, path: Path, has_val: bool) -> Any:
    """The scheduler (or None) with ``interval`` filled in (``step`` for OneCycleLR, else
    ``epoch``) and, for ReduceLROnPlateau, ``monitor``."""
    if value is None:
        return None
    from ..optim.lr_scheduler import LRScheduler, ReduceLROnPlateau

    spec = v.named_spec(value, path, "the scheduler")
    if spec is None:
        return value
    target = v.named_target(spec, path, registry.scheduler_types(), "scheduler", object)
    if target is not None and not (
        isinstance(target, type) and issubclass(target, (LRScheduler, ReduceLROnPlateau))
    ):
        v.error(path + ("type",), f"{spec['type']!r} is {describe(target)}, not an LR scheduler")
        target = None
    one_cycle = target is not None and target.__name__ == "OneCycleLR"
    spec.setdefault("interval", "step" if one_cycle else "epoch")
    if spec["interval"] not in ("epoch", "step"):
        v.error(path + ("interval",), f"expected epoch or step, got {show(spec['interval'])}")
    plateau = target is not None and issubclass(target, ReduceLROnPlateau)
    if plateau:
        spec.setdefault("monitor", "val_loss")
        v.monitor(spec["monitor"], path + ("monitor",), has_val)
    elif "monitor" in spec and target is not None:
        v.error(path + ("monitor",), f"only ReduceLROnPlateau takes 'monitor', not {spec['type']}")
    if target is None:
        return spec
    kw = {k: x for k, x in spec.items() if k not in ("type", "interval", "monitor")}
    v.kwargs(kw, path, target, spec["type"], ("optimizer",))
    if isinstance(kw.get("lr_lambda"), str):
        fn = v.resolve(kw["lr_lambda"], path + ("lr_lambda",))
        if fn is not None and not callable(fn):
            v.error(path + ("lr_lambda",), f"{kw['lr_lambda']!r} is not callable")
    return spec


def validate_train(v: Validator, value: Any, path: Path) -> dict[str, Any]:
    """The ``train`` settings (``schema.TRAIN_DEFAULTS``), checked and completed."""
    train = v.mapping(value, path, "'train'")
    return v.fields(train or {}, path, TRAIN_DEFAULTS, TRAIN_CHECKS, "'train'")
