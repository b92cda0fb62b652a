"""Progress reporters: what a run shows while it trains.

A reporter is a ``Callback`` that the trainer calls after every other callback, plus ``log`` for
one-off messages. ``make_reporter(mode)`` picks one:

- ``"bar"``: rich; a progress bar for the epoch and a live table with one row per epoch and a
  column per logged metric (the columns of ``metrics.csv``), then a summary panel.
- ``"plain"``: one line per epoch (every logged metric, in ``metrics.csv``'s order) and a few lines at the end, printable ASCII only (no colour,
  no carriage returns, no escape sequences): for CI logs, pipes and ``nohup``.
- ``"none"``: silent.
- ``"auto"``: ``bar`` when stdout is a terminal, else ``plain``.
"""

from __future__ import annotations

import math
import re
import sys
import time
from typing import IO, TYPE_CHECKING, Any

from .callbacks import Callback
from .run_dir import metric_columns

if TYPE_CHECKING:
    from .trainer import Trainer

__all__ = [
    "NullReporter",
    "PlainReporter",
    "Reporter",
    "RichReporter",
    "format_metric",
    "make_reporter",
]

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
BAR_REFRESH_HZ = 8  # the live display's redraws a second
BAR_EVERY_S = 0.1  # the bar's step count and loss, updated at most this often (under a redraw)


