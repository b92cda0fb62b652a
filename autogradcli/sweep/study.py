"""The sweep folder and its Optuna study (``study.db``, SQLite): made, reopened (refused when
another config made it), trials counted, and trials interrupted mid-way queued again."""

from __future__ import annotations

import contextlib
import json
import os
import time
import weakref
from collections.abc import Iterator
from typing import Any

from .._utils.atomic import atomic_write_text
from .spec import SweepSpec

__all__ = [
    "MANIFEST",
    "STUDY_DB",
    "SweepError",
    "ask_lock",
    "close_study",
    "make_sweep_dir",
    "open_study",
    "optuna_module",
    "read_manifest",
    "remaining",
    "requeue_interrupted",
    "trial_state",
]

STUDY_DB = "study.db"
MANIFEST = "sweep.json"  # how to rebuild the sweep: the config text, overrides, params, space
STUDY_NAME = "sweep"
_STORAGES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # study -> its RDBStorage


class SweepError(Exception):
    """A sweep that cannot start or continue for the user's reason (exit code 2)."""


def optuna_module() -> Any:
    """``optuna``, imported on first use, with its INFO chatter off."""
    try:
        import optuna
    except ImportError:
        raise SweepError("agrad sweep needs Optuna: pip install 'autogradcli[sweep]'") from None
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna


