"""Hostile configs: bytes, YAML, values of the wrong kind or out of range, overrides and data
files. Each is a real ``agrad train`` subprocess under a memory and time limit that must exit 2
with a message located at ``file:line:col  key.path``, print no traceback and leave no run
folder behind."""

from __future__ import annotations

import os

import pytest
from hostile_harness import GOOD_CONFIG, assert_refused, no_run_folder, run_agrad, write

GOOD = GOOD_CONFIG.lstrip()


def _sub(old: str, new: str) -> str:
    assert old in GOOD, old
    return GOOD.replace(old, new, 1)


def _bomb(levels: int) -> str:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels):
        refs = ",".join([f"*a{i - 1}"] * 9)
        lines.append(f"a{i}: &a{i} [{refs}]")
    return "\n".join(lines) + "\n"


# (id, file content, words the message must contain)
BYTE_CASES = [
    ("nul-byte", b"name: a\x00b\n", ["c.yaml:1:8", "NUL byte"]),
    ("latin-1", "name: café\n".encode("latin-1"), ["c.yaml:1:10", "not UTF-8", "0xe9"]),
    ("utf-16", "name: x\n".encode("utf-16"), ["c.yaml:1:", "NUL byte"]),
    (
        "bad-utf8-line-3",
        GOOD.encode().replace(b"seed: 0", b"seed: \xc3\x28"),
        ["c.yaml:2:7", "not UTF-8", "0xc3"],
    ),
    ("bell-character", b"name: a\x07b\n", ["c.yaml:1:8", "control character U+0007"]),
    ("escape-character", b"name: \x1b[31mred\n", ["c.yaml:1:7", "control character U+001B"]),
    ("only-garbage", bytes(range(128, 256)), ["c.yaml:1:1", "not UTF-8"]),
]

YAML_CASES = [
    ("alias-bomb", _bomb(9), ["c.yaml:", "more than 100,000 values", "aliases"]),
    ("alias-bomb-mapping", _bomb(7).replace("[", "{k: [").replace("]", "]}"), ["100,000"]),
    ("recursive-alias", "a: &a [1, *a]\n", ["c.yaml:1:4", "a.1: recursive alias"]),
    ("recursive-mapping-alias", "a: &a {b: *a}\n", ["c.yaml:1:4", "recursive alias"]),
    ("nesting-1500-flow", "a: " + "[" * 1500 + "]" * 1500 + "\n", ["nests", "64 deep"]),
    (
        "nesting-100-block",
        "".join("  " * i + f"k{i}:\n" for i in range(100)) + "  " * 100 + "v\n",
        ["nests", "64 deep"],
    ),
    (
        "python-object-tag",
        'name: !!python/object/apply:os.system ["echo pwned"]\n',
        ["c.yaml:1:7", "unknown YAML tag '!!python/object/apply:os.system'"],
    ),
    ("python-name-tag", "name: !!python/name:os.system\n", ["c.yaml:1:7", "!!python/name"]),
    ("local-tag", "name: !foo bar\n", ["c.yaml:1:7", "unknown YAML tag '!foo'"]),
    ("set-tag", "a: !!set {x, y}\n", ["c.yaml:1:4", "!!set"]),
    ("binary-tag", "a: !!binary aGVsbG8=\n", ["!!binary"]),
    ("tag-on-key", "!!python/name:os.system : 1\n", ["c.yaml:1:1", "unknown YAML tag"]),
    ("tab-indent", "data:\n\tdataset: sine\n", ["c.yaml:2:1", "invalid YAML"]),
    ("unclosed-bracket", "model: [Linear\n", ["c.yaml:2:1", "invalid YAML"]),
    ("two-documents", GOOD + "---\n" + GOOD, ["c.yaml:", "invalid YAML"]),
    ("mapping-key", "? [a, b]\n: 1\n", ["c.yaml:1:3", "a key must be a plain value"]),
    ("huge-int", "seed: 1" + "0" * 5000 + "\n", ["c.yaml:1:7", "seed: cannot read"]),
    ("bad-date", "name: 2024-13-45\n", ["c.yaml:1:7", "cannot read '2024-13-45'"]),
    ("empty-file", "", ["needs 'data'"]),
    ("top-level-list", "- a\n- b\n", ["the config must be a mapping"]),
    ("top-level-scalar", "hello\n", ["the config must be a mapping"]),
    ("duplicate-key", GOOD + "seed: 1\n", ["c.yaml:14:1", "seed: duplicate key"]),
]

