"""load_config: schema validation with exact positions, did-you-mean, overrides, defaults."""

from __future__ import annotations

import os
import shutil
import textwrap

import pytest
import yaml

from autogradcli.config import (
    ConfigError,
    format_path,
    load_config,
    load_config_text,
)
from autogradcli.data.kinds import KINDS

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")
CONFIGS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "configs")


@pytest.fixture
def cfg(tmp_path, monkeypatch):
    """write(text) -> path of c.yaml in a temp dir next to a copy of user_layers.py."""
    shutil.copy(os.path.join(FIXTURES, "user_layers.py"), tmp_path / "user_layers.py")
    monkeypatch.syspath_prepend(FIXTURES)  # for agrad_userpkg.layers:Name

    def write(text: str) -> str:
        path = tmp_path / "c.yaml"
        path.write_text(textwrap.dedent(text))
        return str(path)

    return write


def issues(path: str, overrides=()) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_config(path, overrides)
    prefix = os.path.dirname(path) + os.sep
    return [str(i).replace(prefix, "") for i in info.value.issues]


MINIMAL = """\
data: {dataset: digits}
model:
  - Flatten
  - {type: Linear, in_features: auto, out_features: 10}
"""


def test_defaults_filled(cfg):
    c = load_config(cfg(MINIMAL))
    d = c.data
    assert d["name"] == "c" and d["seed"] == 0 and d["device"] == "cpu"
    assert d["data"] == {
        "dataset": "digits",
        "flatten": False,
        "val_split": 0.2,
        "val": None,
        "test_split": 0.0,
        "test": None,
    }
    assert d["model"][0] == {"type": "Flatten"}
    assert d["loss"] == {"type": "CrossEntropyLoss"}
    assert d["optimizer"] == {"type": "Adam", "lr": 0.001, "param_groups": []}
    assert d["scheduler"] is None
    assert d["hooks"] == [
        {
            "type": "Checkpoint",
            "monitor": "val_loss",
            "mode": "auto",
            "save_last": True,
            "save_best": True,
            "enabled": True,
            "background": None,
        },
        {"type": "NonFiniteGuard", "enabled": True},
    ]
    assert d["train"] == {
        "epochs": 10,
        "batch_size": 64,
        "eval_every": 1,
        "grad_clip": None,
        "shuffle": True,
        "drop_last": False,
        "num_workers": 0,
    }
    assert d["output"] == {"dir": "runs"}
    assert c.text == MINIMAL and c.path.endswith("c.yaml")
    assert c.source.where(("model", 1, "out_features")) == f"{c.path}:4:39"


def test_defaults_for_sine_and_no_validation(cfg):
    c = load_config(cfg("seed: 3\ndata: {dataset: sine, val_split: 0}\nmodel: [Identity]\n"))
    assert c.data["loss"] == {"type": "MSELoss"}
    assert c.data["data"] == {
        "dataset": "sine",
        "n": 200,
        "noise": 0.0,
        "seed": 3,
        "val_split": 0,
        "val": None,
        "test_split": 0.0,
        "test": None,
    }
    # Checkpoint falls back to the training loss without validation data
    assert c.data["hooks"][0]["monitor"] == "train_loss"


def test_val_dataset_gets_its_own_seed(cfg):
    c = load_config(cfg("data: {dataset: sine, val: {dataset: sine, n: 50}}\nmodel: [Identity]\n"))
    assert c.data["data"]["seed"] == 0 and c.data["data"]["val"]["seed"] == 1
    assert c.data["data"]["val_split"] is None


def test_to_yaml_round_trips(cfg):
    path = cfg(MINIMAL)
    c = load_config(path, ["optimizer={type: SGD, lr: 0.1}"])
    again = load_config_text(c.to_yaml(), path)
    assert again.data == c.data
    assert yaml.safe_load(c.to_yaml())["optimizer"]["type"] == "SGD"


def test_to_yaml_with_a_val_dataset_round_trips(cfg):
    """The resolved config of a run with ``data.val`` (``val_split: null`` filled in) loads
    again, as eval, predict, generate and --resume load it."""
    c = load_config(cfg("data: {dataset: sine, val: {dataset: sine, n: 50}}\nmodel: [Identity]\n"))
    again = load_config_text(c.to_yaml(), "resolved.yaml")
    assert again.data == c.data