def make_sweep_dir(runs_dir: str, name: str, manifest: dict[str, Any]) -> str:
    """A new ``<runs_dir>/<name>-sweep-<YYYYmmdd-HHMMSS>`` folder holding ``sweep.json``."""
    os.makedirs(runs_dir, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for n in range(100):
        path = os.path.join(runs_dir, f"{name}-sweep-{stamp}" + (f"-{n + 1}" if n else ""))
        try:
            os.mkdir(path)
        except FileExistsError:
            continue
        atomic_write_text(os.path.join(path, MANIFEST), json.dumps(manifest, indent=2) + "\n")
        return os.path.abspath(path)
    raise SweepError(f"could not make a new sweep folder in {runs_dir}")


def read_manifest(sweep_dir: str) -> dict[str, Any]:
    """``sweep.json`` of a sweep folder; SweepError when it is not one."""
    path = os.path.join(sweep_dir, MANIFEST)
    if not os.path.isfile(os.path.join(sweep_dir, STUDY_DB)) or not os.path.isfile(path):
        raise SweepError(f"{sweep_dir} is not a sweep folder (no {STUDY_DB} and {MANIFEST})")
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as err:
        raise SweepError(f"{path}: cannot read it: {err}") from None


def _sampler(optuna: Any, spec: SweepSpec, worker: int) -> Any:
    seed = spec.settings["seed"]
    seed = (spec.config.data.get("seed", 0) if seed is None else seed) + 1000 * worker
    if spec.settings["sampler"] == "tpe":
        startup = max(1, min(10, spec.trials // 2))  # random trials before TPE models them
        return optuna.samplers.TPESampler(seed=seed, n_startup_trials=startup)
    return optuna.samplers.RandomSampler(seed=seed)  # grid: every point is queued


def _pruner(optuna: Any, spec: SweepSpec) -> Any:
    if spec.settings["pruner"] == "none":
        return optuna.pruners.NopPruner()
    return optuna.pruners.MedianPruner(
        n_startup_trials=spec.settings["pruner_startup"],
        n_warmup_steps=spec.settings["pruner_warmup"] + 1,  # steps are 1-based epochs
    )


def _wal_connection() -> type:
    """A sqlite3 connection in WAL mode with ``synchronous=NORMAL``: a killed process loses
    nothing committed and the file is never torn, without an fsync per commit (Optuna commits
    several times per trial; with the default journal, making a study took 3x longer)."""
    import sqlite3

    class WalConnection(sqlite3.Connection):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.execute("PRAGMA journal_mode=WAL")
            self.execute("PRAGMA synchronous=NORMAL")

    return WalConnection


def open_study(sweep_dir: str, spec: SweepSpec, *, create: bool, worker: int = 0) -> Any:
    """The study in ``sweep_dir/study.db``: made (with the config's hash and, for a grid,
    every point queued) when ``create``, else loaded and checked against ``spec``."""
    optuna = optuna_module()
    url = f"sqlite:///{os.path.join(os.path.abspath(sweep_dir), STUDY_DB)}"
    # --jobs N processes write one SQLite file: wait for its lock rather than fail at 5 s
    connect = {"timeout": 120, "factory": _wal_connection()}
    storage = optuna.storages.RDBStorage(url, engine_kwargs={"connect_args": connect})
    kwargs = {"sampler": _sampler(optuna, spec, worker), "pruner": _pruner(optuna, spec)}
    if create:
        study = optuna.create_study(
            study_name=STUDY_NAME, storage=storage, direction=spec.direction, **kwargs
        )
        _STORAGES[study] = storage
        study.set_user_attr("config_hash", spec.hash())
        study.set_user_attr("metric", spec.metric)
        for point in spec.grid[: spec.trials]:
            study.enqueue_trial(point)
        return study
    try:
        study = optuna.load_study(study_name=STUDY_NAME, storage=storage, **kwargs)
    except KeyError:
        raise SweepError(f"{sweep_dir}/{STUDY_DB} holds no sweep study") from None
    _STORAGES[study] = storage
    made_by = study.user_attrs.get("config_hash")
    if made_by != spec.hash():
        close_study(study)
        raise SweepError(
            f"{sweep_dir}/{STUDY_DB} was made by another config or search space (hash "
            f"{made_by}, this one {spec.hash()}): resume it without CONFIG, or start a new sweep"
        )
    return study


def close_study(study: Any) -> None:
    """Close the study's database connections: the last one out folds the WAL file back in,
    leaving ``study.db`` alone in the folder."""
    storage = _STORAGES.pop(study, None)
    if storage is not None:
        storage.remove_session()
        storage.engine.dispose()


def trial_state(t: Any) -> str:
    """A trial's state as the table shows it: completed | pruned | failed | interrupted |
    running | waiting."""
    name = t.state.name.lower()
    if name == "complete":
        return "completed"
    if name == "fail":
        return "interrupted" if t.user_attrs.get("interrupted") else "failed"
    return "failed" if name == "fail" else name


def remaining(study: Any, spec: SweepSpec) -> int:
    """Trials still to start: the target less those finished (an interrupted one does not
    count: it is run again) and those running in any process."""
    counted = ("completed", "pruned", "failed", "running")
    done = sum(trial_state(t) in counted for t in study.get_trials(deepcopy=False))
    return spec.trials - done


@contextlib.contextmanager
def ask_lock(sweep_dir: str) -> Iterator[None]:
    """Held while a process counts the trials and starts one, so that N processes sharing the
    study start exactly the trials the sweep needs (and a grid point once)."""
    fd = os.open(os.path.join(sweep_dir, ".ask.lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX)
        except ImportError:  # not POSIX: one process per sweep
            pass
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _alive(pid: Any) -> bool:
    if not isinstance(pid, int):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _finished_run(sweep_dir: str, t: Any) -> tuple[str, list[dict]] | None:
    """(status, epochs) of a trial's run folder that ended (its process was killed after the
    run finished, before the study heard of it), or None."""
    from ..trainer.run_dir import RunDir

    folder = os.path.join(sweep_dir, str(t.user_attrs.get("run", "")))
    try:
        with open(os.path.join(folder, "summary.json"), encoding="utf-8") as f:
            status = json.load(f).get("status")
        history = RunDir(folder).read_metrics()
    except (OSError, ValueError, AttributeError):
        return None
    return (status, history) if status in ("completed", "pruned") else None


def requeue_interrupted(study: Any, sweep_dir: str, spec: SweepSpec) -> list[int]:
    """Trials left ``running`` by a process that is gone (killed): one whose run had finished
    is told its result; the others are marked interrupted. Every interrupted trial not yet
    queued again is queued with its parameters. The numbers of those queued."""
    from .runner import best_value

    optuna = optuna_module()
    states = optuna.trial.TrialState
    storage = study._storage  # the public BaseStorage API, for trials of other processes
    for t in study.get_trials(deepcopy=False, states=(states.RUNNING,)):
        if _alive(t.user_attrs.get("pid")):
            continue
        ended = _finished_run(sweep_dir, t)
        value = best_value(ended[1], spec.metric, spec.direction) if ended else None
        if ended and ended[0] == "completed" and value is not None:
            study.tell(t.number, value, skip_if_finished=True)
        elif ended and ended[0] == "pruned":
            study.tell(t.number, state=states.PRUNED, skip_if_finished=True)
        else:
            storage.set_trial_user_attr(t._trial_id, "interrupted", True)
            study.tell(t.number, state=states.FAIL, skip_if_finished=True)
    trials = study.get_trials(deepcopy=False)
    retried = {t.user_attrs.get("retry_of") for t in trials}
    queued = []
    for t in trials:
        if trial_state(t) == "interrupted" and t.number not in retried:
            study.enqueue_trial(dict(t.params), user_attrs={"retry_of": t.number})
            queued.append(t.number)
    return queued
