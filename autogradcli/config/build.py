"""``build_experiment``: a validated ``Config`` made into the objects a training run needs.

The model is built one layer (block) at a time while a small batch of the training data runs
through it, so ``auto`` sizes come from the real input and a shape mismatch is reported against
the layer's key and line, with both shapes, instead of as a traceback from the first step.
"""

from __future__ import annotations

import fnmatch
import os
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import data as D
from ..autograd.grad_mode import no_grad
from ..nn.container import Sequential
from ..nn.function_layer import FunctionLayer
from ..nn.module import Module
from ..tensor.random import manual_seed
from ..tensor.tensor import Tensor
from . import registry
from .blocks import Graph
from .errors import ConfigError, ConfigIssue, Path, did_you_mean
from .imports import ImportPathError, is_import_path, resolve_import
from .loader import Config
from .schema import BLOCK_RESERVED, BUILTIN_HOOKS, LAYER_RESERVED, MODULE_HOOKS

__all__ = ["Experiment", "HookSpec", "TrainSettings", "build_experiment"]

DRY_RUN_BATCH = 8  # samples run through the model while it is built


@dataclass(frozen=True)
class HookSpec:
    """One entry of ``hooks`` (or a default one), resolved for the trainer.

    ``kind``:
      - ``"builtin"``: ``target`` is the name (``EarlyStopping``, ``Checkpoint``, ``LRLogger``,
        ``GradNormLogger``, ``NonFiniteGuard``), ``kwargs`` its settings with every default
        filled in (see ``schema.BUILTIN_HOOKS``; Checkpoint/NonFiniteGuard have ``enabled``).
      - ``"callback"``: ``target`` is the user's class (to call as ``target(**kwargs)``) or
        function, from the import path in ``type``.
      - ``"forward_pre"`` | ``"forward"`` | ``"full_backward"``: a module hook; ``target`` is the
        hook function, ``layer`` the ``named_modules()`` name and ``module`` that module of the
        built model, so ``module.register_<kind>_hook(target)`` installs it; ``kwargs`` is {}.
    ``path`` is the key path (``("hooks", 2)``; default hooks have ``("hooks",)``) and ``where``
    its ``file:line:col``, for error messages.
    """

    kind: str
    target: Any
    kwargs: dict[str, Any]
    path: Path
    where: str = ""
    layer: str | None = None
    module: Module | None = None


@dataclass(frozen=True)
class TrainSettings:
    """The ``train`` section."""

    epochs: int = 10
    batch_size: int = 64
    eval_every: int = 1
    grad_clip: float | None = None
    shuffle: bool = True
    drop_last: bool = False


@dataclass
class Experiment:
    """Everything a run needs, built from a Config (``build_experiment``).

    ``model`` is on ``device`` in train mode; ``train_loader`` shuffles with a
    ``data.Generator`` seeded from ``seed`` and yields ``[x, y]`` batches already on ``device``;
    ``val_loader`` is None without validation data. ``scheduler_interval`` is ``"epoch"`` or
    ``"step"``; ``scheduler_monitor`` the metric ReduceLROnPlateau steps on (else None).
    ``task`` is ``"classification"`` for class losses (CrossEntropyLoss, NLLLoss, BCE...), else
    ``"regression"``. ``output_dir`` is the run directory, ``<output.dir>/<name>``.
    ``input_shape``/``output_shape`` are one sample's shapes (no batch dim) from the dry run.
    """

    name: str
    seed: int
    device: str
    model: Module
    loss_fn: Any
    optimizer: Any
    scheduler: Any
    scheduler_interval: str
    train_loader: Any
    val_loader: Any
    task: str
    hooks: list[HookSpec]
    train: TrainSettings
    output_dir: str
    config: Config
    scheduler_monitor: str | None = None
    input_shape: tuple[int, ...] = ()
    output_shape: tuple[int, ...] = ()
    param_group_names: list[list[str]] = field(default_factory=list)


def _shape(t: Any) -> str:
    if isinstance(t, Tensor):
        return str(tuple(int(d) for d in t.shape))
    if isinstance(t, (tuple, list)):
        return "[" + ", ".join(_shape(x) for x in t) + "]"
    return type(t).__name__


