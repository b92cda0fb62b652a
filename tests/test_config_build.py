"""build_experiment: shipped configs, auto sizes, block graphs, Function layers, user code, errors."""

from __future__ import annotations

import os
import shutil
import sys
import textwrap

import numpy as np
import pytest

import autogradcli as ag
from autogradcli import nn
from autogradcli.config import (
    ConfigError,
    Experiment,
    HookSpec,
    build_experiment,
    load_config,
)
from autogradcli.config.blocks import Graph
from autogradcli.nn.function_layer import FunctionLayer

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")
CONFIGS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "configs")


@pytest.fixture
def cfg(tmp_path, monkeypatch):
    shutil.copy(os.path.join(FIXTURES, "user_layers.py"), tmp_path / "user_layers.py")
    monkeypatch.syspath_prepend(FIXTURES)

    def write(text: str, overrides=()) -> Experiment:
        path = tmp_path / "c.yaml"
        path.write_text(textwrap.dedent(text))
        return load_config(str(path), overrides)

    return write


def build_issues(config) -> list[str]:
    with pytest.raises(ConfigError) as info:
        build_experiment(config)
    prefix = os.path.dirname(config.path) + os.sep
    return [str(i).replace(prefix, "") for i in info.value.issues]


def n_params(model) -> int:
    return sum(p.numel() for p in model.parameters())


def shipped(name: str) -> Experiment:
    return build_experiment(load_config(os.path.join(CONFIGS, f"{name}.yaml")))


# ----------------------------------------------------------------------------- shipped configs
@pytest.mark.parametrize(
    "name, params, task, out",
    [
        ("digits_mlp", 64 * 64 + 64 + 64 * 10 + 10, "classification", (10,)),
        (
            "digits_cnn",
            (1 * 16 * 9 + 16) + (16 * 32 * 9 + 32) + (32 * 2 * 2 * 64 + 64) + (64 * 10 + 10),
            "classification",
            (10,),
        ),
        ("legendre_sin", 4, "regression", (1,)),
        ("custom_relu", 2 * 100 + 100 + 100 * 3 + 3, "classification", (3,)),
        ("linear_function", 64 * 64 + 64 + 64 * 10 + 10, "classification", (10,)),
        ("residual", 3 * (64 * 64 + 64) + 2 * 64 + 64 * 10 + 10, "classification", (10,)),
    ],
)
def test_shipped_configs_build(name, params, task, out):
    exp = shipped(name)
    assert n_params(exp.model) == params
    assert exp.task == task and exp.output_shape == out
    x, y = next(iter(exp.train_loader))
    assert exp.model(x).shape == (len(x), *out)
    assert exp.loss_fn(exp.model(x), y).dim() == 0
    assert exp.val_loader is not None and exp.model.training
    # the config's own hooks in order, then the two defaults every run gets
    assert [h.target for h in exp.hooks] == [*CONFIG_HOOKS.get(name, []), *DEFAULT_HOOKS]


DEFAULT_HOOKS = ["Checkpoint", "NonFiniteGuard"]
CONFIG_HOOKS = {"digits_mlp": ["EarlyStopping", "LRLogger"]}  # read off configs/digits_mlp.yaml


def _fit(exp: Experiment, epochs: int) -> tuple[float, float]:
    for _ in range(epochs):
        exp.model.train()
        for x, y in exp.train_loader:
            exp.optimizer.zero_grad()
            exp.loss_fn(exp.model(x), y).backward()
            exp.optimizer.step()
        if exp.scheduler is not None:
            exp.scheduler.step()
    exp.model.eval()
    total = correct = n = 0
    with ag.no_grad():
        for x, y in exp.val_loader:
            out = exp.model(x)
            total += exp.loss_fn(out, y).item() * len(y)
            n += len(y)
            if exp.task == "classification":
                correct += (out.argmax(1) == y).sum().item()
    return total / n, correct / n


def test_digits_mlp_reaches_95_percent():
    exp = shipped("digits_mlp")
    _, acc = _fit(exp, 6)
    assert acc >= 0.95


def test_legendre_fit_converges():
    exp = shipped("legendre_sin")
    loss, _ = _fit(exp, 4)
    assert loss < 0.02
    assert [n for n, _ in exp.model.named_parameters()] == ["0.a", "0.b", "0.c", "0.d"]