def test_to_yaml_absolute_paths(cfg, tmp_path):
    c = load_config(
        cfg(
            "data: {dataset: npz, path: d.npz}\nmodel: [{type: user_layers.py:MulConstant, args: [2]}]\n"
        )
    )
    out = yaml.safe_load(c.to_yaml(absolute_paths=True))
    assert out["data"]["path"] == str(tmp_path / "d.npz")
    assert out["model"][0]["type"] == f"{tmp_path / 'user_layers.py'}:MulConstant"
    assert yaml.safe_load(c.to_yaml())["data"]["path"] == "d.npz"


def test_unknown_keys_and_types_all_reported_at_once(cfg):
    path = cfg(
        """\
        name: t
        seeed: 1
        device: gpu
        data: {dataset: digits, val_split: 1.5}
        model:
          - {type: Flatten}
        train: {epochs: ten, batch_sise: 3, grad_clip: -1}
        output: {dir: 5}
        """
    )
    assert issues(path) == [
        "c.yaml:2:1  seeed: unknown key 'seeed' for the config (did you mean 'seed'?)",
        "c.yaml:3:1  device: expected cpu, cuda or cuda:N, got 'gpu' (str)",
        "c.yaml:4:25  data.val_split: expected a number in [0, 1), got 1.5 (float)",
        "c.yaml:7:9  train.epochs: expected a positive integer, got 'ten' (str)",
        "c.yaml:7:22  train.batch_sise: unknown key 'batch_sise' for 'train' (did you mean 'batch_size'?)",
        "c.yaml:7:37  train.grad_clip: expected null or a positive number, got -1 (int)",
        "c.yaml:8:10  output.dir: expected a string, got 5 (int)",
    ]


def test_missing_sections(cfg):
    assert issues(cfg("seed: 1\n")) == [
        "c.yaml:1:1  the config needs 'data' (e.g. data: {dataset: digits})",
        "c.yaml:1:1  the config needs 'model' (a list of layers, or {blocks: ...})",
    ]
    assert issues(cfg("- 1\n")) == ["c.yaml:1:1  the config must be a mapping, got [1] (list)"]


def test_yaml_syntax_error_position(cfg):
    (msg,) = issues(cfg("data: {dataset: digits\nmodel: [a]\n"))
    assert msg.startswith("c.yaml:2:6  invalid YAML")


def test_duplicate_key(cfg):
    assert issues(cfg("seed: 1\nseed: 2\n")) == ["c.yaml:2:1  seed: duplicate key"]


def test_dataset_errors(cfg):
    path = cfg(
        """\
        data:
          dataset: digts
        model: [Flatten]
        """
    )

    names = ", ".join(KINDS)  # every registered kind, the built-in ones first
    assert names.startswith("digits, npz, csv, idx, sine, spirals")
    assert issues(path) == [
        "c.yaml:2:3  data.dataset: unknown dataset 'digts' (did you mean 'digits'?); expected one "
        f"of {names} or an import path"
    ]
    path = cfg(
        """\
        data: {dataset: npz, x_key: 3, flaten: true, val: {dataset: sine, n: 0}, val_split: 0.1}
        model: [Flatten]
        """
    )
    assert issues(path) == [
        "c.yaml:1:1  data: dataset 'npz' needs 'path'",
        "c.yaml:1:22  data.x_key: expected a string, got 3 (int)",
        "c.yaml:1:32  data.flaten: unknown key 'flaten' for dataset 'npz'",
        "c.yaml:1:67  data.val.n: expected a positive integer, got 0 (int)",
        "c.yaml:1:74  data.val_split: give either 'val_split' or 'val', not both",
    ]


def test_layer_errors_with_did_you_mean(cfg):
    path = cfg(
        """\
        data: {dataset: digits}
        model:
          - {type: Flatten}
          - {type: Linaer, in_features: 64, out_features: 10}
          - {type: Linear, in_feature: 64, out_features: 10}
          - {type: ReLU, inplace: auto}
          - {type: Dropout, p: 0.5, name: a.b}
          - {in_features: 3}
          - 7
        """
    )
    assert issues(path) == [
        "c.yaml:4:6  model.1.type: unknown layer type 'Linaer' (did you mean 'Linear'?)",
        "c.yaml:5:5  model.2: Linear is missing required argument 'in_features'",
        "c.yaml:5:20  model.2.in_feature: Linear got an unexpected argument 'in_feature' (did you "
        "mean 'in_features'?)",
        "c.yaml:6:18  model.3.inplace: 'auto' works only for in_features, input_size, "
        "normalized_shape, in_channels, num_features, num_channels, out_features, num_embeddings",
        "c.yaml:7:29  model.4.name: expected a layer name without dots, got 'a.b' (str)",
        "c.yaml:8:5  model.5: the layer needs a 'type'",
        "c.yaml:9:5  model.6: a layer must be a mapping, got 7 (int)",
    ]


