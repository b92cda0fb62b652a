"""Evaluation of a model on a data set, and the ``TestEvaluation`` callback that puts the best
checkpoint's test metrics in ``summary.json`` (key ``test``) at the end of a run."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..autograd.grad_mode import no_grad
from ..serialization import load
from .batches import unpack
from .callbacks import Callback
from .metrics import EpochSums
from .run_logger import RunLogger
from .sequence_loss import compute_loss

if TYPE_CHECKING:
    from .trainer import Trainer

__all__ = ["TestEvaluation", "evaluate", "sum_batches"]


def evaluate(
    model: Any,
    loss_fn: Any,
    loader: Any,
    task: str,
    metrics: Any = None,
    prefix: str = "test",
    device: str | None = None,
) -> dict[str, Any]:
    """``{prefix_loss, prefix_<metric>..., samples}`` of ``model`` over ``loader``, computed as
    the trainer validates (eval mode, no graph, sums over the whole set); the model's training
    mode is restored."""
    sums = EpochSums(task, loss_fn, metrics)
    was_training = model.training
    model.eval()
    try:
        sum_batches(sums, model, loss_fn, loader, device)
    finally:
        model.train(was_training)
    return {**sums.metrics(prefix), "samples": sums.n}


def sum_batches(
    sums: EpochSums,
    model: Any,
    loss_fn: Any,
    loader: Any,
    device: str | None,
    after_batch: Callable[[], None] | None = None,
) -> None:
    """Add every batch of ``loader`` (moved to ``device`` when given) to ``sums``, without a
    graph; ``after_batch`` runs after each (the trainer's interrupt check). The model's mode
    is the caller's."""
    with no_grad():
        for batch in loader:
            x, y = unpack(batch, device)
            out = model(x)
            value = float(compute_loss(loss_fn, out, y).item())
            sums.add(value, out, x, y, value_is_loss=True)
            if after_batch is not None:
                after_batch()


class TestEvaluation(Callback):
    """At the end of a completed run, evaluate ``checkpoints/best`` (``last`` when there is no
    best) on ``loader`` and hand the metrics to the ``RunLogger`` for ``summary.json``'s
    ``test`` key. The trainer's model is left with its final weights."""

    order = 150  # after Checkpoint has saved, before RunLogger writes the summary

    def __init__(self, loader: Any) -> None:
        self.loader = loader

    def on_fit_end(self, trainer: Trainer) -> None:
        if trainer.status != "completed" or trainer.run is None:
            return
        used = None
        for name in ("best", "last"):
            if os.path.isfile(trainer.run.checkpoint_path(name)):
                used = name
                break
        final = {k: v.detach().clone() for k, v in trainer.model.state_dict().items()}
        try:
            if used is not None:
                state = load(trainer.run.checkpoint_path(used))
                trainer.model.load_state_dict(state["model"])
                epoch = int(state["epoch"])
            else:
                used, epoch = "final", trainer.epochs_done
            metrics = evaluate(
                trainer.model,
                trainer.loss_fn,
                self.loader,
                trainer.task,
                trainer.metric_names,
                device=trainer.device,
            )
        finally:
            with contextlib.suppress(Exception):
                trainer.model.load_state_dict(final)
        result = {"checkpoint": used, "epoch": epoch, **metrics}
        trainer.test_metrics = result
        for cb in trainer.callbacks:
            if isinstance(cb, RunLogger):
                cb.extra["test"] = result
