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
  test_split: 0.0         # seeded test fraction of the data, carved FIRST (then val_split splits
                          #   what remains); 0: no test set
  # test: {dataset: ...}  # or a separate test set (then test_split is not used)
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
  - {type: EarlyStopping, monitor: val_loss, patience: 5, mode: auto, min_delta: 0.0}
  - {type: Checkpoint, monitor: val_loss, mode: auto, save_last: true, save_best: true}
  - LRLogger
  - {type: GradNormLogger, norm_type: 2.0}
  - {type: NonFiniteGuard}                   # `enabled: false` turns Checkpoint/NonFiniteGuard off
  - {type: TensorBoard, log_dir: tensorboard} # scalars per epoch in <run>/tensorboard (needs the
                                             # `tensorboard` extra: tensorboardX)
  - {type: my_hooks.py:PrintEpoch, every: 2} # a user callback class (or function) by import path;
                                             # the other keys are its keyword arguments
  - {type: forward, layer: "2", fn: my_hooks.py:log_stats}
                          # a module hook on a layer (its named_modules() name):
                          # forward_pre | forward | full_backward, `fn` the hook function
  # monitor: train_ or val_ + loss | acc | top5 | f1_macro | mae | rmse | r2 | perplexity;  mode: auto (from the metric:
  #   *_acc max, *_loss min) | min | max; a mode against a known metric's direction is refused
  #   unless written with `!` (mode: min!)
metrics: [accuracy]       # logged per epoch as train_<m> and val_<m> (accuracy: *_acc):
                          # accuracy | top5 | f1_macro | mae | rmse | r2 | perplexity; default:
                          # accuracy for a class loss (and perplexity for next-token targets),
                          # else mae
init_from:                # optional (default null): start from pretrained weights
  path: base.safetensors  # required: a .safetensors file, a state dict file (.pt/.pth/.bin,
                          #   autogradcli.save), a checkpoint or a run folder (relative to the
                          #   config file; to the working directory when given by --set)
  checkpoint: best        # best | last: which checkpoint of a run folder
  map: {"fc.": "head."}   # rename the source's keys by prefix (null drops them)
  strict: true            # missing or unexpected keys are an error (a shape mismatch always is)
  freeze: ["0.*"]         # parameter names (fnmatch) kept as loaded: not given to the optimizer
train:
  epochs: 10              # >= 1
  batch_size: 64          # >= 1
  eval_every: 1           # validate every N epochs
  grad_clip: null         # max global grad norm, or null
  shuffle: true
  drop_last: false
  num_workers: 0          # DataLoader worker processes loading batches (0: in the main process)
output:
  dir: runs               # each run goes to <dir>/<name>-<YYYYmmdd-HHMMSS>-<id>/
sweep:                    # optional, read by `agrad sweep` only (`agrad train` ignores it)
  metric: val_acc         # the metric to optimise (default val_loss); mode: auto (from the metric)
  trials: 20              # >= 1
  sampler: tpe            # tpe | random | grid (grid: choice and int/stepped spaces only)
  pruner: median          # median | none; pruner_warmup (1 epoch), pruner_startup (3 trials)
  params:                 # dotted key paths, as --set writes them, and their search space
    optimizer.lr: {loguniform: [1.0e-4, 1.0e-1]}
    model.1.out_features: {choice: [32, 64, 128]}
    train.batch_size: {int: [32, 128], step: 32}     # also {uniform: [a, b]}, `log: true`
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
Two sizes come from the data instead (what its kind learned from the training rows):
``out_features: auto`` on the last layer is the number of classes (a next-token text task's
vocabulary), ``num_embeddings: auto`` the vocabulary size; a kind that does not know the
size is an error at that key.
"""

# This module is the schema: the documentation above and the tables below (keys, defaults,
# per-key checks). The code that applies them is ``validator.Validator`` and the
# ``validate_*`` modules, one per section.

from __future__ import annotations

import inspect
from collections.abc import Iterator, Mapping
from typing import Any

from ..data.kinds import KINDS
from ..data.kinds.function import function_path_settings
from ..trainer.metrics import MODE_VALUES, logged_names, monitors
from ..trainer.trainer import Trainer
from .checks import (
    BOOL,
    FRACTION,
    INT,
    NONNEG_INT,
    NONNEG_NUMBER,
    NUMBER,
    OPT_POS_NUMBER,
    OPT_STR,
    POS_INT,
    STR,
    Check,
    is_int,
    is_num,
)

__all__ = [
    "BLOCK_RESERVED",
    "BOOL",
    "DATASETS",
    "DATASET_CHECKS",
    "DEFAULT_OPTIMIZER",
    "FRACTION",
    "FUNCTION_KEYS",
    "HOOK_CHECKS",
    "INIT_FROM_CHECKS",
    "INIT_FROM_DEFAULTS",
    "INT",
    "LAYER_RESERVED",
    "MODULE_HOOKS",
    "NONNEG_INT",
    "NONNEG_NUMBER",
    "NUMBER",
    "OPT_POS_NUMBER",
    "OPT_STR",
    "OUTPUT_DEFAULTS",
    "POS_INT",
    "REQUIRED",
    "STR",
    "TOP_KEYS",
    "TRAIN_CHECKS",
    "TRAIN_DEFAULTS",
    "Check",
    "hook_checks",
    "monitor_check",
    "path_settings_of",
    "trainer_default",
]

REQUIRED: Any = object()  # a default meaning "this key must be given"


def trainer_default(name: str) -> Any:
    """The default of ``Trainer``'s argument ``name``: defined there, once."""
    return inspect.signature(Trainer).parameters[name].default


