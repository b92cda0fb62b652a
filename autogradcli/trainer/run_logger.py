"""``RunLogger``: the callback that writes a run folder's files while a run trains.

``model.txt`` at the start; ``metrics.jsonl`` (appended) and ``summary.json`` after every
epoch; ``metrics.csv``, ``loss.svg`` (and ``acc.svg`` when accuracy is logged) after an epoch
when ``tables_every`` seconds have passed since they were last written (epochs of a few
milliseconds would spend most of their time redrawing them); all of them at the end, however
the run ends; ``traceback.txt`` after an unexpected error. Every write is atomic; the per-epoch
ones and a new folder's first tables and summary are not fsynced (a resume rebuilds them from
the durable checkpoint: an fsync an epoch cost tiny runs most of their time); ``model.txt``,
the summary at the start of ``fit`` and everything at its end are. The per-epoch files are
written by the trainer's ``checkpoint_writer`` thread after that epoch's checkpoint (their
text made at the epoch's end), so the summary never runs ahead of ``checkpoints/last``. The
folder itself (paths, atomic writes, the lock) is ``RunDir``.
"""

from __future__ import annotations

import contextlib
import math
import platform
import sys
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from .._version import __version__
from ..autograd.grad_mode import no_grad
from ..tensor.random import get_rng_state, set_rng_state
from .callbacks import Callback
from .plot import acc_svg, loss_svg
from .run_dir import ACC_SVG, LOSS_SVG, MODEL_TXT, RunDir, jsonable
from .signals import EXIT_CODES, run_exit_code
from .state import now_iso

if TYPE_CHECKING:
    from .trainer import Trainer

__all__ = ["RunLogger", "model_text", "run_summary"]

MODEL_DEPTH = 3  # as `agrad inspect`'s default --depth
TABLES_EVERY_S = 1.0  # metrics.csv and the plots: redrawn at most this often while training


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version(), "numpy": np.__version__, "autogradcli": __version__}
    cupy = sys.modules.get("cupy")  # only when cupy is already in use; never import it here
    if cupy is not None:
        out["cupy"] = getattr(cupy, "__version__", "?")
    return out


def _rows(x: Any) -> str:
    first = x[0] if isinstance(x, (tuple, list)) and x else x
    shape = getattr(first, "shape", None)
    return str(int(shape[0])) if shape else "?"


def model_text(model: Any, sample_input: Any = None, depth: int = MODEL_DEPTH) -> str:
    """The ``agrad inspect`` table of ``model`` run on ``sample_input`` (a training batch: the
    batch size is stated under the table), else ``repr(model)`` and parameter counts."""
    if sample_input is not None:
        try:
            from ..nn.utils.summary import summarize

            was_training = model.training
            rng = get_rng_state()
            try:
                with no_grad():
                    text = summarize(model, sample_input, depth=depth).to_text()
            finally:
                set_rng_state(rng)
                model.train(was_training)
            if text:
                batch = _rows(sample_input)
                head = f"{type(model).__name__} on a training batch of {batch} (as agrad inspect)\n"
                return head + (text if text.endswith("\n") else text + "\n")
        except Exception:
            pass
    params = list(model.parameters())
    total = sum(int(p.numel()) for p in params)
    trainable = sum(int(p.numel()) for p in params if p.requires_grad)
    return (
        f"{model!r}\n\n"
        f"parameters: {total:,}\ntrainable: {trainable:,}\nnon-trainable: {total - trainable:,}\n"
    )


def run_summary(trainer: Trainer, name: str, extra: dict[str, Any]) -> dict[str, Any]:
    """What ``summary.json`` holds."""
    best = trainer.best
    out = {
        "name": name,
        "status": trainer.status,
        "exit_code": run_exit_code(trainer.status) if trainer.status in EXIT_CODES else None,
        "message": trainer.message,
        "run_dir": trainer.run.final_path if trainer.run is not None else None,
        "started_at": trainer.clock.started_at,
        "updated_at": now_iso(),
        "wall_time_s": round(trainer.clock.elapsed(), 3),
        "epochs": trainer.epochs,
        "epochs_completed": trainer.epochs_done,
        "global_step": trainer.global_step,
        "stopped_early": bool(trainer.stop_reason),
        "best": best if best.get("epoch") is not None else None,
        "final": trainer.history[-1] if trainer.history else None,
        "task": trainer.task,
        "device": trainer.device,
        "seed": trainer.seed,
        "sessions": trainer.clock.sessions,
        "versions": _versions(),
    }
    out.update(extra)
    return jsonable(out)


