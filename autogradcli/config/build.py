"""``build_experiment``: a validated ``Config`` made into the objects a training run needs.

The model is built one layer (block) at a time while a small batch of the training data runs
through it, so ``auto`` sizes come from the real input and a shape mismatch is reported against
the layer's key and line, with both shapes, instead of as a traceback from the first step.

The parts are built by ``build_data`` (datasets, split, loaders), ``build_model`` (the
layer-by-layer dry forward) and ``build_training`` (loss, optimizer and its param groups,
scheduler, hooks); ``experiment`` defines what comes out. Every problem of every part is
reported together in one ``ConfigError``.
"""

from __future__ import annotations

from typing import Any

from .. import data as D
from ..tensor.random import manual_seed
from ..tensor.tensor import Tensor
from ..trainer.metrics import guess_task, is_next_token
from . import registry
from .build_data import build_data, build_loaders, move_dataset
from .build_model import DataSizes, build_model
from .build_training import (
    build_hooks,
    build_loss,
    build_optimizer,
    build_scheduler,
    check_label_range,
)
from .builder import Builder
from .errors import ConfigError
from .experiment import Experiment, HookSpec, TrainSettings
from .loader import Config

__all__ = ["Experiment", "HookSpec", "TrainSettings", "build_experiment"]


def build_experiment(
    config: Config, stored: dict[str, Any] | None = None, read_data: bool = True
) -> Experiment:
    """Build the run described by ``config``; raise one ConfigError listing every problem.

    ``stored``: the run's ``data_state.json`` (eval, predict, inspect, resume), used instead of
    fitting the data again; with it, ``read_data=False`` reads no data at all (the model is
    built on zeros of the stored shapes, and the experiment has no loaders).
    Calls ``autogradcli.manual_seed(seed)`` first, so weights are the same on every build.
    """
    d = config.data
    seed = d["seed"]
    manual_seed(seed)
    b = Builder(config)
    device = d["device"]
    _check_device(b, device)
    data = build_data(b, stored, read_data)
    train_ds = val_ds = test_ds = None
    if data is not None:
        train_ds, val_ds, test_ds = data.train, data.val, data.test
    model = out = x = y = loss_fn = optimizer = scheduler = None
    group_names: list[list[str]] = []
    if data is not None and data.sample is not None:
        x, y = data.sample
        sizes = DataSizes(data.kind.sizes(data.state), data.kind.name)
        model, out = build_model(b, x, sizes)
        loss_fn = build_loss(b, out, y)
        sets = {"the training set": train_ds, "the validation set": val_ds}
        if train_ds is not None:
            check_label_range(b, loss_fn, out, {**sets, "the test set": test_ds})
    else:
        build_loss(b, None, None)
    train_loader, val_loader = build_loaders(b, train_ds, val_ds)
    init_report = None
    if model is not None and d.get("init_from"):
        init_report = _init_from(b, model, d["init_from"], load=stored is None)
    if model is not None:
        optimizer, group_names = build_optimizer(b, model)
        scheduler = build_scheduler(b, optimizer, len(train_loader) if train_loader else 1)
    hooks = build_hooks(b, model)
    if b.issues:
        raise ConfigError(b.issues)
    assert model is not None and data is not None
    if device != "cpu":
        model.to(device)
        for extra in (train_ds, val_ds, test_ds):
            if extra is not None:
                move_dataset(extra, device)
    model.train()
    task = guess_task(loss_fn)
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
        train=TrainSettings(**d["train"]),
        config=config,
        input_shape=tuple(x.shape[1:]) if isinstance(x, Tensor) else (),
        output_shape=tuple(out.shape[1:]) if isinstance(out, Tensor) else (),
        param_group_names=group_names,
        test_loader=(
            D.DataLoader(test_ds, batch_size=d["train"]["batch_size"])
            if test_ds is not None
            else None
        ),
        data_kind=data.kind,
        data_state=data.doc(),
        init_from=init_report,
        metrics=(
            d["metrics"]
            if d.get("metrics") is not None
            else registry.default_metrics(task, is_next_token(out, y))
        ),
    )


def _init_from(b: Builder, model: Any, spec: dict[str, Any], load: bool) -> dict | None:
    """Load ``init_from``'s weights into ``model`` (with ``load``: a new run, not a rebuilt
    one) and freeze its patterns; the key report, or None after reporting a problem at the
    setting at fault."""
    from ..trainer.init_from import apply_init_from

    path = b.config.file_path(("init_from", "path"), spec["path"])
    report, problems = apply_init_from(model, spec, path, load)
    for err in problems:
        b.error(("init_from", *err.key), str(err))
    return report


def _check_device(b: Builder, device: str) -> None:
    """Report a CUDA ``device`` this machine does not have."""
    if device.startswith("cuda"):
        from .. import cuda

        if not cuda.is_available():
            b.error(("device",), f"{device} was asked for, but CUDA is not available here")
        elif ":" in device and int(device.split(":")[1]) >= cuda.device_count():
            b.error(("device",), f"{device}: there are only {cuda.device_count()} CUDA devices")
