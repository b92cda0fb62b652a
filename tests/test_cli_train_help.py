"""``agrad train --help`` names exactly what a config accepts: every dataset, loss, optimizer,
scheduler and built-in hook, checked against the packages themselves, not the help's own source."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from autogradcli import nn, optim
from autogradcli.nn.loss import _Loss
from autogradcli.optim import lr_scheduler


@pytest.fixture(scope="module")
def keys() -> dict[str, str]:
    """The help's table of config keys: key -> its description (continuation lines joined)."""
    from autogradcli.cli.app import app

    res = CliRunner().invoke(app, ["train", "--help"])
    assert res.exit_code == 0, res.output
    table, key = {}, None
    for line in res.output.split("\n"):
        if m := re.match(r"^    (\w+)\s{2,}(.*)$", line):
            key, table[key] = m[1], m[2]
        elif key and re.match(r"^ {15}\S", line):
            table[key] += " " + line.strip()
        else:
            key = None
    return table


def _names(text: str) -> set[str]:
    return set(re.findall(r"[A-Za-z_][\w:]*", text))


def test_every_optimizer_the_trainer_can_step(keys):
    # LBFGS needs a closure that the Trainer does not pass
    classes = {
        n
        for n in dir(optim)
        if isinstance(c := getattr(optim, n), type)
        and issubclass(c, optim.Optimizer)
        and c not in (optim.Optimizer, optim.LBFGS)
    }
    assert len(classes) >= 11
    assert classes <= _names(keys["optimizer"])
    assert "LBFGS" not in keys["optimizer"]


def test_every_loss_scheduler_dataset_and_hook(keys):
    losses = {n for n in dir(nn) if isinstance(c := getattr(nn, n), type) and issubclass(c, _Loss)}
    assert losses - {"_Loss"} <= _names(keys["loss"])
    schedulers = {n for n in lr_scheduler.__all__ if n != "LRScheduler"}
    assert schedulers <= _names(keys["scheduler"])
    assert _names(keys["data"]) >= {"digits", "npz", "csv", "idx", "sine", "spirals"}
    hooks = {"EarlyStopping", "Checkpoint", "LRLogger", "GradNormLogger", "NonFiniteGuard"}
    assert hooks | {"TensorBoard"} <= _names(keys["hooks"])
    assert not re.search(r"\{\w+\}", "".join(keys.values())), "a placeholder left unfilled"


def test_every_top_level_key_metric_and_train_key(keys):
    from autogradcli.config import registry, schema

    assert list(keys) == list(schema.TOP_KEYS)  # the keys the validator accepts, in its order
    assert set(registry.METRICS) <= _names(keys["metrics"])
    assert set(schema.TRAIN_DEFAULTS) <= _names(keys["train"])


@pytest.mark.parametrize("name", ["RAdam", "ASGD", "Rprop"])
def test_a_listed_optimizer_builds_from_a_config(name, tmp_path, keys):
    """The list is what the config takes: optimizers the old help left out build."""
    from autogradcli.config import build_experiment, load_config

    assert name in _names(keys["optimizer"])
    path = tmp_path / "c.yaml"
    path.write_text(
        "data: {dataset: sine, n: 16}\nmodel: [{type: Linear, in_features: 1, out_features: 1}]\n"
        f"loss: MSELoss\noptimizer: {{type: {name}, lr: 0.01}}\n"
    )
    exp = build_experiment(load_config(str(path)))
    assert type(exp.optimizer).__name__ == name
