"""Building the training objects: the loss (checked on the model's dry-run output), the
optimizer with its ``param_groups``, the LR scheduler and the hook specs."""

from __future__ import annotations

import fnmatch
from typing import Any

from ..autograd.grad_mode import no_grad
from ..nn.module import Module
from ..tensor.tensor import Tensor
from ..trainer.sequence_loss import compute_loss
from . import registry
from .build_data import dataset_labels
from .builder import Builder, shape_text, tensor_arguments
from .errors import Path, did_you_mean
from .experiment import HookSpec
from .schema import MODULE_HOOKS
from .target_checks import class_target_problem, label_range_problem, shape_mismatch_problem

__all__ = [
    "build_hooks",
    "build_loss",
    "build_optimizer",
    "build_scheduler",
    "check_label_range",
]


def build_loss(b: Builder, out: Any, y: Any) -> Any:
    """The loss module, tried on the model's output ``out`` and the targets ``y`` (skipped when
    ``out`` is None); None after a problem (reported)."""
    spec = b.config.data["loss"]
    kind = spec["type"]
    target = b.lookup(kind, ("loss", "type"), registry.loss_types())
    if target is None:
        return None
    kwargs = {k: v for k, v in spec.items() if k != "type"}
    tensor_arguments(kwargs)
    loss_fn = b.construct(("loss",), kind, lambda: target(**kwargs))
    if loss_fn is None:
        return None
    if out is not None:
        problem = class_target_problem(kind, out, y) or shape_mismatch_problem(kind, out, y)
        if problem:
            b.error(("loss",), problem)
            return loss_fn
        ignore = getattr(loss_fn, "ignore_index", None)
        if label_range_problem(type(loss_fn).__name__, out, y, "", ignore):
            return loss_fn  # check_label_range reports it, at the output layer
        try:
            with no_grad():
                compute_loss(loss_fn, out, y)
        except Exception as err:
            b.error(
                ("loss",),
                f"{kind} cannot compare the model's output {shape_text(out)} with the targets "
                f"{shape_text(y)} ({y.dtype if isinstance(y, Tensor) else type(y).__name__}): "
                f"{err}",
            )
    return loss_fn


def check_label_range(b: Builder, loss_fn: Any, out: Any, sets: dict[str, Any]) -> None:
    """Report, at the model's output layer, a class label of any of ``sets`` (``{"the
    training set": dataset, ...}``) beyond the model's outputs, before the run starts."""
    kind = type(loss_fn).__name__
    ignore = getattr(loss_fn, "ignore_index", None)
    for what, dataset in sets.items():
        if dataset is None:
            continue
        problem = label_range_problem(kind, out, dataset_labels(dataset), what, ignore)
        if problem:
            b.error(output_layer_path(b.config.data["model"]), problem)
            return


def output_layer_path(spec: Any) -> Path:
    """The key path of the layer that sets the model's output size: the last layer (block)
    with ``out_features``/``out_channels``, else the last one."""
    if isinstance(spec, list):
        paths: list[tuple[Path, Any]] = [(("model", i), x) for i, x in enumerate(spec)]
    else:
        blocks = spec["blocks"]
        names = list(blocks)
        last = spec.get("output") or names[-1]
        names = names[: names.index(last) + 1] if last in names else names
        paths = [(("model", "blocks", n), blocks[n]) for n in names]
    for path, layer in reversed(paths):
        if isinstance(layer, dict) and ("out_features" in layer or "out_channels" in layer):
            return path
    return paths[-1][0] if paths else ("model",)


def build_optimizer(b: Builder, model: Module) -> tuple[Any, list[list[str]]]:
    """(optimizer, the parameter names of each of its groups); (None, []) after a problem."""
    spec = b.config.data["optimizer"]
    kind = spec["type"]
    target = b.lookup(kind, ("optimizer", "type"), registry.optimizer_types())
    if target is None:
        return None, []
    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    if not named:
        b.error(("model",), "the model has no trainable parameters")
        return None, []
    groups, group_names = _param_groups(b, spec.get("param_groups") or [], named)
    kwargs = {k: v for k, v in spec.items() if k not in ("type", "param_groups")}
    if "betas" in kwargs and isinstance(kwargs["betas"], list):
        kwargs["betas"] = tuple(kwargs["betas"])
    optimizer = b.construct(("optimizer",), kind, lambda: target(groups, **kwargs))
    return (optimizer, group_names) if optimizer is not None else (None, [])