VALUE_CASES = [
    ("lr-inf", _sub("lr: 0.05", "lr: .inf"), ["c.yaml:12:", "optimizer.lr", "finite number"]),
    ("lr-nan", _sub("lr: 0.05", "lr: .nan"), ["optimizer.lr", "finite number >= 0, got nan"]),
    ("lr-word", _sub("lr: 0.05", "lr: abc"), ["optimizer.lr", "got 'abc' (str)"]),
    ("lr-negative", _sub("lr: 0.05", "lr: -0.1"), ["optimizer.lr", "got -0.1"]),
    ("lr-bool", _sub("lr: 0.05", "lr: true"), ["optimizer.lr", "got True (bool)"]),
    ("lr-list", _sub("lr: 0.05", "lr: [0.1]"), ["optimizer.lr", "got [0.1]"]),
    (
        "lr-negative-in-param-group",
        _sub("lr: 0.05}", "lr: 0.05, param_groups: [{params: '*', lr: -1}]}"),
        ["optimizer.param_groups.0.lr", "got -1"],
    ),
    ("momentum-negative", _sub("lr: 0.05", "lr: 0.05, momentum: -0.5"), ["optimizer.momentum"]),
    ("momentum-string", _sub("lr: 0.05", "lr: 0.05, momentum: high"), ["optimizer.momentum"]),
    (
        "weight-decay-inf",
        _sub("lr: 0.05", "lr: 0.05, weight_decay: .inf"),
        ["optimizer.weight_decay", "finite"],
    ),
    ("nesterov-string", _sub("lr: 0.05", "lr: 0.05, nesterov: 'yes'"), ["optimizer.nesterov"]),
    (
        "adam-betas-one",
        _sub("type: SGD, lr: 0.05", "type: Adam, lr: 0.05, betas: [0.9, 1.0]"),
        ["optimizer.betas", "two numbers in [0, 1)"],
    ),
    (
        "adam-betas-short",
        _sub("type: SGD, lr: 0.05", "type: Adam, lr: 0.05, betas: [0.9]"),
        ["optimizer.betas"],
    ),
    (
        "adam-eps-zero",
        _sub("type: SGD, lr: 0.05", "type: Adam, lr: 0.05, eps: 0"),
        ["optimizer.eps", "> 0"],
    ),
    ("out-features-zero", _sub("out_features: 8", "out_features: 0"), ["model.0.out_features"]),
    ("out-features-float", _sub("out_features: 8", "out_features: 1.5"), ["got 1.5 (float)"]),
    ("out-features-bool", _sub("out_features: 8", "out_features: true"), ["got True (bool)"]),
    ("out-features-negative", _sub("out_features: 8", "out_features: -3"), ["got -3"]),
    ("out-features-string", _sub("out_features: 8", "out_features: '8'"), ["got '8' (str)"]),
    ("bias-string", _sub("out_features: 8", "out_features: 8, bias: 'no'"), ["model.0.bias"]),
    ("dropout-p-above-1", _sub("  - Tanh", "  - {type: Dropout, p: 1.5}"), ["model.1.p"]),
    ("dropout-p-negative", _sub("  - Tanh", "  - {type: Dropout, p: -0.1}"), ["[0, 1]"]),
    ("dropout-p-inf", _sub("  - Tanh", "  - {type: Dropout, p: .inf}"), ["model.1.p"]),
    (
        "conv-kernel-zero",
        _sub("  - Tanh", "  - {type: Conv1d, in_channels: 1, out_channels: 2, kernel_size: 0}"),
        ["model.1.kernel_size", "positive integer"],
    ),
    (
        "conv-kernel-list-zero",
        _sub(
            "  - Tanh", "  - {type: Conv2d, in_channels: 1, out_channels: 2, kernel_size: [3, 0]}"
        ),
        ["model.1.kernel_size"],
    ),
    (
        "conv-padding-negative",
        _sub(
            "  - Tanh",
            "  - {type: Conv2d, in_channels: 1, out_channels: 2, kernel_size: 3, padding: -1}",
        ),
        ["model.1.padding"],
    ),
    (
        "conv-padding-word",
        _sub(
            "  - Tanh",
            "  - {type: Conv2d, in_channels: 1, out_channels: 2, kernel_size: 3, padding: full}",
        ),
        ["model.1.padding", "'same' or 'valid'"],
    ),
    (
        "conv-stride-zero",
        _sub(
            "  - Tanh",
            "  - {type: Conv2d, in_channels: 1, out_channels: 2, kernel_size: 3, stride: 0}",
        ),
        ["model.1.stride"],
    ),
    (
        "embedding-dim-zero",
        _sub("  - Tanh", "  - {type: Embedding, num_embeddings: 10, embedding_dim: 0}"),
        ["model.1.embedding_dim"],
    ),
    (
        "lstm-hidden-zero",
        _sub("  - Tanh", "  - {type: LSTM, input_size: 8, hidden_size: 0}"),
        ["model.1.hidden_size"],
    ),
    (
        "batchnorm-eps-negative",
        _sub("  - Tanh", "  - {type: BatchNorm1d, num_features: auto, eps: -1}"),
        ["model.1.eps"],
    ),
    (
        "batchnorm-momentum-string",
        _sub("  - Tanh", "  - {type: BatchNorm1d, num_features: auto, momentum: fast}"),
        ["model.1.momentum"],
    ),
    (
        "label-smoothing-2",
        _sub("loss: mse", "loss: {type: CrossEntropyLoss, label_smoothing: 2}"),
        ["loss.label_smoothing"],
    ),
    (
        "steplr-step-size-zero",
        _sub("train:", "scheduler: {type: StepLR, step_size: 0}\ntrain:"),
        ["scheduler.step_size"],
    ),
    (
        "steplr-gamma-negative",
        _sub("train:", "scheduler: {type: StepLR, step_size: 1, gamma: -1}\ntrain:"),
        ["scheduler.gamma"],
    ),
    (
        "plateau-factor-above-1",
        _sub("train:", "scheduler: {type: ReduceLROnPlateau, factor: 1.5}\ntrain:"),
        ["scheduler.factor"],
    ),
    (
        "cosine-tmax-zero",
        _sub("train:", "scheduler: {type: CosineAnnealingLR, T_max: 0}\ntrain:"),
        ["scheduler.T_max"],
    ),
    ("epochs-zero", _sub("epochs: 1", "epochs: 0"), ["train.epochs"]),
    ("epochs-float", _sub("epochs: 1", "epochs: 1.5"), ["train.epochs"]),
    ("batch-size-zero", _sub("batch_size: 16", "batch_size: 0"), ["train.batch_size"]),
    ("batch-size-string", _sub("batch_size: 16", "batch_size: many"), ["train.batch_size"]),
    ("seed-negative", _sub("seed: 0", "seed: -1"), ["c.yaml:2:", "seed"]),
    ("val-split-one", _sub("val_split: 0.25", "val_split: 1.0"), ["data.val_split"]),
    ("sine-n-zero", _sub("n: 64", "n: 0"), ["data.n"]),
    ("device-banana", _sub("seed: 0", "seed: 0\ndevice: banana"), ["device", "banana"]),
    ("name-is-path", _sub("name: hostile", "name: ../outside"), ["name", "must not be a path"]),
    ("model-empty-list", _sub("model:\n", "model: []\nunused:\n"), ["model"]),
]