class RunLogger(Callback):
    """Write the run folder ``run``'s files (see the module docstring). ``name`` is the run's
    name in ``summary.json`` and the plot; ``extra`` is merged into ``summary.json``;
    ``tables_every``: the least seconds between two writes of metrics.csv and the plots during
    training (0: every epoch)."""

    order = 200  # after Checkpoint: the summary is written once the epoch's state is saved

    def __init__(
        self,
        run: RunDir,
        name: str = "",
        extra: dict[str, Any] | None = None,
        tables_every: float = TABLES_EVERY_S,
    ) -> None:
        self.run, self.name, self.extra = run, name, dict(extra or {})
        self.tables_every = float(tables_every)
        self._written = 0  # history rows already in metrics.jsonl
        self._queued = 0  # history rows handed to the writer thread
        self._tabled = 0  # history rows already in metrics.csv and the plots
        self._tables_at = -math.inf  # time.monotonic() of their last write
        self._begun = False  # model.txt written by ``begin``

    def begin(self, trainer: Trainer) -> None:
        """A new run folder's first files, before ``fit``: ``model.txt``, the metric tables and
        ``summary.json``, so that the folder is published whole (``RunDir.stage``)."""
        self.name = self.name or type(trainer.model).__name__
        self.run.write_text(MODEL_TXT, model_text(trainer.model, trainer.sample_batch()))
        # not fsynced: ``on_fit_start`` writes the summary again, durably, and the tables are
        # fsynced at the end (a resume rewrites both), as the per-epoch writes
        self._write_tables(trainer, durable=False)
        self._write_summary(trainer, durable=False)
        self._begun = True

    def on_fit_start(self, trainer: Trainer) -> None:
        self.name = self.name or type(trainer.model).__name__
        history = trainer.history
        if history or trainer.batch_in_epoch:  # resumed
            on_disk = [r.get("epoch") for r in self.run.read_metrics()]
            if on_disk != [r.get("epoch") for r in history] or not self.run.metrics_intact():
                # drop epochs after the checkpoint and a torn last line (power loss)
                self.run.write_metrics_jsonl(history)
        elif not self._begun:
            sample = trainer.sample_batch()
            self.run.write_text(MODEL_TXT, model_text(trainer.model, sample))
        self._written = self._queued = len(history)
        if not self._begun or self._tabled != len(history):  # ``begin``'s are still current
            self._write_tables(trainer)
        self._write_summary(trainer)

    def on_epoch_end(self, trainer: Trainer) -> None:
        history = trainer.history
        rows = [jsonable(row) for row in history[self._queued :]]
        self._queued = len(history)
        tables = None
        if self._tabled != len(history) and self._tables_due():
            tables = [dict(row) for row in history]
            self._tabled, self._tables_at = len(history), time.monotonic()
        summary = jsonable(run_summary(trainer, self.name, self.extra))
        writer = getattr(trainer, "checkpoint_writer", None)
        if writer is None:
            self._write_epoch(rows, tables, summary)
        else:  # after this epoch's checkpoint, on its thread
            writer.queue(lambda: self._write_epoch(rows, tables, summary))

    def _write_epoch(
        self, rows: list[dict[str, Any]], tables: list[dict[str, Any]] | None, summary: dict
    ) -> None:
        """An epoch's files, not fsynced: its metrics lines, the tables when due, the summary."""
        for row in rows:
            self.run.append_metrics(row, durable=False)
            self._written += 1
        if tables is not None:
            self._write_table_files(tables, durable=False)
        self.run.write_summary(summary, durable=False)

    def _tables_due(self) -> bool:
        return time.monotonic() - self._tables_at >= self.tables_every

    def on_fit_end(self, trainer: Trainer) -> None:
        with self.run.folder_synced_once():  # one folder fsync for the end's renames
            with contextlib.suppress(Exception):
                self._sync(trainer)
            if trainer.traceback_text:
                with contextlib.suppress(Exception):
                    self.run.write_text("traceback.txt", trainer.traceback_text)
            self._write_summary(trainer)

    def _sync(self, trainer: Trainer) -> None:
        """The end's files, durable: the metrics lines not written yet (a failed or skipped
        epoch write's included), the tables, then metrics.jsonl fsynced."""
        for row in trainer.history[self._written :]:
            self.run.append_metrics(row, durable=False)
        self._written = self._queued = len(trainer.history)
        self._write_tables(trainer, durable=True)
        self.run.sync_metrics()

    def _write_tables(self, trainer: Trainer, durable: bool = True) -> None:
        history = trainer.history
        self._tabled, self._tables_at = len(history), time.monotonic()
        self._write_table_files(history, durable)

    def _write_table_files(self, history: list[dict[str, Any]], durable: bool) -> None:
        self.run.write_metrics_csv(history, durable)
        svg = loss_svg(history, title=f"{self.name}: loss")
        self.run.write_text(LOSS_SVG, svg, durable)
        if any("train_acc" in r or "val_acc" in r for r in history):
            svg = acc_svg(history, title=f"{self.name}: accuracy")
            self.run.write_text(ACC_SVG, svg, durable)

    def _write_summary(self, trainer: Trainer, durable: bool = True) -> None:
        summary = run_summary(trainer, self.name, self.extra)
        self.run.write_summary(summary, durable)

    def state_dict(self) -> dict[str, Any]:
        return {}

    def __repr__(self) -> str:
        return f"RunLogger({self.run.path!r})"