def test_builds_are_reproducible():
    a, b = shipped("residual"), shipped("residual")
    for (na, pa), (nb, pb) in zip(a.model.named_parameters(), b.model.named_parameters()):
        assert na == nb
        np.testing.assert_array_equal(pa.detach().numpy(), pb.detach().numpy())
    ya = [y.numpy() for _, y in a.train_loader]
    yb = [y.numpy() for _, y in b.train_loader]
    assert all((u == v).all() for u, v in zip(ya, yb))
    va = [y.numpy() for _, y in a.val_loader]
    assert sum(len(v) for v in va) == round(1797 * 0.2)


# ----------------------------------------------------------------------------- auto and shapes
def test_auto_sizes_inferred(cfg):
    exp = build_experiment(
        cfg(
            """\
            data: {dataset: digits}
            model:
              - {type: Conv2d, in_channels: auto, out_channels: 4, kernel_size: 3}
              - {type: BatchNorm2d, num_features: auto}
              - {type: GroupNorm, num_groups: 2, num_channels: auto}
              - Flatten
              - {type: LayerNorm, normalized_shape: auto}
              - {type: Linear, in_features: auto, out_features: 10, name: head}
            """
        )
    )
    m = exp.model
    assert m[0].in_channels == 1 and m[1].num_features == 4 and m[2].num_channels == 4
    assert tuple(m[4].normalized_shape) == (4 * 6 * 6,)
    assert m.head.in_features == 144 and m.head.out_features == 10
    assert exp.input_shape == (1, 8, 8) and exp.output_shape == (10,)


def test_shape_mismatch_is_a_config_error(cfg):
    config = cfg(
        """\
        data: {dataset: digits, flatten: true}
        model:
          - {type: Linear, in_features: 64, out_features: 32}
          - {type: Linear, in_features: 64, out_features: 10}
        """
    )
    assert build_issues(config) == [
        "c.yaml:4:5  model.1: Linear(in_features=64, out_features=10, bias=True) expects inputs "
        "of shape (*, 64); it cannot take an input of shape (8, 32): mat1 and mat2 shapes cannot "
        "be multiplied (8x32 and 64x10)"
    ]


def test_conv_channel_mismatch(cfg):
    config = cfg(
        "data: {dataset: digits}\nmodel:\n  - {type: Conv2d, in_channels: 3, out_channels: 4, "
        "kernel_size: 3}\n"
    )
    (msg,) = build_issues(config)
    assert msg.startswith("c.yaml:3:5  model.0: Conv2d(3, 4, kernel_size=(3, 3), stride=(1, 1)) ")
    assert "expects 3 input channels (dim 1); it cannot take an input of shape (8, 1, 8, 8)" in msg


def test_constructor_failure_and_loss_mismatch(cfg):
    config = cfg(
        """\
        data: {dataset: sine}
        model:
          - {type: Linear, in_features: auto, out_features: 3}
        loss: MSELoss
        """
    )
    (msg,) = build_issues(config)
    assert msg.startswith(
        "c.yaml:4:1  loss: MSELoss cannot compare the model's output (8, 3) with the "
        "targets (8, 1) (autogradcli.float32): "
    )
    config = cfg(
        "data: {dataset: digits}\nmodel:\n  - {type: GroupNorm, num_groups: 3, num_channels: 4}\n"
    )
    (msg,) = build_issues(config)
    assert msg.startswith(
        "c.yaml:3:5  model.0: GroupNorm(num_groups=3, num_channels=4) failed: ValueError: "
    )


def test_auto_on_too_few_dims(cfg):
    config = cfg(
        "data: {dataset: sine}\nmodel:\n  - {type: Flatten, start_dim: 0}\n"
        "  - {type: BatchNorm1d, num_features: auto}\n"
    )
    assert build_issues(config) == [
        "c.yaml:4:25  model.1.num_features: cannot infer num_features from an input of shape (8,)"
    ]