def _cases(cases):
    return pytest.mark.parametrize(
        "content, words", [c[1:] for c in cases], ids=[c[0] for c in cases]
    )


def _refused(tmp_path, content, words, *extra: str) -> None:
    path = write(str(tmp_path / "c.yaml"), content)
    res = run_agrad("train", path, *extra, cwd=str(tmp_path))
    assert_refused(res, *words)
    assert no_run_folder(str(tmp_path)), os.listdir(tmp_path / "runs")


@_cases(BYTE_CASES)
def test_config_bytes(tmp_path, content, words):
    _refused(tmp_path, content, words)


@_cases(YAML_CASES)
def test_config_yaml(tmp_path, content, words):
    _refused(tmp_path, content, words)


@_cases(VALUE_CASES)
def test_config_values(tmp_path, content, words):
    _refused(tmp_path, content, words)


OVERRIDE_CASES = [
    ("set-out-features-zero", ["model.0.out_features=0"], ["--set #1", "model.0.out_features"]),
    ("set-lr-inf", ["optimizer.lr=.inf"], ["--set #1", "optimizer.lr"]),
    ("set-no-equals", ["optimizer.lr"], ["--set #1", "expected key.path=value"]),
    ("set-empty-key", ["=3"], ["--set #1"]),
    ("set-index-out-of-range", ["model.9.out_features=3"], ["--set #1", "out of range"]),
    ("set-into-scalar", ["seed.x=1"], ["--set #1", "seed is a int"]),
    ("set-second-bad", ["seed=1", "train.epochs=-2"], ["--set #2", "train.epochs"]),
    ("set-recursive-alias-is-text", ["data=&a [*a]"], ["--set #1", "data", "'&a [*a]'"]),
]