class _Builder:
    def __init__(self, config: Config) -> None:
        self.config = config
        self.issues: list[ConfigIssue] = []

    def error(self, path: Path, message: str) -> None:
        self.issues.append(self.config.source.issue(path, message))

    def resolve(self, text: str, path: Path) -> Any:
        base = self.config.file_path(path, ".")
        try:
            return resolve_import(text, base)
        except ImportPathError as err:  # validated already; only if the file changed since
            self.error(path, str(err))
            return None

    # ------------------------------------------------------------------ data
    def dataset(self, spec: dict[str, Any], path: Path) -> Any:
        name = spec["dataset"]
        key = path + ("dataset",)
        try:
            if is_import_path(name):
                fn = self.resolve(name, key)
                if fn is None:
                    return None
                kwargs = {k: v for k, v in spec.items() if k not in ("dataset", "val_split", "val")}
                ds = fn(**kwargs)
            elif name == "digits":
                ds = D.load_digits(flatten=spec["flatten"])
            elif name == "npz":
                key = path + ("path",)
                ds = D.load_npz(
                    self.config.file_path(key, spec["path"]), spec["x_key"], spec["y_key"]
                )
            elif name == "csv":
                key = path + ("path",)
                ds = D.load_csv(
                    self.config.file_path(key, spec["path"]),
                    spec["target_column"],
                    spec["header"],
                    spec["delimiter"],
                )
            elif name == "idx":
                key = path + ("images",)
                labels = spec["labels"]
                ds = D.load_idx(
                    self.config.file_path(key, spec["images"]),
                    self.config.file_path(path + ("labels",), labels) if labels else None,
                    spec["flatten"],
                )
            elif name == "sine":
                ds = D.sine_regression(spec["n"], spec["noise"], spec["seed"])
            else:
                ds = D.spirals(spec["n_per_class"], spec["classes"], spec["noise"], spec["seed"])
        except Exception as err:
            self.error(key, f"cannot load the data: {err}")
            return None
        if not hasattr(ds, "__len__") or not hasattr(ds, "__getitem__"):
            self.error(key, f"{name!r} returned a {type(ds).__name__}, not a Dataset")
            return None
        if len(ds) == 0:
            self.error(key, "the dataset is empty")
            return None
        first = ds[0]
        if not isinstance(first, (tuple, list)) or len(first) < 2:
            self.error(
                key, "the dataset's samples must be (input, target) pairs; it has no targets"
            )
            return None
        return ds

    def data(self) -> tuple[Any, Any]:
        spec = self.config.data["data"]
        seed = self.config.data["seed"]
        ds = self.dataset(spec, ("data",))
        if ds is None:
            return None, None
        if spec.get("val"):
            val = self.dataset(spec["val"], ("data", "val"))
            return ds, val
        frac = spec["val_split"]
        if not frac:
            return ds, None
        n = len(ds)
        n_val = round(n * frac)
        if n_val < 1 or n_val >= n:
            self.error(
                ("data", "val_split"),
                f"val_split {frac} of {n} samples leaves {n - n_val} to train and {n_val} to validate",
            )
            return None, None
        train, val = D.random_split(ds, [n - n_val, n_val], generator=D.Generator(seed))
        return train, val

    # ------------------------------------------------------------------ model
    def layer(
        self, spec: dict[str, Any], path: Path, inputs: Sequence[Any], reserved: tuple
    ) -> Any:
        """(module, output) for one layer spec run on ``inputs``, or (None, None)."""
        kind = spec["type"]
        if is_import_path(kind):
            target = self.resolve(kind, path + ("type",))
            if target is None:
                return None, None
        else:
            target = registry.layer_types()[kind]
        x = inputs[0]
        kwargs = {k: v for k, v in spec.items() if k not in reserved}
        what = getattr(target, "__name__", str(kind))
        try:
            if registry.is_function_class(target):
                params = {}
                for pname, shape in (kwargs.get("params") or {}).items():
                    dims = shape if isinstance(shape, list) else [shape]
                    params[pname] = [int(x.shape[-1]) if d == "auto" else d for d in dims]
                module = FunctionLayer(target, params, kwargs.get("init"), kwargs.get("args", ()))
            else:
                for key, value in kwargs.items():
                    if value == "auto":
                        dim = registry.AUTO_KEYS[key]
                        if not isinstance(x, Tensor) or x.dim() < (2 if dim == 1 else 1):
                            self.error(
                                path + (key,),
                                f"cannot infer {key} from an input of shape {_shape(x)}",
                            )
                            return None, None
                        kwargs[key] = int(x.shape[dim])
                for key in ("weight", "pos_weight"):
                    if isinstance(kwargs.get(key), list):
                        from ..tensor.factory import tensor

                        kwargs[key] = tensor(kwargs[key])
                module = target(**kwargs)
        except Exception as err:
            args = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
            self.error(path, f"{what}({args}) failed: {type(err).__name__}: {err}")
            return None, None
        if not isinstance(module, Module):
            self.error(path, f"{what} built a {type(module).__name__}, not an nn.Module")
            return None, None
        try:
            with no_grad():
                module.eval()
                out = module(*inputs)
                module.train()
        except Exception as err:
            shapes = " and ".join(_shape(i) for i in inputs)
            self.error(
                path,
                f"{_describe_module(module)} cannot take an input of shape {shapes}: {err}",
            )
            return None, None
        return module, out

    def model(self, x: Tensor) -> tuple[Module | None, Any]:
        spec = self.config.data["model"]
        if isinstance(spec, list):
            layers: list[tuple[str, Module]] = []
            for i, layer_spec in enumerate(spec):
                module, x = self.layer(layer_spec, ("model", i), [x], LAYER_RESERVED)
                if module is None:
                    return None, None
                layers.append((layer_spec.get("name", str(i)), module))
            return Sequential(OrderedDict(layers)), x
        values: dict[str, Any] = {"input": x}
        wiring = []
        for name, block in spec["blocks"].items():
            refs = block["inputs"] if "inputs" in block else [block["input"]]
            module, out = self.layer(
                block, ("model", "blocks", name), [values[r] for r in refs], BLOCK_RESERVED
            )
            if module is None:
                return None, None
            values[name] = out
            wiring.append((name, module, refs))
        return Graph(wiring, spec["output"]), values[spec["output"]]

    # ------------------------------------------------------------------ training parts
    def loss(self, out: Any, y: Any) -> Any:
        spec = self.config.data["loss"]
        kind = spec["type"]
        target = (
            self.resolve(kind, ("loss", "type"))
            if is_import_path(kind)
            else registry.loss_types()[kind]
        )
        if target is None:
            return None
        kwargs = {k: v for k, v in spec.items() if k != "type"}
        for key in ("weight", "pos_weight"):
            if isinstance(kwargs.get(key), list):
                from ..tensor.factory import tensor

                kwargs[key] = tensor(kwargs[key])
        try:
            loss_fn = target(**kwargs)
        except Exception as err:
            self.error(("loss",), f"{kind} failed: {type(err).__name__}: {err}")
            return None
        if out is not None:
            try:
                with no_grad():
                    loss_fn(out, y)
            except Exception as err:
                self.error(
                    ("loss",),
                    f"{kind} cannot compare the model's output {_shape(out)} with the targets "
                    f"{_shape(y)} ({y.dtype if isinstance(y, Tensor) else type(y).__name__}): {err}",
                )
        return loss_fn

    def optimizer(self, model: Module) -> tuple[Any, list[list[str]]]:
        spec = self.config.data["optimizer"]
        kind = spec["type"]
        target = (
            self.resolve(kind, ("optimizer", "type"))
            if is_import_path(kind)
            else registry.optimizer_types()[kind]
        )
        if target is None:
            return None, []
        named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
        if not named:
            self.error(("model",), "the model has no trainable parameters")
            return None, []
        groups_spec = spec.get("param_groups") or []
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
                self.error(
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
        kwargs = {k: v for k, v in spec.items() if k not in ("type", "param_groups")}
        if "betas" in kwargs and isinstance(kwargs["betas"], list):
            kwargs["betas"] = tuple(kwargs["betas"])
        try:
            return target(groups, **kwargs), group_names
        except Exception as err:
            self.error(("optimizer",), f"{kind} failed: {type(err).__name__}: {err}")
            return None, []

    def scheduler(self, optimizer: Any, steps_per_epoch: int) -> Any:
        spec = self.config.data["scheduler"]
        if spec is None or optimizer is None:
            return None
        kind = spec["type"]
        target = (
            self.resolve(kind, ("scheduler", "type"))
            if is_import_path(kind)
            else registry.scheduler_types()[kind]
        )
        if target is None:
            return None
        kwargs = {k: v for k, v in spec.items() if k not in ("type", "interval", "monitor")}
        if getattr(target, "__name__", "") == "OneCycleLR" and not any(
            k in kwargs for k in ("total_steps", "epochs", "steps_per_epoch")
        ):
            epochs = self.config.data["train"]["epochs"]
            per = steps_per_epoch if spec["interval"] == "step" else 1
            kwargs["total_steps"] = epochs * per
        if isinstance(kwargs.get("lr_lambda"), str):
            kwargs["lr_lambda"] = self.resolve(kwargs["lr_lambda"], ("scheduler", "lr_lambda"))
        try:
            return target(optimizer, **kwargs)
        except Exception as err:
            self.error(("scheduler",), f"{kind} failed: {type(err).__name__}: {err}")
            return None

    def hooks(self, model: Module | None) -> list[HookSpec]:
        out = []
        modules = dict(model.named_modules()) if model is not None else {}
        for i, spec in enumerate(self.config.data["hooks"]):
            kind = spec["type"]
            path: Path = ("hooks", i)
            where = self.config.where(path)
            kwargs = {k: v for k, v in spec.items() if k != "type"}
            if kind in BUILTIN_HOOKS:
                out.append(HookSpec("builtin", kind, kwargs, path, where))
            elif kind in MODULE_HOOKS:
                fn = self.resolve(spec["fn"], path + ("fn",))
                layer = spec["layer"]
                module = modules.get(layer)
                if model is not None and module is None:
                    names = [n for n in modules if n]
                    hint = did_you_mean(layer, names) or f" (layers: {', '.join(names[:20])})"
                    self.error(path + ("layer",), f"the model has no layer {layer!r}{hint}")
                out.append(HookSpec(kind, fn, {}, path, where, layer, module))
            else:
                target = self.resolve(kind, path + ("type",))
                out.append(HookSpec("callback", target, kwargs, path, where))
        return out


def _describe_module(module: Module) -> str:
    text = repr(module).splitlines()[0]
    for attr, fmt in (
        ("in_features", "expects inputs of shape (*, {})"),
        ("in_channels", "expects {} input channels (dim 1)"),
        ("num_features", "expects {} features (dim 1)"),
        ("normalized_shape", "expects trailing dims {}"),
        ("input_size", "expects inputs of shape (*, {})"),
    ):
        value = getattr(module, attr, None)
        if value is not None:
            if isinstance(value, (tuple, list)):
                value = tuple(value)
            return f"{text} {fmt.format(value)}; it"
    return text


def _sample(dataset: Any, k: int) -> tuple[Any, Any]:
    loader = D.DataLoader(dataset, batch_size=min(k, len(dataset)))
    batch = next(iter(loader))
    return batch[0], batch[1]


def _to_device(dataset: Any, device: str) -> None:
    """Move the tensors of the TensorDataset under ``dataset`` (through Subsets) to ``device``."""
    while isinstance(dataset, D.Subset):
        dataset = dataset.dataset
    if isinstance(dataset, D.TensorDataset):
        dataset.tensors = tuple(t.to(device) for t in dataset.tensors)


def build_experiment(config: Config) -> Experiment:
    """Build the run described by ``config``; raise one ConfigError listing every problem.

    Calls ``autogradcli.manual_seed(seed)`` first, so weights are the same on every build.
    """
    d = config.data
    seed = d["seed"]
    manual_seed(seed)
    b = _Builder(config)
    device = d["device"]
    if device.startswith("cuda"):
        from .. import cuda

        if not cuda.is_available():
            b.error(("device",), f"{device} was asked for, but CUDA is not available here")
        elif ":" in device and int(device.split(":")[1]) >= cuda.device_count():
            b.error(("device",), f"{device}: there are only {cuda.device_count()} CUDA devices")
    train_ds, val_ds = b.data()
    model = out = x = y = loss_fn = optimizer = scheduler = None
    group_names: list[list[str]] = []
    if train_ds is not None:
        x, y = _sample(train_ds, DRY_RUN_BATCH)
        model, out = b.model(x)
        loss_fn = b.loss(out, y)
    else:
        b.loss(None, None)
    t = d["train"]
    train_loader = val_loader = None
    if train_ds is not None:
        train_loader = D.DataLoader(
            train_ds,
            batch_size=t["batch_size"],
            shuffle=t["shuffle"],
            drop_last=t["drop_last"],
            generator=D.Generator(seed),
        )
        if t["drop_last"] and len(train_loader) == 0:
            b.error(
                ("train", "batch_size"),
                f"batch_size {t['batch_size']} with drop_last leaves no batch of the "
                f"{len(train_ds)} training samples",
            )
    if val_ds is not None:
        val_loader = D.DataLoader(val_ds, batch_size=t["batch_size"], shuffle=False)
    if model is not None:
        optimizer, group_names = b.optimizer(model)
        scheduler = b.scheduler(optimizer, len(train_loader) if train_loader else 1)
    hooks = b.hooks(model)
    if b.issues:
        raise ConfigError(b.issues)
    assert model is not None and train_ds is not None
    if device != "cpu":
        model.to(device)
        _to_device(train_ds, device)
        if val_ds is not None:
            _to_device(val_ds, device)
    model.train()
    loss_name = type(loss_fn).__name__
    task = "classification" if loss_name in registry.CLASSIFICATION_LOSSES else "regression"
    sched = d["scheduler"] or {}

    return Experiment(
        name=d["name"],
        seed=seed,
        device=device,
        model=model,
        loss_fn=loss_fn,
        optimizer=optimizer,
        scheduler=scheduler,
        scheduler_interval=sched.get("interval", "epoch"),
        scheduler_monitor=sched.get("monitor"),
        train_loader=train_loader,
        val_loader=val_loader,
        task=task,
        hooks=hooks,
        train=TrainSettings(**t),
        output_dir=os.path.join(d["output"]["dir"], d["name"]),
        config=config,
        input_shape=tuple(x.shape[1:]) if isinstance(x, Tensor) else (),
        output_shape=tuple(out.shape[1:]) if isinstance(out, Tensor) else (),
        param_group_names=group_names,
    )
