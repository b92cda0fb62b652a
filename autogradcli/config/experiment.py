"""What ``build_experiment`` hands the trainer: ``Experiment``, its ``HookSpec``s and
``TrainSettings``. Plain dataclasses, so the trainer needs nothing else from the config code."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..nn.module import Module
from .errors import Path
from .loader import Config

__all__ = ["Experiment", "HookSpec", "TrainSettings"]


@dataclass(frozen=True)
class HookSpec:
    """One entry of ``hooks`` (or a default one), resolved for the trainer.

    ``kind``:
      - ``"builtin"``: ``target`` is a name of ``trainer.BUILTIN_CALLBACKS`` (all of them, from
        that table), ``kwargs`` its settings with every default of its ``__init__`` filled in.
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
    """The ``train`` section, every key given (``schema.TRAIN_DEFAULTS`` has the defaults)."""

    epochs: int
    batch_size: int
    eval_every: int
    grad_clip: float | None
    shuffle: bool
    drop_last: bool
    num_workers: int


@dataclass
class Experiment:
    """Everything a run needs, built from a Config (``build_experiment``).

    ``model`` is on ``device`` in train mode; ``train_loader`` shuffles with a
    ``data.Generator`` seeded from ``seed`` and yields ``[x, y]`` batches already on ``device``;
    ``val_loader`` is None without validation data, ``test_loader`` without test data
    (``data.test_split`` or ``data.test``). ``scheduler_interval`` is ``"epoch"`` or
    ``"step"``; ``scheduler_monitor`` the metric ReduceLROnPlateau steps on (else None).
    ``task`` is ``"classification"`` for class losses (CrossEntropyLoss, NLLLoss, BCE...), else
    ``"regression"``.
    ``input_shape``/``output_shape`` are one sample's shapes (no batch dim) from the dry run.
    ``metrics``: the metric names to log (``trainer.metrics.METRICS``; the task's default filled in).
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
    config: Config
    scheduler_monitor: str | None = None
    input_shape: tuple[int, ...] = ()
    output_shape: tuple[int, ...] = ()
    param_group_names: list[list[str]] = field(default_factory=list)
    metrics: list[str] = field(default_factory=list)
    test_loader: Any = None
    data_kind: Any = None  # the data's ``DataKind``: reads eval/predict files with its spec
    data_state: dict[str, Any] | None = None  # what ``data_state.json`` holds
    init_from: dict[str, Any] | None = None  # the key report of ``init_from`` (a new run)
