"""The one record of the best epoch: which metric it follows.

The ``Trainer`` owns the record (``trainer.best``, saved in checkpoints, written to
summary.json); ``Checkpoint`` only saves ``checkpoints/best`` on the epochs that improve it,
so the weights there are always those of the reported best epoch. This module decides the
record's ``monitor``/``mode`` from ``Trainer(monitor=, mode=)`` and the Checkpoints' own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .callbacks import Checkpoint, mode_for
from .metrics import DEFAULT_MONITOR

__all__ = ["best_monitor"]


def best_monitor(monitor: str | None, mode: str, callbacks: Sequence[Any]) -> tuple[str, str]:
    """(monitor, min|max) of the trainer's best: ``monitor`` if given, else that of a
    ``Checkpoint`` given one, else ``DEFAULT_MONITOR``. A Checkpoint watching another metric
    or direction is refused: there would be two bests, and ``checkpoints/best`` would not hold
    the reported one."""
    wanted = mode_for(monitor, mode) if monitor is not None else None
    for cb in callbacks:
        if not isinstance(cb, Checkpoint) or cb.monitor is None:
            continue
        if monitor is None and (mode == "auto" or mode_for(cb.monitor, mode) == cb.mode):
            monitor, wanted = cb.monitor, cb.mode
        elif (cb.monitor, cb.mode) != (monitor, wanted):
            raise ValueError(
                f"Trainer(monitor={monitor!r}, mode={wanted or mode!r}) and {cb!r} disagree: the "
                "trainer keeps one record of the best epoch and Checkpoint saves it as "
                "checkpoints/best; give the monitor in one place (or the same in both)"
            )
    if monitor is None:
        monitor = DEFAULT_MONITOR
        wanted = mode_for(monitor, mode)
    assert wanted is not None
    return monitor, wanted