def format_metric(key: str, value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        if key.endswith("acc"):
            return f"{value:.4f}"
        if key == "time":
            return f"{value:.2f}s"
        if key.startswith("lr"):
            return f"{value:.3g}"
        return f"{value:.4f}" if 1e-3 <= abs(value) < 1e4 else f"{value:.3e}"
    return str(value)


class Reporter(Callback):
    """The interface: the Callback hooks plus ``log(message)``. Runs after every other
    callback, so it shows what they logged."""

    order = 1000

    def log(self, message: str) -> None:
        pass


class NullReporter(Reporter):
    """Shows nothing."""


def shown_columns(history: list[dict[str, Any]]) -> list[str]:
    """The metrics a reporter shows, in ``metrics.csv``'s order (without epoch and step)."""
    return [c for c in metric_columns(history) if c not in ("epoch", "step")]


def _final_lines(trainer: Trainer) -> list[str]:
    lines = []
    status = trainer.status
    line = f"run {status}"
    message = trainer.message.splitlines()
    if message:
        line += f": {message[0]}"
    lines.append(line)
    lines += message[1:]  # where in the user's code an error came from
    best = trainer.best
    if best and best.get("epoch") is not None:
        metrics = "  ".join(
            f"{k} {format_metric(k, best['metrics'].get(k))}"
            for k in ("train_loss", "val_loss", "val_acc")
            if best["metrics"].get(k) is not None
        )
        lines.append(f"best epoch {best['epoch']} ({best['monitor']} {best['mode']}): {metrics}")
    if trainer.history:
        final = trainer.history[-1]
        metrics = "  ".join(
            f"{k} {format_metric(k, final.get(k))}"
            for k in ("train_loss", "train_acc", "val_loss", "val_acc")
            if final.get(k) is not None
        )
        lines.append(f"final (epoch {final['epoch']}): {metrics}")
    test = getattr(trainer, "test_metrics", None)  # set by evaluate.TestEvaluation
    if test:
        metrics = "  ".join(
            f"{k} {format_metric(k, v)}"
            for k, v in test.items()
            if k.startswith("test_") and v is not None
        )
        where = f"{test['checkpoint']} checkpoint, epoch {test['epoch']}, {test['samples']} samples"
        lines.append(f"test ({where}): {metrics}")
    if trainer.run is not None:
        lines.append(f"run folder: {trainer.run.path}")
    return lines


class PlainReporter(Reporter):
    """One line per epoch, printable characters only."""

    def __init__(self, file: IO[str] | None = None) -> None:
        self.file = file

    def _print(self, text: str) -> None:
        out = self.file if self.file is not None else sys.stdout
        out.write(_CONTROL.sub(" ", text) + "\n")
        out.flush()

    def log(self, message: str) -> None:
        for line in str(message).splitlines() or [""]:
            self._print(line)

    def on_fit_start(self, trainer: Trainer) -> None:
        where = f" -> {trainer.run.path}" if trainer.run is not None else ""
        start = f" (resuming after epoch {trainer.epoch})" if trainer.epoch else ""
        self._print(f"training {trainer.epochs} epochs on {trainer.device}{start}{where}")

    def on_epoch_end(self, trainer: Trainer) -> None:
        m = trainer.metrics
        parts = [f"epoch {trainer.epoch}/{trainer.epochs}"]
        for key in shown_columns([m]):
            if m.get(key) is not None:
                parts.append(f"{key} {format_metric(key, m[key])}")
        self._print("  ".join(parts))

    def on_fit_end(self, trainer: Trainer) -> None:
        for line in _final_lines(trainer):
            self._print(line)


class RichReporter(Reporter):
    """A rich progress bar per epoch above a live table of finished epochs."""

    def __init__(self, console: Any = None) -> None:
        from rich.console import Console

        self.console = console if console is not None else Console()
        self._live: Any = None
        self._progress: Any = None
        self._task: Any = None
        self._rows: list[dict[str, Any]] = []
        self._pending = 0  # steps done since the bar was last updated
        self._shown_at = -math.inf  # time.monotonic() of that update

    def _table(self) -> Any:
        from rich.table import Table

        table = Table(box=None, pad_edge=False, collapse_padding=True, header_style="bold")
        columns = shown_columns(self._rows)
        table.add_column("epoch", justify="right", no_wrap=True, min_width=5)
        for key in columns:  # whole names: a metric is never shown as "train_lo…"
            table.add_column(key, justify="right", no_wrap=True, min_width=len(key))
        for m in self._rows[-50:]:
            table.add_row(str(m.get("epoch")), *(format_metric(k, m.get(k)) for k in columns))
        return table

    def _render(self) -> Any:
        from rich.console import Group

        return Group(self._table(), self._progress)

    def log(self, message: str) -> None:
        self.console.print(message, markup=False, highlight=False)

    def on_fit_start(self, trainer: Trainer) -> None:
        from rich.live import Live
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        where = f" -> {trainer.run.path}" if trainer.run is not None else ""
        self.console.print(
            f"training {trainer.epochs} epochs on {trainer.device}{where}",
            markup=False,
            highlight=False,
        )
        for row in trainer.history:  # resumed: show the epochs already done
            self._add_row(row)
        self._progress = Progress(
            TextColumn("epoch {task.fields[epoch]}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("loss {task.fields[loss]}"),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=self.console,
        )
        self._task = self._progress.add_task("train", total=1, epoch="", loss="-", rate="")
        self._live = Live(self._render(), console=self.console, refresh_per_second=BAR_REFRESH_HZ)
        self._live.start()

    def on_epoch_start(self, trainer: Trainer) -> None:
        if self._progress is None:
            return
        self._pending, self._shown_at = 0, -math.inf
        self._progress.reset(
            self._task,
            total=trainer.batches_per_epoch or None,
            completed=trainer.batch_in_epoch,
            epoch=f"{trainer.epoch}/{trainer.epochs}",
            loss="-",
            # the last epoch's rate stays until this one's is measured
            rate=self._progress.tasks[0].fields.get("rate", ""),
        )

    def on_batch_end(self, trainer: Trainer) -> None:
        if self._progress is None:
            return
        self._pending += 1
        if time.monotonic() - self._shown_at >= BAR_EVERY_S:
            self._show_steps(trainer)

    def _show_steps(self, trainer: Trainer) -> None:
        """Move the bar by the steps done since its last update, with the latest loss."""
        self._progress.update(
            self._task, advance=self._pending, loss=format_metric("loss", trainer.batch_loss)
        )
        self._pending, self._shown_at = 0, time.monotonic()
        speed = self._progress.tasks[0].speed
        if speed:
            self._progress.update(self._task, rate=f"{speed:.1f} steps/s")

    def _add_row(self, m: dict[str, Any]) -> None:
        self._rows.append(dict(m))

    def on_epoch_end(self, trainer: Trainer) -> None:
        if self._progress is not None and self._pending:
            self._show_steps(trainer)
        self._add_row(trainer.metrics)
        if self._live is not None:
            self._live.update(self._render())

    def _stop(self) -> None:
        if self._live is not None:
            self._live.update(self._table())
            self._live.stop()
            self._live = None

    def on_exception(self, trainer: Trainer, exception: BaseException) -> None:
        self._stop()

    def on_fit_end(self, trainer: Trainer) -> None:
        from rich.panel import Panel

        self._stop()
        style = {"completed": "green", "interrupted": "yellow"}.get(trainer.status, "red")
        text = "\n".join(_final_lines(trainer))
        from rich.text import Text

        self.console.print(Panel(Text(text), title="summary", border_style=style, expand=False))


def make_reporter(mode: str = "auto", console: Any = None) -> Reporter:
    """A reporter for ``mode`` (``auto`` | ``bar`` | ``plain`` | ``none``).

    ``console``: a ``rich.console.Console`` for ``bar`` (its file is used by ``plain``), or a text
    stream for ``plain``; default stdout.
    """
    if mode == "auto":
        stream = getattr(console, "file", console) if console is not None else sys.stdout
        isatty = getattr(stream, "isatty", None)
        tty = bool(isatty and isatty())
        if console is not None and hasattr(console, "is_terminal"):
            tty = bool(console.is_terminal)
        mode = "bar" if tty else "plain"
    if mode == "bar":
        return RichReporter(console)
    if mode == "plain":
        stream = getattr(console, "file", console)
        return PlainReporter(stream)
    if mode == "none":
        return NullReporter()
    raise ValueError(f"progress must be 'auto', 'bar', 'plain' or 'none', got {mode!r}")
