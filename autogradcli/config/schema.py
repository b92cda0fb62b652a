"""The experiment config: its schema, defaults and validation.

An ``agrad`` run is described by one YAML file. Every key below is optional unless marked
*required*; ``load_config`` fills in every default (``agrad train --print-config`` shows the result)
and reports every problem at once, each as ``file:line:col  key.path: message``.

```yaml
name: digits-mlp          # run name; default: the config file's stem
seed: 0                   # seeds weights, the split, shuffling and synthetic data; default 0
device: cpu               # cpu | cuda | cuda:N; default cpu
data:                     # required
  dataset: digits         # required: digits | npz | csv | idx | sine | spirals, or an import
                          #   path to a function returning a Dataset (its kwargs: the other keys)
  # digits:  flatten (false)               -> x (N, 1, 8, 8) or (N, 64), y int64 classes 0..9
  # npz:     path (required), x_key (x), y_key (y)
  # csv:     path (required), target_column (-1; index or header name), header (auto), delimiter (,)
  # idx:     images (required), labels (null), flatten (false)
  # sine:    n (200), noise (0.0), seed (the run's seed)      -> x (N, 1), y = sin(x) (N, 1)
  # spirals: n_per_class (100), classes (3), noise (0.2), seed (the run's seed)
  # file paths are relative to the config file (to the working directory when given by --set)
  val_split: 0.2          # seeded hold-out fraction of the data, 0 <= f < 1 (0: no validation)
  # val: {dataset: ...}   # or a separate validation set (then val_split is not used)
model:                    # required. EITHER a list of layers applied in order (a Sequential) ...
  - Flatten                               # a bare name is a layer without arguments
  - {type: Linear, in_features: auto, out_features: 64}
  - {type: ReLU, name: act}               # `name` names the layer (default: its index)
  - {type: Linear, in_features: auto, out_features: 10}
# ... OR named blocks with explicit inputs, for non-sequential nets:
#  model:
#    blocks:
#      stem: {type: Linear, in_features: 64, out_features: 32}   # first block reads `input`
#      act:  {type: ReLU}                    # default input: the block written before it
#      fc:   {type: Linear, in_features: auto, out_features: 32, input: act}
#      res:  {type: Add, inputs: [act, fc]}  # merge blocks: Add, Mul, Concat (dim, default 1)
#      head: {type: Linear, in_features: 32, out_features: 10, input: res}
#    output: head                            # default: the last block
#  (a block may only read blocks written before it, or `input`)
loss: CrossEntropyLoss    # a name or {type: CrossEntropyLoss, label_smoothing: 0.1}; case, `_` and
                          # the `Loss` suffix are optional (cross_entropy, mse, nll, bce, l1, ...);
                          # default: MSELoss for `sine`, else CrossEntropyLoss
optimizer:                # default {type: Adam, lr: 0.001}; a bare name is accepted
  type: SGD               # SGD | Adam | AdamW | RMSprop | Adagrad, or an import path
  lr: 0.1                 # ... and any other keyword argument of the optimizer
  momentum: 0.9
  param_groups:           # optional: fnmatch patterns on named_parameters() names; a parameter
    - {params: "*.bias", weight_decay: 0}   # joins the first group it matches, the rest form the
                                            # default group (the optimizer's own settings)
scheduler:                # optional (default null): any autogradcli.optim.lr_scheduler class
  type: StepLR
  step_size: 10
  gamma: 0.5
  interval: epoch         # epoch | step: when scheduler.step() is called (OneCycleLR: step)
  # ReduceLROnPlateau takes `monitor: val_loss` (default); OneCycleLR's total_steps is filled in
hooks:                    # optional list; Checkpoint and NonFiniteGuard are added when absent
  - {type: EarlyStopping, monitor: val_loss, patience: 5, mode: min, min_delta: 0.0}
  - {type: Checkpoint, monitor: val_loss, mode: min, save_last: true, save_best: true}
  - LRLogger
  - {type: GradNormLogger, norm_type: 2.0}
  - {type: NonFiniteGuard}                   # `enabled: false` turns Checkpoint/NonFiniteGuard off
  - {type: my_hooks.py:PrintEpoch, every: 2} # a user callback class (or function) by import path;
                                             # the other keys are its keyword arguments
  - {type: forward, layer: "2", fn: my_hooks.py:log_stats}
                          # a module hook on a layer (its named_modules() name):
                          # forward_pre | forward | full_backward, `fn` the hook function
  # monitor: train_loss | val_loss | train_acc | val_acc;  mode: min | max
train:
  epochs: 10              # >= 1
  batch_size: 64          # >= 1
  eval_every: 1           # validate every N epochs
  grad_clip: null         # max global grad norm, or null
  shuffle: true
  drop_last: false
output:
  dir: runs               # the run goes to <dir>/<name>/
```

Layer ``type``: a layer of ``autogradcli.nn`` (``Linear``, ``Conv2d``, ``ReLU``, ``MaxPool2d``,
``BatchNorm1d``, ``LSTM``, ...), a merge block, or an import path ``package.module:Name`` or
``path/to/file.py:Name`` to the user's own ``nn.Module`` subclass (the other keys are its keyword
arguments, checked against its ``__init__``) or ``autograd.Function`` subclass. A Function becomes
a layer computing ``Name.apply(x, *params, *args)``:

```yaml
  - type: my_functions.py:LinearFunction
    params: {weight: [10, auto], bias: [10]}      # learnable tensors by shape, in this order
    init: {weight: kaiming_uniform, bias: zeros}  # nn.init names (with or without _), a number
                                                  # (constant) or {type: normal, std: 0.02}
    args: [0.5]                                   # optional non-tensor arguments after them
```

Sizes may be ``auto`` (``in_features``, ``in_channels``, ``num_features``, ``num_channels``,
``normalized_shape``, ``input_size``, and any dim of a Function's ``params``): the model is built
one layer at a time and a batch of the data is run through it, so each layer learns its input's
size (the channel dim for ``in_channels``/``num_features``/``num_channels``, the last dim else).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any

from ..nn.function_layer import init_function, init_names
from . import registry
from .errors import ConfigIssue, Path, did_you_mean
from .imports import ImportPathError, is_import_path, resolve_import
from .source import SourceMap

REQUIRED: Any = object()

TOP_KEYS = (
    "name",
    "seed",
    "device",
    "data",
    "model",
    "loss",
    "optimizer",
    "scheduler",
    "hooks",
    "train",
    "output",
)

# dataset name -> its keys and their defaults ("seed" is filled from the run's seed)
DATASETS: dict[str, dict[str, Any]] = {
    "digits": {"flatten": False},
    "npz": {"path": REQUIRED, "x_key": "x", "y_key": "y"},
    "csv": {"path": REQUIRED, "target_column": -1, "header": "auto", "delimiter": ","},
    "idx": {"images": REQUIRED, "labels": None, "flatten": False},
    "sine": {"n": 200, "noise": 0.0, "seed": None},
    "spirals": {"n_per_class": 100, "classes": 3, "noise": 0.2, "seed": None},
}
PATH_KEYS = ("path", "images", "labels")  # dataset keys that are file paths

MONITORS = ("train_loss", "val_loss", "train_acc", "val_acc")
BUILTIN_HOOKS: dict[str, dict[str, Any]] = {
    "EarlyStopping": {"monitor": "val_loss", "patience": 5, "mode": "min", "min_delta": 0.0},
    "Checkpoint": {
        "monitor": "val_loss",
        "mode": "min",
        "save_last": True,
        "save_best": True,
        "enabled": True,
    },
    "LRLogger": {},
    "GradNormLogger": {"norm_type": 2.0},
    "NonFiniteGuard": {"enabled": True},
}
DEFAULT_HOOKS = ("Checkpoint", "NonFiniteGuard")
MODULE_HOOKS = ("forward_pre", "forward", "full_backward")

TRAIN_DEFAULTS: dict[str, Any] = {
    "epochs": 10,
    "batch_size": 64,
    "eval_every": 1,
    "grad_clip": None,
    "shuffle": True,
    "drop_last": False,
}
OUTPUT_DEFAULTS: dict[str, Any] = {"dir": "runs"}
DEFAULT_OPTIMIZER: dict[str, Any] = {"type": "Adam", "lr": 0.001}

LAYER_RESERVED = ("type", "name")
BLOCK_RESERVED = ("type", "input", "inputs")
FUNCTION_KEYS = ("params", "init", "args")

_DEVICE = re.compile(r"^(cpu|cuda(:\d+)?)$")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


# ----------------------------------------------------------------------------- value checks
def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _show(v: Any) -> str:
    return f"{v!r} ({type(v).__name__})" if v is not None else "null"


Check = tuple[str, Callable[[Any], bool]]
POS_INT: Check = ("a positive integer", lambda v: _is_int(v) and v >= 1)
NONNEG_INT: Check = ("a non-negative integer", lambda v: _is_int(v) and v >= 0)
INT: Check = ("an integer", _is_int)
NUMBER: Check = ("a number", _is_num)
NONNEG_NUMBER: Check = ("a non-negative number", lambda v: _is_num(v) and v >= 0)
BOOL: Check = ("true or false", lambda v: isinstance(v, bool))
STR: Check = ("a string", lambda v: isinstance(v, str) and v != "")
FRACTION: Check = ("a number in [0, 1)", lambda v: _is_num(v) and 0 <= v < 1)
OPT_POS_NUMBER: Check = ("null or a positive number", lambda v: v is None or (_is_num(v) and v > 0))
OPT_STR: Check = ("null or a string", lambda v: v is None or (isinstance(v, str) and v != ""))


def _check_for_default(default: Any) -> Check | None:
    if isinstance(default, bool):
        return BOOL
    if _is_int(default):
        return INT
    if isinstance(default, float):
        return NUMBER
    if isinstance(default, str):
        return STR
    return None


DATASET_CHECKS: dict[tuple[str, str], Check] = {
    ("sine", "n"): POS_INT,
    ("sine", "noise"): NONNEG_NUMBER,
    ("spirals", "n_per_class"): POS_INT,
    ("spirals", "classes"): POS_INT,
    ("spirals", "noise"): NONNEG_NUMBER,
    ("csv", "target_column"): (
        "an integer, a column name or null",
        lambda v: v is None or _is_int(v) or isinstance(v, str),
    ),
    ("csv", "header"): ("true, false or auto", lambda v: isinstance(v, bool) or v == "auto"),
    ("npz", "y_key"): OPT_STR,
    ("idx", "labels"): OPT_STR,
}
HOOK_CHECKS: dict[str, Check] = {
    "monitor": (f"one of {', '.join(MONITORS)}", lambda v: v in MONITORS),
    "mode": ("min or max", lambda v: v in ("min", "max")),
    "patience": NONNEG_INT,
    "min_delta": NONNEG_NUMBER,
    "save_last": BOOL,
    "save_best": BOOL,
    "enabled": BOOL,
    "norm_type": ("a positive number or inf", lambda v: _is_num(v) and v > 0),
}


# ----------------------------------------------------------------------------- the validator
class Validator:
    """Checks a config's plain data and returns it with every default filled in."""

    def __init__(self, source: SourceMap, base_dir: str, stem: str) -> None:
        self.source = source
        self.base_dir = base_dir
        self.stem = stem
        self.issues: list[ConfigIssue] = []

    # ------------------------------------------------------------------ helpers
    def error(self, path: Path, message: str) -> None:
        self.issues.append(self.source.issue(path, message))

    def base_for(self, path: Path) -> str:
        """The directory a relative file path at ``path`` is relative to."""
        return os.getcwd() if self.source.where(path).startswith("--set") else self.base_dir

    def resolve(self, text: str, path: Path) -> Any:
        """The object at import path ``text``, or None after reporting why there is none."""
        try:
            return resolve_import(text, self.base_for(path))
        except ImportPathError as err:
            self.error(path, str(err))
            return None

    def mapping(self, value: Any, path: Path, what: str) -> dict[str, Any] | None:
        if isinstance(value, dict):
            return value
        self.error(path, f"{what} must be a mapping, got {_show(value)}")
        return None

    def unknown_keys(self, spec: dict, path: Path, allowed: Any, what: str) -> None:
        allowed = list(allowed)
        for key in spec:
            if key not in allowed:
                self.error(
                    path + (key,),
                    f"unknown key {key!r} for {what}{did_you_mean(str(key), allowed)}",
                )

    def check(self, value: Any, path: Path, check: Check | None) -> bool:
        if check is None or check[1](value):
            return True
        self.error(path, f"expected {check[0]}, got {_show(value)}")
        return False

    def fields(
        self,
        spec: dict[str, Any],
        path: Path,
        defaults: dict[str, Any],
        checks: dict[str, Check],
        what: str,
    ) -> dict[str, Any]:
        """Unknown keys, missing required keys, types; ``defaults`` filled in."""
        self.unknown_keys(spec, path, defaults, what)
        out: dict[str, Any] = {}
        for key, default in defaults.items():
            if key in spec:
                value = spec[key]
                self.check(value, path + (key,), checks.get(key, _check_for_default(default)))
                out[key] = value
            elif default is REQUIRED:
                self.error(path, f"{what} needs {key!r}")
            else:
                out[key] = default
        return out

    def kwargs(self, spec: dict, path: Path, target: Any, what: str, skip: tuple = ()) -> None:
        """The keys of ``spec`` (less ``skip``) as keyword arguments of ``target``: unknown
        names (with did-you-mean) and missing required ones."""
        sig = registry.signature_of(target, skip)
        given = [k for k in spec if k not in skip]
        if not sig.var_keyword:
            accepted = list(sig.names)
            for key in given:
                if key not in accepted:
                    hint = did_you_mean(str(key), accepted)
                    if not hint:
                        hint = (
                            f" (it takes {', '.join(accepted)})" if accepted else " (it takes none)"
                        )
                    self.error(path + (key,), f"{what} got an unexpected argument {key!r}{hint}")
        missing = [n for n in sig.required if n not in spec]
        if missing:
            names = ", ".join(repr(n) for n in missing)
            self.error(
                path, f"{what} is missing required argument{'s' * (len(missing) > 1)} {names}"
            )

    # ------------------------------------------------------------------ sections
    def validate(self, data: Any) -> dict[str, Any]:
        root = self.mapping(data, (), "the config")
        if root is None:
            return {}
        self.unknown_keys(root, (), TOP_KEYS, "the config")
        out: dict[str, Any] = {}
        name = root.get("name", self.stem)
        if self.check(name, ("name",), STR) and (
            "/" in name or "\\" in name or name in (".", "..")
        ):
            self.error(("name",), f"the run name {name!r} must not be a path")
        out["name"] = name
        out["seed"] = root.get("seed", 0)
        self.check(out["seed"], ("seed",), NONNEG_INT)
        device = root.get("device", "cpu")
        if not (isinstance(device, str) and _DEVICE.match(device)):
            self.error(("device",), f"expected cpu, cuda or cuda:N, got {_show(device)}")
        out["device"] = device
        seed = out["seed"] if _is_int(out["seed"]) else 0

        if "data" not in root:
            self.error((), "the config needs 'data' (e.g. data: {dataset: digits})")
            out["data"] = None
        else:
            out["data"] = self.dataset(root["data"], ("data",), seed, top=True)
        spec = out["data"] if isinstance(out["data"], dict) else {}
        split = spec.get("val_split")
        # when the data section is broken, don't add errors about missing validation data
        has_val = (
            spec.get("val") is not None
            or not _is_num(split)
            or split > 0
            or not isinstance(spec.get("dataset"), str)
        )
        if "model" not in root:
            self.error((), "the config needs 'model' (a list of layers, or {blocks: ...})")
            out["model"] = None
        else:
            out["model"] = self.model(root["model"], ("model",))
        dataset_name = (out["data"] or {}).get("dataset")
        default_loss = "MSELoss" if dataset_name == "sine" else "CrossEntropyLoss"
        out["loss"] = self.loss(root.get("loss", default_loss), ("loss",))
        out["optimizer"] = self.optimizer(
            root.get("optimizer", dict(DEFAULT_OPTIMIZER)), ("optimizer",)
        )
        out["scheduler"] = self.scheduler(root.get("scheduler"), ("scheduler",), has_val)
        out["hooks"] = self.hooks(root.get("hooks", []), ("hooks",), has_val)
        train = self.mapping(root.get("train", {}), ("train",), "'train'")
        checks = {
            "epochs": POS_INT,
            "batch_size": POS_INT,
            "eval_every": POS_INT,
            "grad_clip": OPT_POS_NUMBER,
        }
        out["train"] = self.fields(train or {}, ("train",), TRAIN_DEFAULTS, checks, "'train'")
        output = self.mapping(root.get("output", {}), ("output",), "'output'")
        out["output"] = self.fields(output or {}, ("output",), OUTPUT_DEFAULTS, {}, "'output'")
        return out

    def dataset(self, value: Any, path: Path, seed: int, top: bool) -> dict[str, Any] | None:
        spec = self.mapping(value, path, f"'{path[-1]}'")
        if spec is None:
            return None
        if "dataset" not in spec:
            self.error(path, f"'{path[-1]}' needs 'dataset' (one of {', '.join(DATASETS)})")
            return dict(spec)
        name = spec["dataset"]
        extra = {"val_split": FRACTION, "val": None} if top else {}
        out: dict[str, Any]
        if is_import_path(name):
            fn = self.resolve(name, path + ("dataset",))
            if fn is not None and not callable(fn):
                self.error(path + ("dataset",), f"{name!r} is not callable")
            out = {k: v for k, v in spec.items() if k not in extra}
            if fn is not None and callable(fn):
                rest = {k: v for k, v in out.items() if k != "dataset"}
                self.kwargs(rest, path, fn, f"dataset {name}")
        elif not isinstance(name, str) or name not in DATASETS:
            hint = did_you_mean(str(name), DATASETS) if isinstance(name, str) else ""
            self.error(
                path + ("dataset",),
                f"unknown dataset {_show(name) if not isinstance(name, str) else repr(name)}"
                f"{hint}; expected one of {', '.join(DATASETS)} or an import path",
            )
            return dict(spec)
        else:
            defaults = {"dataset": name, **DATASETS[name]}
            checks = {k[1]: c for k, c in DATASET_CHECKS.items() if k[0] == name}
            checks["seed"] = (
                "null or a non-negative integer",
                lambda v: v is None or (_is_int(v) and v >= 0),
            )
            for key in PATH_KEYS:
                checks.setdefault(key, STR)
            body = {k: v for k, v in spec.items() if k not in extra}
            allowed = dict(defaults)
            if top:
                allowed.update({"val_split": 0, "val": 0})
            self.unknown_keys(spec, path, allowed, f"dataset {name!r}")
            out = self.fields(
                {k: v for k, v in body.items() if k in defaults},
                path,
                defaults,
                checks,
                f"dataset {name!r}",
            )
            if "seed" in out and out["seed"] is None:
                out["seed"] = seed if top else seed + 1
        if top:
            if "val" in spec and spec["val"] is not None:
                if "val_split" in spec:
                    self.error(path + ("val_split",), "give either 'val_split' or 'val', not both")
                out["val_split"] = None
                out["val"] = self.dataset(spec["val"], path + ("val",), seed, top=False)
            else:
                out["val_split"] = spec.get("val_split", 0.2)
                self.check(out["val_split"], path + ("val_split",), FRACTION)
                out["val"] = None
        return out

    # ------------------------------------------------------------------ model
    def model(self, value: Any, path: Path) -> Any:
        if isinstance(value, list):
            if not value:
                self.error(path, "the model has no layers")
            layers = [self.layer(item, path + (i,), in_graph=False) for i, item in enumerate(value)]
            seen: set[str] = set()
            for i, layer in enumerate(layers):
                n = layer.get("name")
                if n is None:
                    continue
                if n in seen:
                    self.error(path + (i, "name"), f"duplicate layer name {n!r}")
                seen.add(n)
            return layers
        if isinstance(value, dict) and "blocks" in value:
            return self.graph(value, path)
        self.error(
            path,
            f"the model must be a list of layers or a mapping with 'blocks', got {_show(value)}",
        )
        return value

    def graph(self, spec: dict, path: Path) -> dict[str, Any]:
        self.unknown_keys(spec, path, ("blocks", "output"), "a block model")
        blocks = self.mapping(spec["blocks"], path + ("blocks",), "'blocks'")
        if not blocks:
            if blocks is not None:
                self.error(path + ("blocks",), "the model has no blocks")
            return dict(spec)
        out: dict[str, Any] = {}
        previous = "input"
        for name, block in blocks.items():
            bpath = path + ("blocks", name)
            if not isinstance(name, str) or not _IDENT.match(name) or name == "input":
                self.error(
                    bpath,
                    f"bad block name {name!r}: use a Python identifier other than 'input'",
                )
            resolved = self.layer(block, bpath, in_graph=True)
            if "input" in resolved and "inputs" in resolved:
                self.error(bpath, "give either 'input' or 'inputs', not both")
            if "inputs" in resolved:
                inputs = resolved["inputs"]
                ok = isinstance(inputs, list) and inputs and all(isinstance(i, str) for i in inputs)
                if not ok:
                    self.error(
                        bpath + ("inputs",), f"expected a list of block names, got {_show(inputs)}"
                    )
                    inputs = []
            else:
                inputs = [resolved.get("input", previous)]
                if not isinstance(inputs[0], str):
                    self.error(bpath + ("input",), f"expected a block name, got {_show(inputs[0])}")
                    inputs = []
            key = "inputs" if "inputs" in resolved else "input"
            for j, ref in enumerate(inputs):
                if ref != "input" and ref not in out:
                    rpath = bpath + ((key, j) if key == "inputs" else (key,))
                    later = ref in blocks
                    self.error(
                        rpath,
                        f"block {ref!r} is written after {name!r}: a block reads only earlier blocks"
                        if later
                        else f"unknown block {ref!r}{did_you_mean(ref, ['input', *out])}",
                    )
            if key == "input":
                resolved["input"] = inputs[0] if inputs else previous
            out[name] = resolved
            previous = str(name)
        output = spec.get("output", previous)
        if output not in out:
            self.error(
                path + ("output",),
                f"unknown block {output!r}{did_you_mean(str(output), list(out))}",
            )
        return {"blocks": out, "output": output}

    def layer(self, value: Any, path: Path, in_graph: bool) -> dict[str, Any]:
        if isinstance(value, str):
            value = {"type": value}
        spec = self.mapping(value, path, "a layer")
        if spec is None:
            return {}
        spec = dict(spec)
        if "type" not in spec:
            self.error(path, "the layer needs a 'type'")
            return spec
        kind = spec["type"]
        reserved = BLOCK_RESERVED if in_graph else LAYER_RESERVED
        if not in_graph and "name" in spec:
            n = spec["name"]
            if isinstance(n, int) and not isinstance(n, bool):
                spec["name"] = n = str(n)
            if not (isinstance(n, str) and n and "." not in n):
                self.error(path + ("name",), f"expected a layer name without dots, got {_show(n)}")
        target = self.layer_target(kind, path + ("type",))
        if target is None:
            return spec
        rest = {k: v for k, v in spec.items() if k not in reserved}
        if registry.is_function_class(target):
            self.function_layer(spec, rest, path, target)
            return spec
        what = f"{kind if not is_import_path(kind) else target.__name__}"
        for key, v in rest.items():
            if v == "auto" and key not in registry.AUTO_KEYS:
                self.error(
                    path + (key,),
                    f"'auto' works only for {', '.join(registry.AUTO_KEYS)}",
                )
        self.kwargs(rest, path, target, what)
        return spec

    def layer_target(self, kind: Any, path: Path) -> Any:
        if not isinstance(kind, str):
            self.error(path, f"expected a layer name or import path, got {_show(kind)}")
            return None
        if is_import_path(kind):
            obj = self.resolve(kind, path)
            if obj is None:
                return None
            if registry.is_module_class(obj) or registry.is_function_class(obj):
                return obj
            self.error(
                path,
                f"{kind!r} is {_describe(obj)}, not an nn.Module or autograd.Function subclass",
            )
            return None
        types = registry.layer_types()
        if kind in types:
            return types[kind]
        self.error(path, f"unknown layer type {kind!r}{did_you_mean(kind, types)}")
        return None

    def function_layer(self, spec: dict, rest: dict, path: Path, fn: Any) -> None:
        self.unknown_keys(rest, path, FUNCTION_KEYS, f"Function layer {fn.__name__}")
        params = spec.get("params", {})
        n_params = 0
        if self.mapping(params, path + ("params",), "'params'") is not None:
            n_params = len(params)
            for pname, shape in params.items():
                ppath = path + ("params", pname)
                if not isinstance(pname, str) or not _IDENT.match(pname):
                    self.error(ppath, f"bad parameter name {pname!r}: use a Python identifier")
                dims = [shape] if not isinstance(shape, list) else shape
                if not all((_is_int(d) and d >= 1) or d == "auto" for d in dims):
                    self.error(
                        ppath,
                        f"expected a shape (a list of positive ints or auto), got {_show(shape)}",
                    )
        init = spec.get("init", {})
        if self.mapping(init, path + ("init",), "'init'") is not None:
            for pname, ispec in init.items():
                ipath = path + ("init", pname)
                if isinstance(params, dict) and pname not in params:
                    self.error(
                        ipath, f"no parameter {pname!r} in params{did_you_mean(str(pname), params)}"
                    )
                name = ispec.get("type") if isinstance(ispec, dict) else ispec
                if _is_num(name):
                    continue
                try:
                    init_function(name)
                except KeyError:
                    self.error(
                        ipath + (("type",) if isinstance(ispec, dict) else ()),
                        f"unknown init {name!r}{did_you_mean(str(name), init_names())}; expected "
                        "a number or an nn.init name",
                    )
        args = spec.get("args", [])
        if not isinstance(args, list):
            self.error(path + ("args",), f"expected a list, got {_show(args)}")
            args = []
        lo, hi = registry.function_arity(fn)
        given = 1 + n_params + len(args)
        if given < lo or (hi is not None and given > hi):
            want = f"{lo}" if lo == hi else f"{lo} to {hi}" if hi is not None else f"at least {lo}"
            self.error(
                path,
                f"{fn.__name__}.forward takes {want} arguments after ctx, but the layer passes "
                f"{given} (the input, {n_params} params, {len(args)} args)",
            )

    # ------------------------------------------------------------------ training parts
    def named_spec(self, value: Any, path: Path, what: str) -> dict[str, Any] | None:
        if isinstance(value, str):
            return {"type": value}
        spec = self.mapping(value, path, what)
        if spec is None:
            return None
        if "type" not in spec:
            self.error(path, f"{what} needs a 'type'")
            return None
        return dict(spec)

    def named_target(
        self, spec: dict, path: Path, table: dict, what: str, base: type, suffix: str = ""
    ) -> Any:
        kind = spec["type"]
        if not isinstance(kind, str):
            self.error(path + ("type",), f"expected a {what} name, got {_show(kind)}")
            return None
        if is_import_path(kind):
            obj = self.resolve(kind, path + ("type",))
            if obj is not None and not (isinstance(obj, type) and issubclass(obj, base)):
                self.error(
                    path + ("type",),
                    f"{kind!r} is {_describe(obj)}, not {'an' if base.__name__[0] in 'AEIOU' else 'a'} {base.__name__} subclass",
                )
                return None
            return obj
        key = registry.loose_lookup(kind, table, suffix)
        if key is None:
            self.error(
                path + ("type",),
                f"unknown {what} {kind!r}{did_you_mean(kind, table)}; expected one of "
                f"{', '.join(sorted(table))} or an import path",
            )
            return None
        spec["type"] = key
        return table[key]

    def loss(self, value: Any, path: Path) -> Any:
        from ..nn.module import Module

        spec = self.named_spec(value, path, "the loss")
        if spec is None:
            return value
        target = self.named_target(spec, path, registry.loss_types(), "loss", Module, "loss")
        if target is not None:
            self.kwargs({k: v for k, v in spec.items() if k != "type"}, path, target, spec["type"])
        return spec

    def optimizer(self, value: Any, path: Path) -> Any:
        from ..optim import Optimizer

        spec = self.named_spec(value, path, "the optimizer")
        if spec is None:
            return value
        target = self.named_target(spec, path, registry.optimizer_types(), "optimizer", Optimizer)
        groups = spec.get("param_groups", [])
        if not isinstance(groups, list):
            self.error(path + ("param_groups",), f"expected a list of groups, got {_show(groups)}")
            groups = []
        spec["param_groups"] = groups
        if target is None:
            return spec
        name = spec["type"]
        self.kwargs(
            {k: v for k, v in spec.items() if k not in ("type", "param_groups")},
            path,
            target,
            name,
            ("params",),
        )
        sig = registry.signature_of(target, ("params",))
        for i, group in enumerate(groups):
            gpath = path + ("param_groups", i)
            if self.mapping(group, gpath, "a param group") is None:
                continue
            pats = group.get("params")
            if pats is None:
                self.error(
                    gpath, "the param group needs 'params' (fnmatch patterns on parameter names)"
                )
            elif not (
                isinstance(pats, str)
                or (isinstance(pats, list) and pats and all(isinstance(p, str) for p in pats))
            ):
                self.error(
                    gpath + ("params",),
                    f"expected a pattern or a list of patterns, got {_show(pats)}",
                )
            if not sig.var_keyword:
                for key in group:
                    if key != "params" and key not in sig.names:
                        self.error(
                            gpath + (key,),
                            f"{name} got an unexpected argument {key!r}{did_you_mean(str(key), sig.names)}",
                        )
        return spec

    def scheduler(self, value: Any, path: Path, has_val: bool) -> Any:
        if value is None:
            return None
        from ..optim.lr_scheduler import LRScheduler, ReduceLROnPlateau

        spec = self.named_spec(value, path, "the scheduler")
        if spec is None:
            return value
        target = self.named_target(spec, path, registry.scheduler_types(), "scheduler", object)
        if target is not None and not (
            isinstance(target, type) and issubclass(target, (LRScheduler, ReduceLROnPlateau))
        ):
            self.error(
                path + ("type",), f"{spec['type']!r} is {_describe(target)}, not an LR scheduler"
            )
            target = None
        one_cycle = target is not None and target.__name__ == "OneCycleLR"
        spec.setdefault("interval", "step" if one_cycle else "epoch")
        if spec["interval"] not in ("epoch", "step"):
            self.error(
                path + ("interval",), f"expected epoch or step, got {_show(spec['interval'])}"
            )
        plateau = target is not None and issubclass(target, ReduceLROnPlateau)
        if plateau:
            spec.setdefault("monitor", "val_loss")
            self.monitor(spec["monitor"], path + ("monitor",), has_val)
        elif "monitor" in spec and target is not None:
            self.error(
                path + ("monitor",), f"only ReduceLROnPlateau takes 'monitor', not {spec['type']}"
            )
        if target is None:
            return spec
        kw = {k: v for k, v in spec.items() if k not in ("type", "interval", "monitor")}
        self.kwargs(kw, path, target, spec["type"], ("optimizer",))
        if isinstance(kw.get("lr_lambda"), str):
            fn = self.resolve(kw["lr_lambda"], path + ("lr_lambda",))
            if fn is not None and not callable(fn):
                self.error(path + ("lr_lambda",), f"{kw['lr_lambda']!r} is not callable")
        return spec

    def monitor(self, value: Any, path: Path, has_val: bool) -> None:
        if (
            self.check(value, path, HOOK_CHECKS["monitor"])
            and value.startswith("val_")
            and not has_val
        ):
            self.error(path, f"{value} needs validation data (val_split > 0 or val)")

    def hooks(self, value: Any, path: Path, has_val: bool) -> list[Any]:
        if value is None:
            value = []
        if not isinstance(value, list):
            self.error(path, f"expected a list of hooks, got {_show(value)}")
            return []
        out: list[Any] = []
        names = [*BUILTIN_HOOKS, *MODULE_HOOKS]
        for i, item in enumerate(value):
            hpath = path + (i,)
            spec = self.named_spec(item, hpath, "a hook")
            if spec is None:
                out.append(item)
                continue
            kind = spec["type"]
            if not isinstance(kind, str):
                self.error(
                    hpath + ("type",), f"expected a hook name or import path, got {_show(kind)}"
                )
            elif kind in BUILTIN_HOOKS:
                checks = dict(HOOK_CHECKS)
                spec = {
                    "type": kind,
                    **self.fields(
                        {k: v for k, v in spec.items() if k != "type"},
                        hpath,
                        BUILTIN_HOOKS[kind],
                        checks,
                        kind,
                    ),
                }
                if (
                    (spec.get("monitor") in MONITORS and spec.get("enabled", True))
                    and spec["monitor"].startswith("val_")
                    and not has_val
                ):
                    if kind == "Checkpoint" and "monitor" not in item:
                        spec["monitor"] = "train_loss"
                    else:
                        self.monitor(spec["monitor"], hpath + ("monitor",), has_val)
            elif kind in MODULE_HOOKS:
                self.unknown_keys(spec, hpath, ("type", "layer", "fn"), f"a {kind} hook")
                layer = spec.get("layer")
                if _is_int(layer):
                    spec["layer"] = layer = str(layer)
                if not isinstance(layer, str):
                    self.error(
                        hpath + ("layer",) if "layer" in spec else hpath,
                        f"a {kind} hook needs 'layer' (a named_modules() name)",
                    )
                fn = spec.get("fn")
                if not is_import_path(fn):
                    self.error(
                        hpath + ("fn",) if "fn" in spec else hpath,
                        f"a {kind} hook needs 'fn' (an import path to the hook function)",
                    )
                else:
                    obj = self.resolve(fn, hpath + ("fn",))
                    if obj is not None and not callable(obj):
                        self.error(hpath + ("fn",), f"{fn!r} is {_describe(obj)}, not a function")
            elif is_import_path(kind):
                obj = self.resolve(kind, hpath + ("type",))
                if obj is not None:
                    if not callable(obj):
                        self.error(
                            hpath + ("type",),
                            f"{kind!r} is {_describe(obj)}, not a class or function",
                        )
                    elif isinstance(obj, type):
                        self.kwargs(
                            {k: v for k, v in spec.items() if k != "type"}, hpath, obj, obj.__name__
                        )
            else:
                self.error(
                    hpath + ("type",),
                    f"unknown hook {kind!r}{did_you_mean(kind, names)}; expected one of "
                    f"{', '.join(names)} or an import path",
                )
            out.append(spec)
        present = {h.get("type") for h in out if isinstance(h, dict)}
        for kind in DEFAULT_HOOKS:
            if kind not in present:
                spec = {"type": kind, **BUILTIN_HOOKS[kind]}
                if spec.get("monitor", "").startswith("val_") and not has_val:
                    spec["monitor"] = "train_loss"
                out.append(spec)
        return out


def _describe(obj: Any) -> str:
    if isinstance(obj, type):
        return f"the class {obj.__name__}"
    if callable(obj):
        return f"the function {getattr(obj, '__name__', repr(obj))}"
    name = type(obj).__name__
    return f"{'an' if name[0].lower() in 'aeiou' else 'a'} {name}"
