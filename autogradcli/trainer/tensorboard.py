"""``TensorBoard``: a callback writing every logged metric as TensorBoard scalars, through
``tensorboardX`` (the ``tensorboard`` extra: ``pip install "autogradcli[tensorboard]"``),
imported only when the callback is made. ``tensorboard --logdir runs/`` then shows every run's
curves."""

from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING, Any

from .._utils.tensorboardx import import_tensorboardx
from .callbacks import Callback

if TYPE_CHECKING:
    from .trainer import Trainer

__all__ = ["TensorBoard", "require_tensorboardx"]

MISSING = (
    "the TensorBoard hook needs tensorboardX, which is not installed: "
    'pip install "autogradcli[tensorboard]" (or pip install tensorboardX)'
)
SKIP = ("epoch", "step", "time")  # the x axis and wall clock, not curves


def require_tensorboardx() -> Any:
    """The ``tensorboardX`` module; ImportError with the install command when it is missing."""
    try:
        return import_tensorboardx()
    except ImportError:
        raise ImportError(MISSING) from None


class TensorBoard(Callback):
    """After every epoch, ``add_scalar(name, value, epoch)`` for each numeric metric of the
    epoch's row (``train_loss``, ``val_acc``, ``lr``, what callbacks add...), into
    ``<run folder>/<log_dir>`` (an absolute ``log_dir`` is used as it is). Without a run folder
    it writes nothing. A resumed run adds a new event file to the same folder."""

    order = 250  # after RunLogger: the row is final

    def __init__(self, log_dir: str = "tensorboard") -> None:
        self._tbx = require_tensorboardx()
        self.log_dir = log_dir
        self.writer: Any = None

    def on_fit_start(self, trainer: Trainer) -> None:
        if trainer.run is None:
            return
        path = os.path.join(trainer.run.path, self.log_dir)
        self.writer = self._tbx.SummaryWriter(logdir=path)

    def on_epoch_end(self, trainer: Trainer) -> None:
        if self.writer is None or not trainer.history:
            return
        row = trainer.history[-1]
        for name, value in row.items():
            if name in SKIP or isinstance(value, bool) or not isinstance(value, (int, float)):
                continue
            if math.isfinite(value):
                self.writer.add_scalar(name, float(value), int(row.get("epoch", trainer.epoch)))
        self.writer.flush()

    def on_fit_end(self, trainer: Trainer) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    def state_dict(self) -> dict[str, Any]:
        return {}

    def __repr__(self) -> str:
        return f"TensorBoard(log_dir={self.log_dir!r})"