@pytest.mark.parametrize(
    "sets, words", [c[1:] for c in OVERRIDE_CASES], ids=[c[0] for c in OVERRIDE_CASES]
)
def test_overrides(tmp_path, sets, words):
    args = [a for s in sets for a in ("--set", s)]
    _refused(tmp_path, GOOD, words, *args)


def test_big_file_is_refused_without_reading_it_all(tmp_path):
    path = tmp_path / "c.yaml"
    with open(path, "w") as f:
        f.write(GOOD)
        f.write("# " + "x" * 100 + "\n" * 1)
        f.write(("#" + "y" * 1023 + "\n") * 5000)
    res = run_agrad("train", str(path), cwd=str(tmp_path))
    assert_refused(res, "larger than 4 MiB")


def test_config_is_a_directory(tmp_path):
    (tmp_path / "c.yaml").mkdir()
    assert_refused(run_agrad("train", "c.yaml", cwd=str(tmp_path)), "c.yaml", "cannot read")


def test_config_missing(tmp_path):
    assert_refused(run_agrad("train", "nope.yaml", cwd=str(tmp_path)), "nope.yaml")


# ------------------------------------------------------------------ accepted on purpose
def test_exponent_without_dot_is_a_number(tmp_path):
    """YAML 1.1 reads ``1e-3`` as a string; the user meant a number, in the file and in --set."""
    path = write(str(tmp_path / "c.yaml"), GOOD.replace("lr: 0.05", "lr: 1e-3"))
    res = run_agrad("train", path, "--print-config", cwd=str(tmp_path))
    assert res.code == 0, res.text
    assert "lr: 0.001" in res.out
    res = run_agrad(
        "train", path, "--print-config", "--set", "optimizer.lr=2E-2", cwd=str(tmp_path)
    )
    assert "lr: 0.02" in res.out, res.text
    quoted = write(str(tmp_path / "q.yaml"), GOOD.replace("lr: 0.05", "lr: '1e-3'"))
    assert_refused(run_agrad("train", quoted, cwd=str(tmp_path)), "optimizer.lr", "'1e-3' (str)")


def test_utf8_bom_and_comments_in_other_scripts_are_fine(tmp_path):
    text = "\ufeff# 数字のデータ\n" + GOOD
    path = write(str(tmp_path / "c.yaml"), text.encode("utf-8"))
    res = run_agrad("train", path, "--dry-run", cwd=str(tmp_path))
    assert res.code == 0, res.text


def test_aliases_below_the_limit_are_fine(tmp_path):
    """Anchors are legitimate YAML: a config that reuses a layer spec works."""
    text = GOOD.replace(
        "  - {type: Linear, in_features: auto, out_features: 8}",
        "  - &hidden {type: Linear, in_features: auto, out_features: 8}\n  - Tanh\n  - *hidden",
    )
    path = write(str(tmp_path / "c.yaml"), text)
    res = run_agrad("train", path, "--dry-run", cwd=str(tmp_path))
    assert res.code == 0, res.text


def test_nesting_at_the_limit_is_parsed(tmp_path):
    """64 levels are read (then refused as an unknown key, not as too deep); 65 are too deep."""
    ok = write(str(tmp_path / "ok.yaml"), "a: " + "[" * 63 + "]" * 63 + "\n")
    res = run_agrad("train", ok, cwd=str(tmp_path))
    assert_refused(res, "unknown key 'a'")
    assert "deep" not in res.text
    deep = write(str(tmp_path / "deep.yaml"), "a: " + "[" * 64 + "]" * 64 + "\n")
    assert_refused(run_agrad("train", deep, cwd=str(tmp_path)), "more than 64 deep")