def _param_groups(
    b: Builder, groups_spec: list[dict[str, Any]], named: list[tuple[str, Any]]
) -> tuple[list[dict[str, Any]], list[list[str]]]:
    """The optimizer's param groups and their parameter names. A parameter joins the first
    group whose ``params`` patterns match its name; the unmatched ones form the default group
    (first, with the optimizer's own settings). A group matching nothing is reported."""
    taken: dict[str, int] = {}
    for i, group in enumerate(groups_spec):
        pats = group["params"] if isinstance(group["params"], list) else [group["params"]]
        hit = False
        for n, _ in named:
            if any(fnmatch.fnmatchcase(n, pat) for pat in pats):
                hit = True
                taken.setdefault(n, i)
        if not hit:
            names = [n for n, _ in named]
            hint = did_you_mean(pats[0], names) or f" (parameters: {', '.join(names[:12])})"
            b.error(
                ("optimizer", "param_groups", i, "params"),
                f"{pats} matches no parameter{hint}",
            )
    default = [n for n, _ in named if n not in taken]
    by_name = dict(named)
    groups: list[dict[str, Any]] = []
    group_names: list[list[str]] = []
    if default:
        groups.append({"params": [by_name[n] for n in default]})
        group_names.append(default)
    for i, group in enumerate(groups_spec):
        names = [n for n, _ in named if taken.get(n) == i]
        if names:
            opts = {k: v for k, v in group.items() if k != "params"}
            groups.append({"params": [by_name[n] for n in names], **opts})
            group_names.append(names)
    return groups, group_names


def build_scheduler(b: Builder, optimizer: Any, steps_per_epoch: int) -> Any:
    """The LR scheduler on ``optimizer`` (None without one). OneCycleLR given no length gets
    ``total_steps`` from ``train.epochs`` (times ``steps_per_epoch`` when stepped per batch)."""
    spec = b.config.data["scheduler"]
    if spec is None or optimizer is None:
        return None
    kind = spec["type"]
    target = b.lookup(kind, ("scheduler", "type"), registry.scheduler_types())
    if target is None:
        return None
    kwargs = {k: v for k, v in spec.items() if k not in ("type", "interval", "monitor")}
    if getattr(target, "__name__", "") == "OneCycleLR" and not any(
        k in kwargs for k in ("total_steps", "epochs", "steps_per_epoch")
    ):
        epochs = b.config.data["train"]["epochs"]
        per = steps_per_epoch if spec["interval"] == "step" else 1
        kwargs["total_steps"] = epochs * per
    if isinstance(kwargs.get("lr_lambda"), str):
        kwargs["lr_lambda"] = b.resolve(kwargs["lr_lambda"], ("scheduler", "lr_lambda"))
    return b.construct(("scheduler",), kind, lambda: target(optimizer, **kwargs))


def build_hooks(b: Builder, model: Module | None) -> list[HookSpec]:
    """A ``HookSpec`` per hook; a module hook's ``layer`` is looked up in ``model``."""
    out = []
    modules = dict(model.named_modules()) if model is not None else {}
    for i, spec in enumerate(b.config.data["hooks"]):
        kind = spec["type"]
        path: Path = ("hooks", i)
        where = b.config.where(path)
        kwargs = {k: v for k, v in spec.items() if k != "type"}
        if kind in registry.builtin_hooks():
            out.append(HookSpec("builtin", kind, kwargs, path, where))
        elif kind in MODULE_HOOKS:
            fn = b.resolve(spec["fn"], path + ("fn",))
            layer = spec["layer"]
            module = modules.get(layer)
            if model is not None and module is None:
                names = [n for n in modules if n]
                hint = did_you_mean(layer, names) or f" (layers: {', '.join(names[:20])})"
                b.error(path + ("layer",), f"the model has no layer {layer!r}{hint}")
            out.append(HookSpec(kind, fn, {}, path, where, layer, module))
        else:
            target = b.resolve(kind, path + ("type",))
            out.append(HookSpec("callback", target, kwargs, path, where))
    return out
