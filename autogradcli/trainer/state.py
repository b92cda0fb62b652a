"""Checkpoint state: everything that decides the numbers of a run, saved and restored.

Weights, optimizer and scheduler state, the global RNG and the data-order ``Generator``,
counters, callback state, best/history and the partial sums of an unfinished epoch: a resumed
run ends with the same weights, bit for bit on the CPU, as one that never stopped.
"""

from __future__ import annotations

import datetime as _dt
import time
from typing import TYPE_CHECKING, Any

from .._utils.atomic import atomic_open
from ..data.generator import Generator
from ..serialization import load
from ..serialization.archive import Prepared, prepare_archive, write_prepared
from ..serialization.format import SerializationError
from ..tensor.random import get_rng_state, set_rng_state
from ..tensor.tensor import Tensor
from .run_dir import write_error

if TYPE_CHECKING:
    from .trainer import Trainer

__all__ = ["CHECKPOINT_FORMAT", "RunClock", "TrainingState"]

CHECKPOINT_FORMAT = "autogradcli.trainer/1"


def now_iso() -> str:
    return _dt.datetime.now().astimezone().isoformat(timespec="seconds")


class RunClock:
    """Wall time over every session of a run (a resumed run adds to the saved total)."""

    def __init__(self) -> None:
        self.started_at = now_iso()
        self.before = 0.0  # seconds of earlier sessions
        self.sessions = 0
        self._t0 = 0.0

    def start(self) -> None:
        self._t0 = time.perf_counter()
        self.sessions += 1

    def elapsed(self) -> float:
        return self.before + (time.perf_counter() - self._t0 if self._t0 else 0.0)

    def state_dict(self) -> dict[str, Any]:
        return {
            "wall_time": self.elapsed(),
            "sessions": self.sessions,
            "started_at": self.started_at,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.before = float(state.get("wall_time", 0.0))
        self.sessions = int(state.get("sessions", 0))
        self.started_at = state.get("started_at", self.started_at)


def _plain_state(state: dict[str, Any]) -> dict[str, Any]:
    """A scheduler's state_dict without what cannot be saved (lambdas: they come from code)."""
    return {k: v for k, v in state.items() if not callable(v) or isinstance(v, Tensor)}


def _callback_key(callbacks: list[Any], index: int) -> str:
    name = type(callbacks[index]).__name__
    same = sum(1 for c in callbacks[:index] if type(c).__name__ == name)
    return f"{name}#{same}" if same else name


# the entries of a checkpoint and the types they must have
_REQUIRED: dict[str, type | tuple[type, ...]] = {
    "model": dict,
    "optimizer": dict,
    "epoch": int,
    "batch_in_epoch": int,
    "global_step": int,
    "best": dict,
    "history": list,
}


def _check_checkpoint(path: str, state: Any) -> None:
    """Refuse what is not a ``TrainingState.state_dict()``, naming the file and the entry."""
    if not isinstance(state, dict):
        raise SerializationError(
            f"{path}: not a trainer checkpoint: its root is a {type(state).__name__}, "
            "not a dict (a file saved by autogradcli.save, not by agrad train?)"
        )
    if state.get("format") != CHECKPOINT_FORMAT:
        raise SerializationError(
            f"{path}: not a trainer checkpoint (format {state.get('format')!r}, "
            f"expected {CHECKPOINT_FORMAT!r})"
        )
    missing = [k for k in _REQUIRED if k not in state]
    if missing:
        raise SerializationError(f"{path}: trainer checkpoint without {', '.join(missing)}")
    for key, kind in _REQUIRED.items():
        value = state[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise SerializationError(
                f"{path}: checkpoint entry {key!r} is a {type(value).__name__}, "
                f"not a {getattr(kind, '__name__', kind)}"
            )
        if kind is int and value < 0:
            raise SerializationError(f"{path}: checkpoint entry {key!r} is negative ({value})")
    if "rng" not in state:
        raise SerializationError(f"{path}: trainer checkpoint without rng")


class TrainingState:
    """Saves and restores a ``Trainer``'s checkpoint and its RNG states."""

    def __init__(self, trainer: Trainer) -> None:
        self.trainer = trainer

    # ------------------------------------------------------------------ RNG
    def _generator(self) -> Generator | None:
        gen = getattr(self.trainer.train_loader, "generator", None)
        return gen if isinstance(gen, Generator) else None

    def rng(self) -> dict[str, Any]:
        """The global RNG and the data-order generator, now."""
        gen = self._generator()
        return {"rng": get_rng_state(), "data_generator": gen.get_state() if gen else None}

    def restore_rng(self, state: dict[str, Any] | None, data: bool = True) -> None:
        if not state:
            return
        set_rng_state(state["rng"])
        gen = self._generator()
        if data and gen is not None and state.get("data_generator") is not None:
            gen.set_state(state["data_generator"])

    def seed(self, seed: int) -> None:
        """Seed the global RNG and the data-order generator (a fresh run)."""
        from ..tensor.random import manual_seed

        manual_seed(seed)
        gen = self._generator()
        if gen is not None:
            gen.manual_seed(seed)

    # ------------------------------------------------------------------ checkpoints
    def state_dict(self) -> dict[str, Any]:
        """Everything needed to continue the run exactly."""
        t = self.trainer
        partial = t.batch_in_epoch > 0
        sched = t.scheduler.state_dict() if t.scheduler is not None else None
        cb_state = {}
        for i, cb in enumerate(t.callbacks):
            get = getattr(cb, "state_dict", None)
            if callable(get):
                cb_state[_callback_key(t.callbacks, i)] = get()
        return {
            "format": CHECKPOINT_FORMAT,
            "model": t.model.state_dict(),
            "optimizer": t.optimizer.state_dict(),
            "scheduler": _plain_state(sched) if sched is not None else None,
            "epoch": t.epochs_done,
            "batch_in_epoch": t.batch_in_epoch,
            "global_step": t.global_step,
            "epochs": t.epochs,
            **self.rng(),
            "epoch_start": t.epoch_start_rng if partial else None,
            "partial": t.epoch_sums.state_dict() if partial else None,
            "best": t.best,
            "history": t.history,
            "callbacks": cb_state,
            "should_stop": t.should_stop,
            "stop_reason": t.stop_reason,
            **t.clock.state_dict(),
        }

    def snapshot(self, copy: bool = True) -> Prepared:
        """The checkpoint of now, serialized but for the archive itself; ``copy``: its arrays
        copied, so ``write`` can save it later, on another thread, whatever training changes
        meanwhile (without: views of the live state, for a write at once)."""
        return prepare_archive(self.state_dict(), copy)

    def save(self, path: str, sync_folder: bool = True) -> None:
        """Write the checkpoint of now (``write`` of a ``snapshot()``), in this thread."""
        self.write(self.snapshot(copy=False), path, sync_folder)

    @staticmethod
    def write(prepared: Prepared, path: str, sync_folder: bool = True) -> None:
        """Write a ``snapshot()`` atomically and durably (the file fsynced, then renamed over
        ``path``, then its folder fsynced unless ``sync_folder`` is False: the caller's next
        rename there fsyncs it, as ``Checkpoint`` linking ``best`` does). On failure (disk full)
        the previous one is kept and a ``RunFolderError`` names the file."""
        try:
            with atomic_open(path, "wb", sync_folder=sync_folder) as out:
                write_prepared(prepared, out)
        except OSError as err:
            raise write_error(path, err) from None

    def load(self, path: str) -> None:
        """Restore the checkpoint at ``path``; a file that is not a trainer checkpoint (another
        root, missing or mistyped entries) is a ``SerializationError`` naming it."""
        state = load(path)
        _check_checkpoint(path, state)
        try:
            self.load_state_dict(state)
        except (KeyError, TypeError, ValueError, AttributeError, RuntimeError) as err:
            raise SerializationError(
                f"{path}: not a usable trainer checkpoint: {type(err).__name__}: {err}"
            ) from None

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a ``state_dict()``; the trainer's next ``fit()`` continues from there."""
        if state.get("format") != CHECKPOINT_FORMAT:
            raise ValueError(
                f"not a trainer checkpoint (format {state.get('format')!r}, "
                f"expected {CHECKPOINT_FORMAT!r})"
            )
        t = self.trainer
        t.model.load_state_dict(state["model"])
        t.optimizer.load_state_dict(state["optimizer"])
        if t.scheduler is not None and state.get("scheduler") is not None:
            t.scheduler.load_state_dict(state["scheduler"])
        t.epochs_done = t.epoch = int(state["epoch"])
        t.batch_in_epoch = int(state["batch_in_epoch"])
        t.global_step = int(state["global_step"])
        t.best = dict(state["best"])
        t.history = [dict(r) for r in state["history"]]
        t.should_stop = bool(state.get("should_stop", False))
        t.stop_reason = state.get("stop_reason", "")
        t.clock.load_state_dict(state)
        if t.batch_in_epoch:
            t.epoch_sums.load_state_dict(state["partial"])
            t.epoch_start_rng = state["epoch_start"]
        saved = state.get("callbacks", {})
        for i, cb in enumerate(t.callbacks):
            key = _callback_key(t.callbacks, i)
            if key in saved and callable(getattr(cb, "load_state_dict", None)):
                cb.load_state_dict(saved[key])
        t.resume_rng = {"rng": state["rng"], "data_generator": state["data_generator"]}