def test_rnn_signature_checked(cfg):
    path = cfg("data: {dataset: digits}\nmodel: [{type: LSTM, input_size: auto, hiden_size: 4}]\n")
    assert issues(path) == [
        "c.yaml:2:9  model.0: LSTM is missing required argument 'hidden_size'",
        "c.yaml:2:40  model.0.hiden_size: LSTM got an unexpected argument 'hiden_size' (did you "
        "mean 'hidden_size'?)",
    ]


def test_import_path_errors(cfg, tmp_path):
    (tmp_path / "broken.py").write_text("raise RuntimeError('boom')\n")
    path = cfg(
        """\
        data: {dataset: digits}
        model:
          - {type: nothere.py:X}
          - {type: broken.py:X}
          - {type: user_layers.py:Scal, in_features: 3}
          - {type: user_layers.py:helper}
          - {type: user_layers.py:NOT_A_CLASS}
          - {type: no_such_pkg.mod:X}
          - {type: agrad_userpkg.layers:Doubel}
          - {type: agrad_userpkg.layers:Double, x: 1}
          - {type: "user_layers.py:"}
        """
    )
    assert issues(path) == [
        "c.yaml:3:6  model.0.type: file 'nothere.py' not found (looked for nothere.py)",
        "c.yaml:4:6  model.1.type: importing 'broken.py' failed: RuntimeError: boom\n"
        "    at broken.py:1: raise RuntimeError('boom')",
        "c.yaml:5:6  model.2.type: 'user_layers.py' has no 'Scal' (did you mean 'Scale'?)",
        "c.yaml:6:6  model.3.type: 'user_layers.py:helper' is the function helper, not an "
        "nn.Module or autograd.Function subclass",
        "c.yaml:7:6  model.4.type: 'user_layers.py:NOT_A_CLASS' is an int, not an nn.Module or "
        "autograd.Function subclass",
        "c.yaml:8:6  model.5.type: module 'no_such_pkg.mod' not found",
        "c.yaml:9:6  model.6.type: 'agrad_userpkg.layers' has no 'Doubel' (did you mean 'Double'?)",
        "c.yaml:10:41  model.7.x: Double got an unexpected argument 'x' (it takes none)",
        "c.yaml:11:6  model.8.type: bad import path 'user_layers.py:': expected "
        "'package.module:Name' or 'path/to/file.py:Name'",
    ]


def test_user_module_kwargs_checked(cfg):
    path = cfg("data: {dataset: digits}\nmodel:\n  - {type: user_layers.py:Scale, factr: 2}\n")
    assert issues(path) == [
        "c.yaml:3:5  model.0: Scale is missing required argument 'in_features'",
        "c.yaml:3:34  model.0.factr: Scale got an unexpected argument 'factr' (did you mean "
        "'factor'?)",
    ]


def test_function_layer_errors(cfg):
    path = cfg(
        """\
        data: {dataset: digits}
        model:
          - {type: user_layers.py:MulConstant}
          - {type: user_layers.py:MulConstant, args: [2.0], params: {w: [3]}}
          - type: user_layers.py:LinearFunction
            params: {weight: [3, auto], bias: [x]}
            init: {weight: kaiming, b: zeros}
            scale: 2
          - {type: user_layers.py:LinearFunction, params: {weight: [3, 2]}, args: 1}
        """
    )
    assert issues(path) == [
        "c.yaml:3:5  model.0: MulConstant.forward takes 2 arguments after ctx, but the layer "
        "passes 1 (the input, 0 params, 0 args)",
        "c.yaml:4:5  model.1: MulConstant.forward takes 2 arguments after ctx, but the layer "
        "passes 3 (the input, 1 params, 1 args)",
        "c.yaml:6:33  model.2.params.bias: expected a shape (a list of positive ints or auto), "
        "got ['x'] (list)",
        "c.yaml:7:12  model.2.init.weight: unknown init 'kaiming' (did you mean "
        "'kaiming_normal'?); expected a number or an nn.init name",
        "c.yaml:7:29  model.2.init.b: no parameter 'b' in params",
        "c.yaml:8:5  model.2.scale: unknown key 'scale' for Function layer LinearFunction",
        "c.yaml:9:69  model.3.args: expected a list, got 1 (int)",
    ]