# ----------------------------------------------------------------------------- blocks
class HandResidual(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(64, 32)
        self.fc = nn.Linear(32, 32)
        self.head = nn.Linear(64, 10)

    def forward(self, x):
        h = ag.relu(self.stem(x))
        r = h + self.fc(h)
        return self.head(ag.cat([r, h * h], dim=1))


def test_residual_blocks_match_hand_written_module(cfg):
    exp = build_experiment(
        cfg(
            """\
            data: {dataset: digits, flatten: true}
            model:
              blocks:
                stem: {type: Linear, in_features: auto, out_features: 32}
                act: ReLU
                fc: {type: Linear, in_features: auto, out_features: 32}
                res: {type: Add, inputs: [act, fc]}
                sq: {type: Mul, inputs: [act, act]}
                cat: {type: Concat, inputs: [res, sq]}
                head: {type: Linear, in_features: auto, out_features: 10}
                unused: {type: Linear, in_features: 64, out_features: 2, input: input}
              output: head
            """
        )
    )
    model = exp.model
    assert isinstance(model, Graph)
    assert model.head.in_features == 64
    assert {n for n, _ in model.named_modules() if n} == {
        "stem", "act", "fc", "res", "sq", "cat", "head", "unused"
    }  # fmt: skip
    hand = HandResidual()
    hand.load_state_dict(
        {k: v for k, v in model.state_dict().items() if not k.startswith("unused")}
    )
    x = ag.randn(5, 64)
    np.testing.assert_allclose(model(x).detach().numpy(), hand(x).detach().numpy(), rtol=1e-6)
    model(x).sum().backward()
    assert model.stem.weight.grad is not None and model.unused.weight.grad is None


# ----------------------------------------------------------------------------- Function layers
def test_function_layer_params_init_and_gradients(cfg):
    exp = build_experiment(
        cfg(
            """\
            data: {dataset: digits, flatten: true}
            model:
              - type: user_layers.py:LinearFunction
                params: {weight: [16, auto], bias: [16]}
                init: {weight: {type: normal, std: 0.01}, bias: 0.5}
              - {type: user_layers.py:MulConstant, args: [2.0]}
              - type: user_layers.py:LinearFunction
                params: {weight: [10, auto]}
                init: {weight: zeros_}
            """
        )
    )
    first, mul, last = exp.model
    assert isinstance(first, FunctionLayer) and first.fn.__name__ == "LinearFunction"
    assert tuple(first.weight.shape) == (16, 64) and tuple(last.weight.shape) == (10, 16)
    assert float(first.weight.detach().numpy().std()) == pytest.approx(0.01, rel=0.2)
    np.testing.assert_array_equal(first.bias.detach().numpy(), 0.5)
    np.testing.assert_array_equal(last.weight.detach().numpy(), 0.0)
    assert [n for n, _ in exp.model.named_parameters()] == ["0.weight", "0.bias", "2.weight"]
    x = ag.randn(4, 64)
    expected = 2.0 * (x.numpy() @ first.weight.detach().numpy().T + 0.5)
    np.testing.assert_allclose(mul(first(x)).detach().numpy(), expected, rtol=1e-5, atol=1e-6)
    exp.model(x).sum().backward()
    for p in exp.model.parameters():
        assert p.grad is not None
    # d/dW of sum(2 * W2 (W1 x + b)): W2 = 0, so only W2 gets a nonzero gradient
    assert np.abs(last.weight.grad.numpy()).sum() > 0
    np.testing.assert_array_equal(first.weight.grad.numpy(), 0.0)


def test_function_layer_default_init_is_kaiming_like(cfg):
    exp = build_experiment(
        cfg(
            "data: {dataset: digits, flatten: true}\nmodel:\n"
            "  - {type: user_layers.py:LinearFunction, params: {weight: [10, auto], bias: [10]}}\n"
        )
    )
    w = exp.model[0].weight.detach().numpy()
    b = exp.model[0].bias.detach().numpy()
    bound = 1 / np.sqrt(64)
    assert np.abs(w).max() <= bound + 1e-6 and np.abs(b).max() <= bound + 1e-6
    assert w.std() > bound / 4


# ----------------------------------------------------------------------------- user code
def test_user_module_and_function_by_package_path(cfg):
    exp = build_experiment(
        cfg(
            """\
            data: {dataset: digits, flatten: true}
            model:
              - {type: agrad_userpkg.layers:Double}
              - {type: agrad_userpkg.layers:Square}
              - {type: user_layers.py:Scale, in_features: auto, factor: 0.5}
              - {type: Linear, in_features: auto, out_features: 10}
            """
        )
    )
    double, square, scale, _ = exp.model
    assert type(double).__name__ == "Double" and type(scale).__name__ == "Scale"
    assert isinstance(square, FunctionLayer) and square.fn.__name__ == "Square"
    assert scale.gain.shape == (64,) and scale.factor == 0.5
    x = ag.randn(3, 64)
    np.testing.assert_allclose(
        scale(square(double(x))).detach().numpy(), 0.5 * (2 * x.numpy()) ** 2, rtol=1e-6
    )


def test_same_file_loaded_once(cfg):
    exp = build_experiment(
        cfg(
            "data: {dataset: digits, flatten: true}\nmodel:\n"
            "  - {type: user_layers.py:Scale, in_features: 64}\n"
            "  - {type: ./user_layers.py:Scale, in_features: 64}\n"
        )
    )
    assert type(exp.model[0]) is type(exp.model[1])
    assert "user_layers" not in sys.modules  # loaded under a private name


# ----------------------------------------------------------------------------- training parts
def test_param_groups_and_scheduler(cfg):
    exp = build_experiment(
        cfg(
            """\
            data: {dataset: digits, flatten: true}
            model:
              - {type: Linear, in_features: auto, out_features: 8}
              - {type: LayerNorm, normalized_shape: auto, name: norm}
              - {type: Linear, in_features: auto, out_features: 10}
            optimizer:
              type: SGD
              lr: 0.1
              momentum: 0.9
              weight_decay: 0.01
              param_groups:
                - {params: ["*.bias", "norm.*"], weight_decay: 0}
                - {params: "2.weight", lr: 0.01}
            scheduler: {type: OneCycleLR, max_lr: 0.5}
            train: {epochs: 3, batch_size: 100}
            """
        )
    )
    groups = exp.optimizer.param_groups
    assert exp.param_group_names == [
        ["0.weight"],
        ["0.bias", "norm.weight", "norm.bias", "2.bias"],
        ["2.weight"],
    ]
    assert groups[0]["weight_decay"] == 0.01 and groups[1]["weight_decay"] == 0
    assert groups[2]["weight_decay"] == 0.01
    assert type(exp.scheduler).__name__ == "OneCycleLR" and exp.scheduler_interval == "step"
    assert exp.scheduler.total_steps == 3 * len(exp.train_loader)
    assert len(exp.train_loader) == 15  # 1438 training digits in batches of 100


def test_plateau_scheduler_monitor(cfg):
    exp = build_experiment(
        cfg(
            "data: {dataset: sine}\nmodel: [{type: Linear, in_features: 1, out_features: 1}]\n"
            "scheduler: {type: ReduceLROnPlateau, patience: 1}\n"
        )
    )
    assert type(exp.scheduler).__name__ == "ReduceLROnPlateau"
    assert exp.scheduler_monitor == "val_loss" and exp.scheduler_interval == "epoch"
    assert exp.task == "regression"


def test_param_group_matching_nothing(cfg):
    config = cfg(
        "data: {dataset: sine}\nmodel: [{type: Linear, in_features: 1, out_features: 1}]\n"
        "optimizer: {type: SGD, lr: 0.1, param_groups: [{params: '*.bais'}]}\n"
    )
    assert build_issues(config) == [
        "c.yaml:3:49  optimizer.param_groups.0.params: ['*.bais'] matches no parameter (did you "
        "mean '0.bias'?)"
    ]


def test_hook_specs(cfg):
    exp = build_experiment(
        cfg(
            """\
            data: {dataset: digits, flatten: true}
            model:
              - {type: Linear, in_features: auto, out_features: 10, name: fc}
            hooks:
              - {type: EarlyStopping, patience: 2}
              - {type: user_layers.py:PrintEpoch, every: 2}
              - {type: forward, layer: fc, fn: user_layers.py:log_stats}
              - {type: full_backward, layer: "", fn: user_layers.py:log_stats}
            """
        )
    )
    kinds = [(h.kind, h.path) for h in exp.hooks]
    assert kinds == [
        ("builtin", ("hooks", 0)),
        ("callback", ("hooks", 1)),
        ("forward", ("hooks", 2)),
        ("full_backward", ("hooks", 3)),
        ("builtin", ("hooks", 4)),
        ("builtin", ("hooks", 5)),
    ]
    early, cb, fwd, bwd, ckpt, guard = exp.hooks
    assert early.kwargs == {"monitor": "val_loss", "patience": 2, "mode": "auto", "min_delta": 0.0}
    assert early.where.endswith("c.yaml:5:5")
    assert cb.target.__name__ == "PrintEpoch" and cb.kwargs == {"every": 2}
    assert cb.target(**cb.kwargs).every == 2
    assert isinstance(fwd, HookSpec) and fwd.layer == "fc" and fwd.module is exp.model.fc
    assert bwd.module is exp.model
    fwd.target.calls.clear()
    fwd.module.register_forward_hook(fwd.target)
    exp.model(ag.randn(2, 64))
    assert fwd.target.calls == [(2, 10)]
    assert ckpt.target == "Checkpoint" and guard.target == "NonFiniteGuard"


def test_hook_on_unknown_layer(cfg):
    config = cfg(
        "data: {dataset: digits, flatten: true}\n"
        "model: [{type: Linear, in_features: 64, out_features: 10, name: fc}]\n"
        "hooks: [{type: forward, layer: fcc, fn: user_layers.py:log_stats}]\n"
    )
    assert build_issues(config) == [
        "c.yaml:3:25  hooks.0.layer: the model has no layer 'fcc' (did you mean 'fc'?)"
    ]


# ----------------------------------------------------------------------------- data
def test_npz_csv_and_separate_val(cfg, tmp_path):
    rng = np.random.default_rng(0)
    np.savez(tmp_path / "d.npz", x=rng.standard_normal((30, 4)), y=np.arange(30) % 3)
    rows = "\n".join(
        ",".join(f"{v:.3f}" for v in r) + f",{i % 2}"
        for i, r in enumerate(rng.standard_normal((20, 3)))
    )
    (tmp_path / "v.csv").write_text("a,b,c,label\n" + rows + "\n")
    exp = build_experiment(
        cfg(
            """\
            data:
              dataset: npz
              path: d.npz
              val: {dataset: csv, path: v.csv, target_column: label}
            model: [{type: Linear, in_features: auto, out_features: 3}]
            train: {batch_size: 8, shuffle: false}
            """
        )
    )
    assert len(exp.train_loader.dataset) == 30 and len(exp.val_loader.dataset) == 20
    x, y = next(iter(exp.train_loader))
    assert x.shape == (8, 4) and x.dtype == ag.float32 and y.dtype == ag.int64


def test_missing_data_file(cfg):
    config = cfg("data: {dataset: npz, path: nope.npz}\nmodel: [Identity]\n")
    (msg,) = build_issues(config)
    assert msg.startswith("c.yaml:1:22  data.path: cannot load the data: cannot read ")
    assert "nope.npz" in msg


def test_user_dataset_function_and_no_validation(cfg):
    exp = build_experiment(
        cfg(
            "data: {dataset: user_layers.py:blobs, n: 10, dim: 2, val_split: 0}\n"
            "model: [{type: Linear, in_features: auto, out_features: 2}]\n"
        )
    )
    assert exp.val_loader is None and len(exp.train_loader.dataset) == 10
    assert exp.hooks[0].kwargs["monitor"] == "train_loss"  # Checkpoint without validation


def test_spirals_and_drop_last(cfg):
    config = cfg(
        "data: {dataset: spirals, n_per_class: 5, classes: 2, val_split: 0.2}\n"
        "model: [{type: Linear, in_features: auto, out_features: 2}]\n"
        "train: {batch_size: 20, drop_last: true}\n"
    )
    assert build_issues(config) == [
        "c.yaml:3:9  train.batch_size: batch_size 20 with drop_last leaves no batch of the 8 "
        "training samples"
    ]


def test_val_split_that_leaves_a_side_empty(cfg):
    config = cfg(
        "data: {dataset: spirals, n_per_class: 2, classes: 2, val_split: 0.1}\n"
        "model: [{type: Linear, in_features: auto, out_features: 2}]\n"
    )
    assert build_issues(config) == [
        "c.yaml:1:54  data.val_split: val_split 0.1 of 4 samples leaves 4 to train and 0 to "
        "validate"
    ]


@pytest.mark.skipif(ag.cuda.is_available(), reason="checks the no-CUDA message")
def test_cuda_unavailable(cfg):
    config = cfg("device: cuda\ndata: {dataset: sine}\nmodel: [Identity]\n")
    assert build_issues(config)[0] == (
        "c.yaml:1:1  device: cuda was asked for, but CUDA is not available here"
    )


def test_cuda_device_on_the_stand_in(strict_cuda):
    exp = build_experiment(load_config(os.path.join(CONFIGS, "digits_mlp.yaml"), ["device=cuda"]))
    x, y = next(iter(exp.train_loader))
    assert x.device.type == "cuda" and y.device.type == "cuda"
    assert all(p.device.type == "cuda" for p in exp.model.parameters())
    exp.loss_fn(exp.model(x), y).backward()
    exp.optimizer.step()
    vx, _ = next(iter(exp.val_loader))
    assert vx.device.type == "cuda"