def _either(names: Any) -> str:
    """``a, b or c``."""
    names = list(names)
    return ", ".join(names[:-1]) + f" or {names[-1]}" if len(names) > 1 else "".join(names)


TOP_KEYS = (
    "name",
    "seed",
    "device",
    "data",
    "model",
    "init_from",
    "loss",
    "optimizer",
    "scheduler",
    "hooks",
    "metrics",
    "train",
    "output",
    "sweep",  # read by `agrad sweep` only (config/validate_sweep.py)
)


class _KindSettings(Mapping):
    """dataset name -> its settings and their defaults, read from its kind's ``__init__``
    signature (``REQUIRED`` for an argument without a default), as ``registry.hook_defaults``
    reads a callback's; live, so a kind registered later is listed too."""

    def __getitem__(self, name: str) -> dict[str, Any]:
        from .registry import signature_of

        sig = signature_of(KINDS[name])
        return {n: sig.defaults.get(n, REQUIRED) for n in sig.names}

    def __iter__(self) -> Iterator[str]:
        return iter(list(KINDS))

    def __len__(self) -> int:
        return len(KINDS)


DATASETS: Mapping[str, dict[str, Any]] = _KindSettings()  # "seed" null: the run's seed


def path_settings_of(name: Any, fn: Any = None) -> tuple[str, ...]:
    """The settings of dataset ``name`` that name files or folders (resolved by the config's
    path rule): its kind's ``path_settings``, or the path arguments of the dataset function
    ``fn`` an import path names (``data.kinds.function.function_path_settings``)."""
    if fn is not None:
        return function_path_settings(fn)
    kind = KINDS.get(name) if isinstance(name, str) else None
    return tuple(kind.path_settings) if kind is not None else ()


MODULE_HOOKS = ("forward_pre", "forward", "full_backward")

# epochs, eval_every and grad_clip default as the Trainer's own arguments do
TRAIN_DEFAULTS: dict[str, Any] = {
    "epochs": trainer_default("epochs"),
    "batch_size": 64,
    "eval_every": trainer_default("eval_every"),
    "grad_clip": trainer_default("grad_clip"),
    "shuffle": True,
    "drop_last": False,
    "num_workers": 0,
}
OUTPUT_DEFAULTS: dict[str, Any] = {"dir": "runs"}
INIT_FROM_DEFAULTS: dict[str, Any] = {
    "path": REQUIRED,
    "checkpoint": "best",
    "map": None,
    "strict": True,
    "freeze": None,
}
INIT_FROM_CHECKS: dict[str, Check] = {
    "path": STR,
    "checkpoint": ("best or last", lambda v: v in ("best", "last")),
}
DEFAULT_OPTIMIZER: dict[str, Any] = {"type": "Adam", "lr": 0.001}

LAYER_RESERVED = ("type", "name", "tie")  # keys of a layer that are not constructor arguments
BLOCK_RESERVED = ("type", "input", "inputs", "tie")  # the same for a block of a block model
FUNCTION_KEYS = ("params", "init", "args")  # the keys of an autograd.Function layer

# Checks for keys whose default's type is not the whole rule (the rest follow their default).
DATASET_CHECKS: dict[tuple[str, str], Check] = {
    ("sine", "n"): POS_INT,
    ("sine", "noise"): NONNEG_NUMBER,
    ("spirals", "n_per_class"): POS_INT,
    ("spirals", "classes"): POS_INT,
    ("spirals", "noise"): NONNEG_NUMBER,
    ("csv", "target_column"): (
        "an integer, a column name or null",
        lambda v: v is None or is_int(v) or isinstance(v, str),
    ),
    ("csv", "header"): ("true, false or auto", lambda v: isinstance(v, bool) or v == "auto"),
    ("npz", "y_key"): OPT_STR,
    ("idx", "labels"): OPT_STR,
}
HOOK_CHECKS: dict[str, Check] = {  # the monitor's check: monitor_check()
    "mode": (_either(MODE_VALUES), lambda v: v in MODE_VALUES),
    "patience": NONNEG_INT,
    "min_delta": NONNEG_NUMBER,
    "save_last": BOOL,
    "save_best": BOOL,
    "enabled": BOOL,
    "norm_type": ("a positive number or inf", lambda v: is_num(v) and v > 0),
    "log_dir": STR,
}
TRAIN_CHECKS: dict[str, Check] = {
    "epochs": POS_INT,
    "batch_size": POS_INT,
    "eval_every": POS_INT,
    "grad_clip": OPT_POS_NUMBER,
    "num_workers": NONNEG_INT,
}


def monitor_check() -> Check:
    """The check of a hook's ``monitor``: a name the run logs (``trainer.metrics.monitors()``,
    read when used, so a registered metric counts)."""
    return (f"train_ or val_ and {_either(logged_names())}", lambda v: v in monitors())


def hook_checks() -> dict[str, Check]:
    """``HOOK_CHECKS`` with the ``monitor`` check."""
    return {**HOOK_CHECKS, "monitor": monitor_check()}
