"""Each default and each name lives in one place: a metric registered once (``trainer.metrics.
register_metric``) is accepted by the config validator, listed in its messages, usable as a
monitor with its direction, and logged by the trainer; a built-in callback added once to
``trainer.builtin.BUILTIN_CALLBACKS`` is accepted by a config with its own signature's defaults,
and a name added to ``DEFAULT_CALLBACKS`` is added by both the config and the Trainer."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import autogradcli as ag
from autogradcli import data as D
from autogradcli import nn, optim
from autogradcli.config import ConfigError, build_experiment, load_config_text
from autogradcli.config.experiment import HookSpec, TrainSettings
from autogradcli.trainer import Callback, Trainer, builtin, callbacks_from_hooks, metrics
from autogradcli.trainer.metrics import Metric, register_metric


def _add_maxerr(sums, out, y, loss_fn):
    err = float(np.abs(out.detach().numpy() - y.numpy()).max())
    sums["maxerr"] = max(sums.get("maxerr", 0.0), err)


@pytest.fixture
def maxerr():
    """A toy metric (the largest absolute error; lower is better), registered in one edit."""
    metric = register_metric(
        Metric("maxerr", "maxerr", "min", "regression", _add_maxerr, lambda s: s.get("maxerr"))
    )
    yield metric
    del metrics.METRICS["maxerr"]


SINE = """
data: {dataset: sine, n: 40}
model:
  - {type: Linear, in_features: auto, out_features: 1}
loss: mse
"""


def problems(text: str) -> list[str]:
    try:
        load_config_text(text, "c.yaml")
    except ConfigError as err:
        return [str(i) for i in err.issues]
    return []


def test_a_registered_metric_is_accepted_listed_and_monitored(maxerr):
    hook = "hooks: [{type: EarlyStopping, monitor: val_maxerr}]\n"
    assert problems(SINE + "metrics: [maxerr]\n" + hook) == []
    (typo,) = problems(SINE + "metrics: [maxer]\n")
    assert "unknown metric 'maxer' (did you mean 'maxerr'?)" in typo
    (bad,) = problems(SINE + "metrics: [3]\n")
    assert "accuracy, top5, f1_macro, mae, rmse, r2, perplexity, maxerr" in bad
    (monitor,) = problems(SINE + "hooks: [{type: EarlyStopping, monitor: val_maxer}]\n")
    assert (
        "expected train_ or val_ and loss, acc, top5, f1_macro, mae, rmse, r2, perplexity or "
        "maxerr" in monitor
    )
    (unlogged,) = problems(SINE + "metrics: [mae]\n" + hook)
    assert "val_maxerr is not logged: add maxerr to metrics" in unlogged
    (contrary,) = problems(SINE + "hooks: [{type: Checkpoint, monitor: val_maxerr, mode: max}]\n")
    assert "mode 'max' contradicts val_maxerr (lower is better" in contrary


def test_a_registered_metric_is_logged_by_the_trainer(maxerr):
    """train_maxerr/val_maxerr against the largest error computed here."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((24, 2)).astype(np.float32)
    y = (x @ np.array([[1.5], [-2.0]], np.float32)).astype(np.float32)
    ag.manual_seed(0)
    model = nn.Linear(2, 1)
    train = D.DataLoader(D.TensorDataset(ag.tensor(x[:16]), ag.tensor(y[:16])), batch_size=16)
    val = D.DataLoader(D.TensorDataset(ag.tensor(x[16:]), ag.tensor(y[16:])), batch_size=3)
    opt = optim.SGD(model.parameters(), lr=0.1)
    tr = Trainer(model, nn.MSELoss(), opt, train, val, epochs=3, metrics=["maxerr"])
    res = tr.fit()
    w, b = model.weight.detach().numpy(), model.bias.detach().numpy()
    expected = np.abs(x[16:] @ w.T + b - y[16:]).max()
    assert res.history[-1]["val_maxerr"] == pytest.approx(expected, rel=1e-6)
    assert "train_maxerr" in res.history[0]
    tr = Trainer(model, nn.MSELoss(), opt, train, val, epochs=1, monitor="val_maxerr")
    assert tr.mode == "min"


class Toy(Callback):
    """A toy built-in callback: counts epochs, keeps ``every`` and ``label``."""

    def __init__(self, every: int = 3, label: str = "toy") -> None:
        self.every, self.label, self.epochs = every, label, 0

    def on_epoch_end(self, trainer) -> None:
        self.epochs += 1


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setitem(builtin.BUILTIN_CALLBACKS, "Toy", Toy)
    return Toy


def test_a_builtin_callback_is_one_table_entry(toy):
    config = load_config_text(SINE + "hooks: [{type: Toy, every: 2}]\n", "c.yaml")
    assert config.data["hooks"][0] == {"type": "Toy", "every": 2, "label": "toy"}
    (typo,) = problems(SINE + "hooks: [{type: Toy, evry: 2}]\n")
    assert "'evry'" in typo and "did you mean 'every'" in typo
    (kind,) = problems(SINE + "hooks: [{type: Toi}]\n")
    assert "unknown hook 'Toi' (did you mean 'Toy'?)" in kind and "TensorBoard" in kind
    (wrong,) = problems(SINE + "hooks: [{type: Toy, every: two}]\n")
    assert "hooks.0.every: expected" in wrong
    (made,) = [c for c in callbacks_from_hooks(build_experiment(config).hooks) if type(c) is Toy]
    assert (made.every, made.label) == (2, "toy")