def test_block_model_errors(cfg):
    path = cfg(
        """\
        data: {dataset: sine}
        model:
          blocks:
            a: {type: Linear, in_features: 1, out_features: 4, input: inptu}
            b: {type: ReLU, input: c}
            c: {type: Add, inputs: [a, b, zz]}
            input: {type: ReLU}
            d: {type: Concat, dim: 1, inputs: a, input: b}
          output: e
          outptu: a
        """
    )
    assert issues(path) == [
        "c.yaml:4:56  model.blocks.a.input: unknown block 'inptu' (did you mean 'input'?)",
        "c.yaml:5:21  model.blocks.b.input: block 'c' is written after 'b': a block reads only "
        "earlier blocks",
        "c.yaml:6:35  model.blocks.c.inputs.2: unknown block 'zz'",
        "c.yaml:7:5  model.blocks.input: bad block name 'input': use a Python identifier other "
        "than 'input'",
        "c.yaml:8:5  model.blocks.d: give either 'input' or 'inputs', not both",
        "c.yaml:8:31  model.blocks.d.inputs: expected a list of block names, got 'a' (str)",
        "c.yaml:9:3  model.output: unknown block 'e'",
        "c.yaml:10:3  model.outptu: unknown key 'outptu' for a block model (did you mean 'output'?)",
    ]
    assert issues(cfg("data: {dataset: sine}\nmodel: {layers: []}\n")) == [
        "c.yaml:2:1  model: the model must be a list of layers or a mapping with 'blocks', got "
        "{'layers': []} (dict)"
    ]


def test_block_default_inputs_chain(cfg):
    c = load_config(
        cfg(
            "data: {dataset: sine}\nmodel:\n  blocks:\n    a: {type: Linear, in_features: 1, "
            "out_features: 2}\n    b: ReLU\n"
        )
    )
    assert c.data["model"] == {
        "blocks": {
            "a": {"type": "Linear", "in_features": 1, "out_features": 2, "input": "input"},
            "b": {"type": "ReLU", "input": "a"},
        },
        "output": "b",
    }


def test_training_part_names(cfg):
    path = cfg(
        """\
        data: {dataset: digits}
        model: [Flatten]
        loss: cross_entropi
        optimizer: {type: Adm, lr: 0.1, momentum: 0.9}
        scheduler: {type: StepRL, step_size: 2}
        """
    )
    got = issues(path)
    assert len(got) == 3
    assert got[0].startswith(
        "c.yaml:3:1  loss.type: unknown loss 'cross_entropi' (did you mean 'CrossEntropyLoss'?); "
        "expected one of BCELoss, BCEWithLogitsLoss, CrossEntropyLoss,"
    )
    assert got[1].startswith(
        "c.yaml:4:13  optimizer.type: unknown optimizer 'Adm' (did you mean 'Adam'?); expected "
        "one of ASGD, Adadelta, Adagrad, Adam, AdamW, Adamax, NAdam, RAdam, RMSprop, Rprop, SGD"
    )
    assert got[2].startswith(
        "c.yaml:5:13  scheduler.type: unknown scheduler 'StepRL' (did you mean 'StepLR'?)"
    )


def issues_prefix(path: str, prefix: str) -> str:
    """The one issue of ``path`` starting with ``prefix`` (lists of names may grow)."""
    (hit,) = [i for i in issues(path) if i.startswith(prefix)]
    return hit


def test_training_part_kwargs(cfg):
    path = cfg(
        """\
        data: {dataset: digits}
        model: [Flatten]
        loss: {type: CrossEntropyLoss, label_smothing: 0.1}
        optimizer:
          type: SGD
          lr: 0.1
          momentun: 0.9
          param_groups:
            - {params: "*.bias", weight_decay: 0, lrr: 1}
            - {weight_decay: 0}
            - {params: 3}
        scheduler: {type: StepLR, gamma: 0.5, interval: hourly, monitor: val_loss}
        """
    )
    assert issues(path) == [
        "c.yaml:3:32  loss.label_smothing: CrossEntropyLoss got an unexpected argument "
        "'label_smothing' (did you mean 'label_smoothing'?)",
        "c.yaml:7:3  optimizer.momentun: SGD got an unexpected argument 'momentun' (did you mean "
        "'momentum'?)",
        "c.yaml:9:43  optimizer.param_groups.0.lrr: SGD got an unexpected argument 'lrr' (did you "
        "mean 'lr'?)",
        "c.yaml:10:7  optimizer.param_groups.1: the param group needs 'params' (fnmatch patterns "
        "on parameter names)",
        "c.yaml:11:8  optimizer.param_groups.2.params: expected a pattern or a list of patterns, "
        "got 3 (int)",
        "c.yaml:12:1  scheduler: StepLR is missing required argument 'step_size'",
        "c.yaml:12:39  scheduler.interval: expected epoch or step, got 'hourly' (str)",
        "c.yaml:12:57  scheduler.monitor: only ReduceLROnPlateau takes 'monitor', not StepLR",
    ]


