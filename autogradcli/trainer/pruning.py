"""``Pruning``: feed a search trial (Optuna's ``Trial``, or anything with ``report`` and
``should_prune``) the epoch-end metric, and stop the run when the trial says to prune."""

from __future__ import annotations

import math
from typing import Any

from .callbacks import Callback

__all__ = ["Pruning"]


class Pruning(Callback):
    """After each epoch, ``trial.report(monitor's value, epoch)``; when ``trial.should_prune()``
    the run stops after this epoch (status ``completed``, ``pruned_at`` set to the epoch)."""

    order = 50  # after user callbacks, before Checkpoint and RunLogger write the epoch

    def __init__(self, trial: Any, monitor: str) -> None:
        self.trial, self.monitor = trial, monitor
        self.pruned_at: int | None = None
        self.reason = ""

    def on_epoch_end(self, trainer: Any) -> None:
        value = trainer.metric(self.monitor)
        if value is None:
            return
        value = float(value)
        if math.isfinite(value):
            self.trial.report(value, trainer.epoch)
        if trainer.epoch < trainer.epochs and self.trial.should_prune():
            self.pruned_at = trainer.epoch
            self.reason = f"pruned at epoch {trainer.epoch}: {self.monitor} {value:.4g}"
            trainer.request_stop(self.reason)