def test_default_callbacks_come_from_one_tuple(toy, monkeypatch):
    monkeypatch.setattr(builtin, "DEFAULT_CALLBACKS", (*builtin.DEFAULT_CALLBACKS, "Toy"))
    config = load_config_text(SINE, "c.yaml")
    assert [h["type"] for h in config.data["hooks"]] == ["Checkpoint", "NonFiniteGuard", "Toy"]
    model = nn.Linear(1, 1)
    loader = D.DataLoader(D.TensorDataset(ag.zeros(4, 1), ag.zeros(4, 1)), batch_size=2)
    tr = Trainer(model, nn.MSELoss(), optim.SGD(model.parameters(), lr=0.1), loader, epochs=2)
    names = [type(c).__name__ for c in tr.callbacks]
    assert sorted(names) == ["Checkpoint", "NonFiniteGuard", "Toy"]


def test_hook_settings_are_the_constructors_defaults():
    """Every built-in hook's resolved settings are its __init__'s defaults, all six hooks."""
    assert list(builtin.BUILTIN_CALLBACKS) == [
        "EarlyStopping",
        "Checkpoint",
        "LRLogger",
        "GradNormLogger",
        "NonFiniteGuard",
        "TensorBoard",
    ]
    for name, cls in builtin.BUILTIN_CALLBACKS.items():
        if name == "TensorBoard":
            continue  # needs the tensorboard extra to build; its settings are checked below
        hooks = load_config_text(SINE + f"hooks: [{name}]\n", "c.yaml").data["hooks"]
        params = inspect.signature(cls).parameters.values()
        want = {p.name: p.default for p in params if p.default is not p.empty}
        if want.get("monitor", "x") is None:
            want["monitor"] = "val_loss"  # Checkpoint's: the trainer's default, resolved
        assert {k: v for k, v in hooks[0].items() if k != "type"} == want, name
    hooks = load_config_text(SINE + "hooks: [TensorBoard]\n", "c.yaml").data["hooks"]
    assert hooks[0] == {"type": "TensorBoard", "log_dir": "tensorboard"}


def test_train_defaults_are_the_trainers():
    """``epochs`` and friends: the Trainer's signature is the one definition."""
    train = load_config_text(SINE, "c.yaml").data["train"]
    params = inspect.signature(Trainer).parameters
    for key in ("epochs", "eval_every", "grad_clip"):
        assert train[key] == params[key].default
    assert train["epochs"] == 10  # the documented default
    with pytest.raises(TypeError):
        TrainSettings()  # no defaults of its own


def test_hookspec_names_every_builtin_hook():
    doc = HookSpec.__doc__ or ""
    assert "BUILTIN_CALLBACKS" in doc
    assert "LRLogger" not in doc  # no typed list to drift from the table


def test_name_tables_are_the_whole_tables_and_look_one_name_up_alone():
    """layer_types/loss_types/optimizer_types iterate as a scan of their namespace does (the
    tables before they were lazy), and a lookup loads only its own lazily loaded module (a
    fresh process: digits_mlp's build loads neither nn.parallel nor unused optimizers)."""
    import os

    from test_lazy_imports import REPO, run_fresh

    from autogradcli.config import registry
    from autogradcli.nn.loss import _Loss

    def scan(ns, keep):
        return {n: o for n in dir(ns) if not n.startswith("_") and keep(n, o := getattr(ns, n))}

    layers = scan(nn, registry._is_layer)
    layers.update({"Add": registry.blocks.Add, "Concat": registry.blocks.Concat})
    layers.update({"Mul": registry.blocks.Mul})
    layers.update({n: getattr(registry.sequence_layers, n) for n in registry._SEQUENCE_LAYERS})
    layers["TableEmbeddings"] = registry.table_layers.TableEmbeddings
    assert list(registry.layer_types().items()) == list(layers.items())
    is_loss = lambda n, o: isinstance(o, type) and issubclass(o, _Loss)
    assert list(registry.loss_types().items()) == list(scan(nn, is_loss).items())
    optimizers = registry.optimizer_types()
    assert list(optimizers.items()) == list(scan(optim, registry._is_optimizer).items())
    assert "LBFGS" not in optimizers and optimizers["Adam"] is optim.Adam
    for table, name in ((registry.layer_types(), "Sequential"), (registry.layer_types(), "MSELoss"),
                        (registry.loss_types(), "_Loss"), (optimizers, "Optimizer")):  # fmt: skip
        assert name not in table
        with pytest.raises(KeyError):
            table[name]
    config = os.path.join(REPO, "configs", "digits_mlp.yaml")
    code = (
        "import json, sys\n"
        "from autogradcli.config import load_config\n"
        "from autogradcli.config.build import build_experiment\n"
        f"build_experiment(load_config({config!r}))\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    loaded = run_fresh(code)
    assert "autogradcli.nn.parallel" not in loaded and "autogradcli.optim.rmsprop" not in loaded
    assert "autogradcli.optim.adam" in loaded