def test_loss_and_optimizer_shorthands(cfg):
    c = load_config(cfg(MINIMAL + "loss: cross_entropy\noptimizer: adamw\n"))
    assert c.data["loss"] == {"type": "CrossEntropyLoss"}
    assert c.data["optimizer"]["type"] == "AdamW"
    for short, full in [("mse", "MSELoss"), ("nll", "NLLLoss"), ("smooth_l1", "SmoothL1Loss")]:
        c = load_config(cfg(MINIMAL + f"loss: {{type: {short}}}\n"))
        assert c.data["loss"]["type"] == full
    c = load_config(cfg(MINIMAL + "scheduler: {type: reduce_lr_on_plateau, patience: 2}\n"))
    assert c.data["scheduler"] == {
        "type": "ReduceLROnPlateau",
        "patience": 2,
        "interval": "epoch",
        "monitor": "val_loss",
    }
    c = load_config(cfg(MINIMAL + "scheduler: {type: OneCycleLR, max_lr: 0.1}\n"))
    assert c.data["scheduler"]["interval"] == "step"


def test_hook_errors(cfg):
    path = cfg(
        """\
        data: {dataset: digits, val_split: 0}
        model: [Flatten]
        hooks:
          - {type: EarlyStoping}
          - {type: EarlyStopping, patience: -1, mode: up, monitor: val_los}
          - {type: EarlyStopping, monitor: val_acc}
          - {type: forward, layer: 0}
          - {type: forward, layer: 0, fn: user_layers.py:NOT_A_CLASS}
          - {type: user_layers.py:PrintEpoch, every: 2, prefx: a}
          - LRLoger
        """
    )
    assert issues(path) == [
        "c.yaml:4:6  hooks.0.type: unknown hook 'EarlyStoping' (did you mean 'EarlyStopping'?); "
        "expected one of EarlyStopping, Checkpoint, LRLogger, GradNormLogger, NonFiniteGuard, TensorBoard, "
        "forward_pre, forward, full_backward or an import path",
        "c.yaml:5:27  hooks.1.patience: expected a non-negative integer, got -1 (int)",
        "c.yaml:5:41  hooks.1.mode: expected auto, min, max, min! or max!, got 'up' (str)",
        "c.yaml:5:51  hooks.1.monitor: expected train_ or val_ and loss, acc, top5, f1_macro, mae, "
        "rmse, r2 or perplexity, got 'val_los' (str)",
        "c.yaml:6:27  hooks.2.monitor: val_acc needs validation data (val_split > 0 or val)",
        "c.yaml:7:5  hooks.3: a forward hook needs 'fn' (an import path to the hook function)",
        "c.yaml:8:31  hooks.4.fn: 'user_layers.py:NOT_A_CLASS' is an int, not a function",
        "c.yaml:9:49  hooks.5.prefx: PrintEpoch got an unexpected argument 'prefx' (did you mean "
        "'prefix'?)",
        issues_prefix(
            path, "c.yaml:10:5  hooks.6.type: unknown hook 'LRLoger' (did you mean 'LRLogger'?)"
        ),
    ]


def test_default_hooks_not_duplicated(cfg):
    c = load_config(cfg(MINIMAL + "hooks: [{type: Checkpoint, enabled: false}, LRLogger]\n"))
    assert [h["type"] for h in c.data["hooks"]] == ["Checkpoint", "LRLogger", "NonFiniteGuard"]
    assert c.data["hooks"][0]["enabled"] is False
    c = load_config(
        cfg(MINIMAL + "hooks: [{type: forward, layer: 1, fn: user_layers.py:log_stats}]\n")
    )
    assert c.data["hooks"][0] == {"type": "forward", "layer": "1", "fn": "user_layers.py:log_stats"}


