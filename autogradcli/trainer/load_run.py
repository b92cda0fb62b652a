"""``load_run``: a finished (or running) run folder back as a model with its trained weights.

The model is rebuilt from the run's ``config.resolved.yaml`` and ``data_state.json`` exactly as
training built it (so ``auto`` sizes resolve the same way, without reading the data), then the weights of ``checkpoints/<checkpoint>`` are
loaded. ``open_run`` also returns the rest of the experiment (loss, task, test data), for
``agrad eval`` and ``agrad predict``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from ..serialization import load
from .init_from import read_source
from .run_dir import RESOLVED_CONFIG, RunDir, RunFolderError

__all__ = ["CHECKPOINTS", "LoadedRun", "load_run", "open_run"]

CHECKPOINTS = ("best", "last")


@dataclass
class LoadedRun:
    """A run folder opened for use: ``model`` (eval mode, the checkpoint's weights),
    ``experiment`` (``config.Experiment``: loss, task, metrics, loaders), ``checkpoint`` (its
    name), ``epoch`` (the epoch it was saved after) and ``run`` (the ``RunDir``)."""

    model: Any
    experiment: Any
    checkpoint: str
    epoch: int
    run: RunDir


def open_run(
    path: str | os.PathLike,
    checkpoint: str = "best",
    overrides: list[str] | None = None,
    read_data: bool = False,
) -> LoadedRun:
    """Rebuild the run in ``path`` and load ``checkpoints/<checkpoint>`` (``best`` | ``last``,
    or the path of a checkpoint or state dict file of the same model);
    ``overrides`` (``--set`` strings) change the stored config first. The data's fitted state
    comes from the run's ``data_state.json``: the training data is read only with
    ``read_data`` (the run's test split), or for a run made before that file existed.

    Raises FileNotFoundError (naming what is missing) for a folder that is not a run or has
    no such checkpoint, ValueError for another checkpoint name."""
    from ..config import build_experiment, load_config

    named = checkpoint in CHECKPOINTS
    if not named and not os.path.isfile(checkpoint):
        raise ValueError(
            f"checkpoint must be one of {', '.join(CHECKPOINTS)} or a checkpoint file, "
            f"got {checkpoint!r}" + (" (no such file)" if os.sep in checkpoint else "")
        )
    folder = os.fspath(path)
    run = RunDir(folder)
    config_file = run.file(RESOLVED_CONFIG)
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"no such run folder: {folder}")
    if not os.path.isfile(config_file):
        raise FileNotFoundError(f"{folder} has no {RESOLVED_CONFIG}: not a run folder")
    ckpt = run.checkpoint_path(checkpoint) if named else checkpoint
    if not os.path.isfile(ckpt):
        others = [c for c in CHECKPOINTS if os.path.isfile(run.checkpoint_path(c))]
        hint = f" (it has: {', '.join(others)})" if others else " (it has no checkpoints)"
        raise FileNotFoundError(f"{folder} has no checkpoints/{checkpoint}{hint}")
    try:
        stored = run.read_data_state()
    except RunFolderError as err:
        raise ValueError(str(err)) from None
    config = load_config(config_file, list(overrides or ()))
    experiment = build_experiment(config, stored, read_data)
    model = experiment.model
    if named:
        state = load(ckpt)
        model.load_state_dict(state["model"])
        epoch = int(state.get("epoch", 0))
    else:  # any weights file init_from reads (a checkpoint, safetensors, a state dict)
        weights, _ = read_source(ckpt)
        model.load_state_dict(weights)
        epoch = 0
    model.eval()
    return LoadedRun(model, experiment, checkpoint, epoch, run)


def load_run(path: str | os.PathLike, checkpoint: str = "best") -> Any:
    """The model (an ``nn.Module``, in eval mode) of the run folder ``path`` with the weights
    of ``checkpoints/<checkpoint>`` (``best`` or ``last``)::

        model = autogradcli.load_run("runs/digits-mlp-20261122-031006-7283b7")
        probabilities = model(x).softmax(dim=1)
    """
    return open_run(path, checkpoint).model
