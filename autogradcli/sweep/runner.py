"""One sweep worker: take trials from the study until the sweep has its trials, each run as a
normal run folder ``<sweep>/trial-007/`` with a ``Pruning`` callback fed from its epochs."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from typing import Any

from ..config import ConfigError
from ..trainer.pruning import Pruning
from ..trainer.run_dir import SUMMARY, RunDir
from .spec import SweepSpec
from .study import ask_lock, optuna_module, remaining

__all__ = ["EXIT_INTERRUPTED", "best_value", "run_trials", "trial_folder"]

EXIT_INTERRUPTED = 130


def trial_folder(number: int) -> str:
    """``trial-007``: the run folder of trial number ``number``."""
    return f"trial-{number:03d}"


def best_value(history: list[dict[str, Any]], metric: str, direction: str) -> float | None:
    """The best finite value of ``metric`` over the epochs (``val_*`` read as ``train_*``
    without validation, as the trainer does)."""
    values = []
    for row in history:
        v = row.get(metric)
        if v is None and metric.startswith("val_"):
            v = row.get("train_" + metric[4:])
        if isinstance(v, (int, float)) and math.isfinite(v):
            values.append(float(v))
    if not values:
        return None
    return max(values) if direction == "maximize" else min(values)


def _mark_pruned(run_dir: str, reason: str) -> None:
    """The run's summary says ``pruned`` (it stopped early on the pruner's word, not failed)."""
    path = os.path.join(run_dir, SUMMARY)
    with open(path, encoding="utf-8") as f:
        summary = json.load(f)
    summary.update(status="pruned", message=reason)
    RunDir(run_dir).write_summary(summary)


def _run_one(spec: SweepSpec, sweep_dir: str, study: Any, trial: Any, say: Callable) -> str:
    """Run ``trial`` and tell the study how it ended; its state (as ``trial_state`` words)."""
    from ..trainer.api import train_from_config
    from .space import suggest

    states = optuna_module().trial.TrialState
    values = {p.path: suggest(trial, p) for p in spec.params}
    folder = trial_folder(trial.number)
    try:
        config = spec.trial_config(values)
    except ConfigError as err:  # values that clash with each other (each alone was checked)
        trial.set_user_attr("message", str(err.issues[0]) if err.issues else str(err))
        study.tell(trial, state=states.FAIL)
        say(f"trial {trial.number}: failed, its config is invalid: {err}")
        return "failed"
    trial.set_user_attr("run", folder)
    pruning = Pruning(trial, spec.metric)
    result = train_from_config(
        config, runs_dir=sweep_dir, folder=folder, progress="none", callbacks=[pruning]
    )
    value = best_value(result.history, spec.metric, spec.direction)
    shown = " ".join(
        f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in values.items()
    )
    if result.status == "interrupted":
        trial.set_user_attr("interrupted", True)
        study.tell(trial, state=states.FAIL)
        say(f"trial {trial.number}: interrupted ({shown}); resume to run it again")
        return "interrupted"
    if pruning.pruned_at is not None:
        _mark_pruned(result.run_dir, pruning.reason)
        study.tell(trial, state=states.PRUNED)
        state = "pruned"
    elif result.status == "completed" and value is not None:
        study.tell(trial, value)
        state = "completed"
    else:
        why = result.message.splitlines()[0] if result.message else ""
        if result.status == "completed":  # ran to the end without logging the metric
            why = f"{spec.metric} was never logged (or never finite)"
        trial.set_user_attr("message", why)
        study.tell(trial, state=states.FAIL)
        state = f"failed ({why})" if why else "failed"
    metric = f"{spec.metric} {value:.4g}" if value is not None else f"{spec.metric} -"
    say(f"trial {trial.number}: {state}, {metric} ({shown}) in {folder}")
    return state.split(" ")[0]


def run_trials(spec: SweepSpec, sweep_dir: str, study: Any, say: Callable = print) -> int:
    """Run trials until the sweep has ``spec.trials`` of them (counting other processes');
    0, or 130 when interrupted (the trial under way is marked interrupted, to be rerun)."""
    states = optuna_module().trial.TrialState
    while True:
        trial = None
        try:
            with ask_lock(sweep_dir):
                if remaining(study, spec) <= 0:
                    return 0
                trial = study.ask()
                trial.set_user_attr("pid", os.getpid())
            if _run_one(spec, sweep_dir, study, trial, say) == "interrupted":
                return EXIT_INTERRUPTED
        except KeyboardInterrupt:
            if trial is not None:
                trial.set_user_attr("interrupted", True)
                study.tell(trial, state=states.FAIL, skip_if_finished=True)
            return EXIT_INTERRUPTED