# ----------------------------------------------------------------------------- overrides
def test_overrides_apply(cfg):
    c = load_config(
        cfg(MINIMAL),
        [
            "train.epochs=3",
            "model.1.out_features=12",
            "optimizer={type: SGD, lr: 0.5, momentum: 0.9}",
            "data.val_split=0.25",
            "name=run-2",
            "model.2={type: ReLU}",  # appending at len(list)
            "scheduler.type=StepLR",  # a null section becomes a mapping
            "scheduler.step_size=2",
        ],
    )
    d = c.data
    assert d["train"]["epochs"] == 3 and d["model"][1]["out_features"] == 12
    assert d["optimizer"] == {"type": "SGD", "lr": 0.5, "momentum": 0.9, "param_groups": []}
    assert d["data"]["val_split"] == 0.25 and d["name"] == "run-2"
    assert d["model"][2] == {"type": "ReLU"}
    assert d["scheduler"]["type"] == "StepLR" and d["scheduler"]["step_size"] == 2
    assert c.source.where(("model", 1, "out_features")) == "--set #2"
    assert c.source.where(("optimizer", "lr")) == "--set #3"
    assert c.source.where(("model", 0)) == f"{c.path}:3:5"


def test_override_errors_name_the_override(cfg):
    path = cfg(MINIMAL)
    assert issues(
        path,
        [
            "train.epochs=3",
            "model.5.out_features=3",
            "nope",
            "model.0.type.x=1",
            "train.epochs=many",
            "model.1={type: Linear, in_features: auto, out_feature: 3}",
            "optimizer.typo=1",  # creates the optimizer section: it has no type
            "model.x=1",
        ],
    ) == [
        "--set #2  model.5: index 5 is out of range: model has 2 items",
        "--set #3  expected key.path=value, got 'nope'",
        "--set #4  model.0.type: model.0 is a str, it has no key 'type'",
        "--set #5  train.epochs: expected a positive integer, got 'many' (str)",
        "--set #6  model.1.out_feature: Linear got an unexpected argument 'out_feature' (did you "
        "mean 'out_features'?)",
        "--set #6  model.1: Linear is missing required argument 'out_features'",
        "--set #7  optimizer: the optimizer needs a 'type'",
        "--set #8  model.x: model is a list: use an index, not 'x'",
    ]


def test_override_data_path_relative_to_cwd(cfg, tmp_path, monkeypatch):
    path = cfg(MINIMAL)
    monkeypatch.chdir(FIXTURES)
    c = load_config(path, ["data={dataset: npz, path: d.npz}"])
    assert c.file_path(("data", "path"), "d.npz") == os.path.join(FIXTURES, "d.npz")
    c = load_config(cfg(MINIMAL.replace("digits", "npz, path: d.npz")))
    assert c.file_path(("data", "path"), "d.npz") == str(tmp_path / "d.npz")


def test_missing_config_file(tmp_path):
    with pytest.raises(ConfigError) as info:
        load_config(str(tmp_path / "nope.yaml"))
    assert "cannot read the config" in str(info.value)


def test_format_path():
    assert format_path(("model", 2, "type")) == "model.2.type"
    assert format_path(()) == "<root>"


@pytest.mark.parametrize(
    "name",
    ["digits_mlp", "digits_cnn", "legendre_sin", "custom_relu", "linear_function", "residual"],
)
def test_shipped_configs_validate(name):
    c = load_config(os.path.join(CONFIGS, f"{name}.yaml"))
    assert c.data["name"]
    assert (
        load_config_text(c.to_yaml(absolute_paths=True), "/elsewhere/x.yaml").data["model"]
        is not None
    )


@pytest.mark.parametrize(
    "override",
    [
        "data.dataset=[1, 2]",
        "loss=[1]",
        "optimizer={type: [1]}",
        "model.1.type=[1]",
        "scheduler={type: {a: 1}}",
        "hooks=[{type: [1]}]",
        "model=[[1]]",
        "train.epochs=[1]",
        "optimizer.param_groups=[{params: [1]}]",
    ],
)
def test_values_of_the_wrong_kind_are_config_errors_not_crashes(override):
    from autogradcli.config import ConfigError, load_config

    with pytest.raises(ConfigError) as err:
        load_config(os.path.join(CONFIGS, "digits_mlp.yaml"), [override])
    assert "--set #1" in str(err.value)
