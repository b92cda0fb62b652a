"""Class labels beyond the model's outputs are a config error at the output layer's line,
found before any run folder is made (PyTorch would fail mid-run: "Target 9 is out of bounds")."""

from __future__ import annotations

import numpy as np
import pytest

from autogradcli.config import ConfigError, build_experiment, load_config


def config(tmp_path, labels, outputs=9, loss="cross_entropy", extra="", last="", val=0.25):
    """A config on an npz of ``labels`` (int64) with ``outputs`` class scores."""
    n = len(labels)
    x = np.random.default_rng(0).standard_normal((n, 4)).astype(np.float32)
    np.savez(tmp_path / "d.npz", x=x, y=np.asarray(labels, dtype=np.int64))
    path = tmp_path / "c.yaml"
    path.write_text(
        "data:\n"
        "  dataset: npz\n"
        "  path: d.npz\n"
        f"  val_split: {val}\n"
        "model:\n"
        "  - {type: Linear, in_features: auto, out_features: 16}\n"
        "  - ReLU\n"
        f"  - {{type: Linear, in_features: auto, out_features: {outputs}}}\n"
        f"{last}"
        f"loss: {loss}\n"
        f"{extra}"
    )
    return str(path)


def problems(path: str) -> list[str]:
    try:
        build_experiment(load_config(path))
    except ConfigError as err:
        return [str(i) for i in err.issues]
    return []


def test_label_equal_to_the_output_count_is_refused_at_the_last_linear(tmp_path):
    labels = [i % 10 for i in range(40)]  # 0..9: ten classes
    found = problems(config(tmp_path, labels, outputs=9))
    assert len(found) == 1, found
    assert found[0].startswith(f"{tmp_path / 'c.yaml'}:8:5")
    assert "has label 9 but the model gives 9 class scores (labels 0..8)" in found[0]
    assert "give 10 outputs" in found[0]


def test_labels_just_inside_the_outputs_build(tmp_path):
    labels = [i % 10 for i in range(40)]
    assert problems(config(tmp_path, labels, outputs=10)) == []


def test_negative_label_is_refused_and_ignore_index_is_not(tmp_path):
    labels = [i % 3 for i in range(40)]
    labels[5] = -1
    found = problems(config(tmp_path, labels, outputs=3))
    assert len(found) == 1 and "has label -1" in found[0], found
    loss = "{type: CrossEntropyLoss, ignore_index: -1}"
    assert problems(config(tmp_path, labels, outputs=3, loss=loss)) == []


@pytest.mark.parametrize("held_out", [0, 39])
def test_a_label_only_in_the_validation_set_is_found(tmp_path, held_out):
    """Every split is checked, so the seeded split cannot hide the bad label."""
    labels = [i % 3 for i in range(40)]
    labels[held_out] = 3
    found = problems(config(tmp_path, labels, outputs=3))
    assert len(found) == 1 and "has label 3 but the model gives 3" in found[0], found


def test_nll_after_log_softmax_is_reported_at_the_linear(tmp_path):
    labels = [i % 4 for i in range(40)]
    last = "  - {type: LogSoftmax, dim: 1}\n"
    found = problems(config(tmp_path, labels, outputs=3, loss="nll", last=last))
    assert len(found) == 1 and ":8:5" in found[0] and "NLLLoss" in found[0], found


def test_regression_targets_are_untouched(tmp_path):
    """MSE on one output with integer-valued targets beyond 1: not a class problem."""
    labels = [float(i % 10) for i in range(40)]
    x = np.zeros((40, 4), np.float32)
    np.savez(tmp_path / "d.npz", x=x, y=np.asarray(labels, np.float32).reshape(-1, 1))
    path = tmp_path / "c.yaml"
    path.write_text(
        "data: {dataset: npz, path: d.npz}\n"
        "model:\n  - {type: Linear, in_features: auto, out_features: 1}\nloss: mse\n"
    )
    assert problems(str(path)) == []
