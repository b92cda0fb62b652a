"""The run folder: ``<runs>/<name>-<YYYYmmdd-HHMMSS>-<id>/`` and every file a run writes there.

Layout::

    config.yaml            the config text exactly as given
    config.resolved.yaml   every default filled in, file paths absolute (what ``resume`` reads)
    data_state.json        what the data's kind learned from the training rows (plain JSON),
                           read back by eval, predict, inspect and resume
    metrics.jsonl          one JSON object per epoch, appended and flushed (fsynced at the end)
    metrics.csv            the same table, rewritten atomically every epoch
    summary.json           status, exit code, best/final metrics, versions... (atomic)
    model.txt              the model table (``nn.utils.summary``) or repr + parameter counts
    loss.svg               train/val loss per epoch
    acc.svg                train/val accuracy per epoch (when accuracy is logged)
    checkpoints/last       the latest state (``autogradcli.save``, atomic)
    checkpoints/best       the state at the best monitored metric

Every whole-file write goes through a temporary file in the same folder and ``os.replace``, so
a crash leaves either the old file or the new one, never a torn one. Configs, the data state,
checkpoints and the files a run ends with are fsynced (durable across a power loss); the
per-epoch rewrites of the tables, plots and summary are not (``durable=False``), since a resume
rebuilds them from the checkpoint (bench/README.md, "Outside the training step"). A new
folder is made the same way: as a hidden ``.<name>.partial`` that is renamed once its first
files (configs, model.txt, summary.json) are written (``RunDir.stage``/``publish``).
"""

from __future__ import annotations

import contextlib
import csv
import errno
import io
import json
import math
import os
import re
import secrets
import shutil
import time
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from .._utils.atomic import atomic_write_text as _atomic_write_text
from .._utils.atomic import fsync_directory
from .data_state import sample_problem

__all__ = [
    "CHECKPOINTS",
    "DATA_STATE",
    "RunDir",
    "RunFolderError",
    "RunFolderNotMade",
    "atomic_write_text",
    "jsonable",
    "metric_columns",
    "write_error",
]

CHECKPOINTS = "checkpoints"
CONFIG = "config.yaml"
RESOLVED_CONFIG = "config.resolved.yaml"
DATA_STATE = "data_state.json"
METRICS_JSONL = "metrics.jsonl"
METRICS_CSV = "metrics.csv"
SUMMARY = "summary.json"
MODEL_TXT = "model.txt"
LOSS_SVG = "loss.svg"
ACC_SVG = "acc.svg"

# the first columns of metrics.csv, in this order; any other metric follows, sorted; then time
BASE_COLUMNS = ("epoch", "step", "train_loss", "train_acc", "val_loss", "val_acc", "lr")
LAST_COLUMNS = ("time",)

_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]+")


class RunFolderError(RuntimeError):
    """A run folder's file could not be written (disk full, quota, permissions) or read (not a
    run folder's file): the message names the file and what is wrong."""


class RunFolderNotMade(RunFolderError):
    """A new run folder could not be made (disk full...): nothing was left behind and no run
    started, so it is a usage error (exit 2), not a failed run."""


def os_reason(err: OSError) -> str:
    """What ``err`` means for a person: ``the disk is full (No space left on device)``..."""
    reason = err.strerror or str(err)
    if err.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
        reason = f"the disk is full ({reason})"
    elif err.errno == errno.EFBIG:
        reason = f"the file size limit was reached ({reason})"
    return reason


def write_error(path: str, err: OSError) -> RunFolderError:
    """A ``RunFolderError`` for ``err`` (raised writing ``path``) that says what happened."""
    return RunFolderError(f"cannot write {path}: {os_reason(err)}")


def atomic_write_text(path: str, text: str, durable: bool = True, sync_folder: bool = True) -> None:
    """Write ``text`` to ``path`` through a temporary file (+ fsync when ``durable``) + rename
    (mode 0644), then fsync the folder (``durable`` and ``sync_folder``)."""
    _atomic_write_text(path, text, permissions=0o644, durable=durable, sync_folder=sync_folder)


def jsonable(value: Any) -> Any:
    """``value`` with numpy scalars/0-d tensors made Python numbers and NaN/inf made null."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value
    if hasattr(value, "item") and not isinstance(value, float):
        try:
            value = value.item()
        except Exception:
            return str(value)
        return jsonable(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    return str(value)


def metric_columns(history: Iterable[dict[str, Any]]) -> list[str]:
    """The CSV columns for ``history``: the base columns present, the others sorted, then
    ``time``. Reporters show the same columns in the same order."""
    keys: set[str] = set()
    for row in history:
        keys.update(row)
    fixed = set(BASE_COLUMNS) | set(LAST_COLUMNS)
    return (
        [c for c in BASE_COLUMNS if c in keys]
        + sorted(keys - fixed)
        + [c for c in LAST_COLUMNS if c in keys]
    )


# what a summary.json keeps when the disk has room for no more (``RunDir.write_summary``)
SUMMARY_CORE = ("name", "status", "exit_code", "message", "run_dir", "started_at", "updated_at")
SUMMARY_CORE += ("epochs", "epochs_completed", "global_step")


def _overwrite(path: str, text: str) -> bool:
    """Write ``text`` over ``path`` in place (no temporary file); whether it all went."""
    try:
        with open(path, "r+" if os.path.exists(path) else "w", encoding="utf-8") as f:
            f.write(text)
            f.truncate()
            f.flush()
            os.fsync(f.fileno())
    except OSError:
        return False
    return True


def _safe_name(name: str) -> str:
    name = _UNSAFE.sub("-", name).strip("-.")
    return name[:80] or "run"


class RunDir:
    """One run's folder. ``RunDir.create(runs_dir, name)`` makes a new one (never reusing a
    folder, even for two runs started in the same second); ``RunDir(path)`` opens an existing
    one (``resume``)."""

    def __init__(self, path: str) -> None:
        self.path = os.path.abspath(path)
        if not os.path.isdir(self.path):
            raise FileNotFoundError(f"run folder {path!r} does not exist")
        self.final_path = self.path  # where the folder is seen (see ``stage``)
        self.published = True
        self._folder_sync_deferred = False  # inside ``folder_synced_once``

    # ------------------------------------------------------------------ creation
    @classmethod
    def create(cls, runs_dir: str, name: str, *, now: float | None = None) -> RunDir:
        """Make ``<runs_dir>/<name>-<YYYYmmdd-HHMMSS>-<6 hex>`` and its ``checkpoints`` folder
        (never reusing a folder, even for two runs started in the same second)."""
        run = cls.stage(runs_dir, name, now=now)
        try:
            run.publish()
        except BaseException:
            run.discard()
            raise
        return run

    @classmethod
    def stage(
        cls, runs_dir: str, name: str, *, now: float | None = None, folder: str | None = None
    ) -> RunDir:
        """A new run folder made out of sight, as ``.<final name>.partial`` (``agrad runs``
        skips dot folders): its first files go there, then ``publish()`` renames it to
        ``final_path``, so a failure part-way (disk full) leaves no half-made run folder
        (``discard()`` removes it). ``folder``: that exact folder name (a sweep's
        ``trial-007``) instead of ``<name>-<stamp>-<id>``."""
        os.makedirs(runs_dir, exist_ok=True)
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
        base = _safe_name(name)
        for _ in range(100):
            final = os.path.join(runs_dir, folder or f"{base}-{stamp}-{secrets.token_hex(3)}")
            staging = os.path.join(runs_dir, f".{os.path.basename(final)}.partial")
            if os.path.lexists(final):
                continue
            try:
                os.mkdir(staging)  # exclusive: no other process stages this name
            except FileExistsError:
                continue
            try:
                os.mkdir(os.path.join(staging, CHECKPOINTS))
            except OSError:
                os.rmdir(staging)
                raise
            run = cls(staging)
            run.final_path, run.published = os.path.abspath(final), False
            return run
        raise FileExistsError(f"could not create a new run folder in {runs_dir!r}")

    def publish(self) -> None:
        """Rename a staged folder to its final name (atomic: it appears whole)."""
        if self.published:
            return
        if os.path.lexists(self.final_path):
            raise FileExistsError(f"run folder {self.final_path} already exists")
        fsync_directory(self.path)  # its files' names, written without a folder fsync each
        os.rename(self.path, self.final_path)
        fsync_directory(os.path.dirname(self.final_path))
        self.path, self.published = self.final_path, True

    def discard(self) -> None:
        """Remove a staged folder that was never published (its creation failed)."""
        if not self.published:
            self.unlock()
            shutil.rmtree(self.path, ignore_errors=True)

    def not_made(self, err: OSError) -> RunFolderNotMade:
        """The error for a staged folder whose first files could not be written."""
        where = f" (writing {os.path.basename(err.filename)})" if err.filename else ""
        return RunFolderNotMade(
            f"cannot make the run folder {self.final_path}: {os_reason(err)}{where}"
        )

    @classmethod
    def make_or_reuse(cls, path: str | os.PathLike, *, fresh: bool = True) -> RunDir:
        """The run folder at ``path`` (``Trainer(run="some/folder")``), made with its
        ``checkpoints`` folder when absent. For a ``fresh`` run, a folder that already holds a
        run is refused: the new run's records would be mixed into the old one's."""
        path = os.fspath(path)
        if os.path.exists(path) and not os.path.isdir(path):
            raise NotADirectoryError(f"run folder {path!r} is a file, not a folder")
        if fresh and cls._holds_run(path):
            raise FileExistsError(
                f"run folder {path!r} already holds a run (summary.json, metrics.jsonl or "
                f"checkpoints/last): pass resume_from={path!r} to continue it, or name a new "
                "folder"
            )
        try:
            os.makedirs(os.path.join(path, CHECKPOINTS), exist_ok=True)
        except OSError as err:
            raise write_error(path, err) from None
        return cls(path)

    @staticmethod
    def _holds_run(path: str) -> bool:
        names = (SUMMARY, METRICS_JSONL, os.path.join(CHECKPOINTS, "last"))
        return any(os.path.exists(os.path.join(path, n)) for n in names)

    # ------------------------------------------------------------------ paths
    def file(self, name: str) -> str:
        return os.path.join(self.path, name)

    def checkpoint_path(self, name: str) -> str:
        """``checkpoints/<name>`` (``last`` or ``best``)."""
        return os.path.join(self.path, CHECKPOINTS, name)

    @property
    def name(self) -> str:
        return os.path.basename(self.path)

    def __repr__(self) -> str:
        return f"RunDir({self.path!r})"

    def __fspath__(self) -> str:
        return self.path

    # ------------------------------------------------------------------ writers
    @contextlib.contextmanager
    def folder_synced_once(self) -> Iterator[None]:
        """Durable writes in the block fsync their files, and the folder once at its end
        (instead of after each rename)."""
        self._folder_sync_deferred = True
        try:
            yield
        finally:
            self._folder_sync_deferred = False
            fsync_directory(self.path)

    def write_text(self, name: str, text: str, durable: bool = True) -> None:
        """Write the folder's file ``name`` atomically (fsynced when ``durable``; a staged
        folder is fsynced once, by ``publish``, and one in ``folder_synced_once`` at its end);
        an ``OSError`` names that file."""
        sync_folder = self.published and not self._folder_sync_deferred
        try:
            atomic_write_text(self.file(name), text, durable, sync_folder)
        except OSError as err:
            err.filename = self.file(name)  # not the temporary file's name
            raise

    def write_config(self, text: str, resolved_yaml: str) -> None:
        """``config.yaml`` (the text as given) and ``config.resolved.yaml``, into a staged
        folder (``stage``)."""
        self.write_text(CONFIG, text)
        self.write_text(RESOLVED_CONFIG, resolved_yaml)

    def write_data_state(self, doc: dict[str, Any]) -> None:
        """``data_state.json``: the data kind's fitted state (plain JSON, atomic)."""
        self.write_text(DATA_STATE, json.dumps(doc, indent=2, allow_nan=False) + "\n")

    def read_data_state(self) -> dict[str, Any] | None:
        """The stored ``data_state.json``, or None for a run made before it existed. A file
        that is not a JSON object is a ``RunFolderError`` naming it."""
        path = self.file(DATA_STATE)
        if not os.path.isfile(path):
            return None
        try:
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
        except (OSError, ValueError) as err:
            raise RunFolderError(f"cannot read {path}: {err}") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("state", {}), dict):
            raise RunFolderError(f"{path}: not a data state (expected a JSON object)")
        problem = sample_problem(doc.get("sample"))
        if problem:
            raise RunFolderError(f"{path}: {problem}")
        return doc

    def append_metrics(self, record: dict[str, Any], durable: bool = True) -> None:
        """Append one line to ``metrics.jsonl``, flushed (and fsynced when ``durable``) before
        returning."""
        line = json.dumps(jsonable(record), allow_nan=False) + "\n"
        path = self.file(METRICS_JSONL)
        with open(path, "a", encoding="utf-8") as f:
            size = f.tell()
            try:
                f.write(line)
                f.flush()
                if durable:
                    os.fsync(f.fileno())
            except OSError as err:  # disk full: take the torn line back out
                with contextlib.suppress(OSError):
                    os.truncate(path, size)
                raise write_error(path, err) from None

    def metrics_intact(self) -> bool:
        """Whether ``metrics.jsonl`` holds only whole JSON lines (a power loss can leave a
        torn last line, which ``read_metrics`` skips and a resume rewrites)."""
        try:
            with open(self.file(METRICS_JSONL), encoding="utf-8") as f:
                text = f.read()
        except FileNotFoundError:
            return True
        except (OSError, ValueError):
            return False
        if text and not text.endswith("\n"):
            return False
        try:
            return all(isinstance(json.loads(ln), dict) for ln in text.splitlines() if ln.strip())
        except ValueError:
            return False

    def write_metrics_jsonl(self, history: Sequence[dict[str, Any]]) -> None:
        """Replace ``metrics.jsonl`` atomically by ``history`` (used when resuming)."""
        text = "".join(json.dumps(jsonable(r), allow_nan=False) + "\n" for r in history)
        self.write_text(METRICS_JSONL, text)

    def sync_metrics(self) -> None:
        """fsync ``metrics.jsonl`` (every line appended without ``durable``), if it exists."""
        path = self.file(METRICS_JSONL)
        try:
            with open(path, "ab") as f:  # writable: Windows fsyncs only those
                os.fsync(f.fileno())
        except FileNotFoundError:
            return
        except OSError as err:
            raise write_error(path, err) from None

    def write_metrics_csv(self, history: Sequence[dict[str, Any]], durable: bool = True) -> None:
        columns = metric_columns(history)
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(columns)
        for row in history:
            clean = jsonable(row)
            writer.writerow(["" if clean.get(c) is None else clean[c] for c in columns])
        self.write_text(METRICS_CSV, buf.getvalue(), durable)

    def write_summary(self, summary: dict[str, Any], durable: bool = True) -> None:
        """``summary.json``, atomically; when the disk is too full for the temporary copy, in
        place over the old one (its blocks are already allocated), so a run that fails for a
        full disk still says so: the whole summary, else its ``SUMMARY_CORE`` keys on one
        line, else the old text put back (never a torn file)."""
        clean = jsonable(summary)
        text = json.dumps(clean, indent=2, allow_nan=False) + "\n"
        path = self.file(SUMMARY)
        try:
            self.write_text(SUMMARY, text, durable)
            return
        except OSError as err:
            error = err
        try:
            with open(path, encoding="utf-8") as f:
                old: str | None = f.read()
        except (OSError, ValueError):
            old = None
        core = {k: clean.get(k) for k in SUMMARY_CORE}
        for candidate in (text, json.dumps(core, allow_nan=False) + "\n"):
            if _overwrite(path, candidate):
                return
        if old is not None:
            _overwrite(path, old)
        raise write_error(path, error)

    # ------------------------------------------------------------------ readers
    def read_metrics(self) -> list[dict[str, Any]]:
        """The records of ``metrics.jsonl`` (a torn last line, from a crash mid-write, is
        skipped)."""
        try:
            with open(self.file(METRICS_JSONL), encoding="utf-8", errors="replace") as f:
                lines = f.read().splitlines()
        except FileNotFoundError:
            return []
        out = []
        for line in lines:
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                break
            if not isinstance(record, dict):
                break
            out.append(record)
        return out

    # ------------------------------------------------------------------ lock
    def lock(self) -> None:
        """Take the folder's lock (``.lock``, an exclusive ``flock``) for this process, so a
        second process (a ``resume`` of a run still going) cannot write into it. Released by
        ``unlock`` or when the process ends, however it ends."""
        if getattr(self, "_lock_fd", None) is not None:
            return
        try:
            import fcntl
        except ImportError:  # not POSIX: no lock
            return
        fd = os.open(self.file(".lock"), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            try:
                owner = os.read(fd, 32).decode().strip() or "?"
            except OSError:
                owner = "?"
            os.close(fd)
            raise RuntimeError(
                f"run folder {self.path} is in use by another process (pid {owner})"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._lock_fd: int | None = fd

    def record_killed(self, message: str, exit_code: int) -> bool:
        """For a run whose process was killed before it could write its end (SIGKILL): when no
        live process holds the lock and ``summary.json`` still says running, make it say
        ``failed`` with ``message`` and remove the stale lock; whether it did. Metrics and
        checkpoints are left as they are."""
        import datetime

        try:
            self.lock()
        except (RuntimeError, OSError):  # a live process holds it: not ours to judge
            return False
        try:
            with open(self.file(SUMMARY), encoding="utf-8") as f:
                summary = json.load(f)
            if not isinstance(summary, dict) or summary.get("status") not in ("created", "running"):
                return False
            now = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
            summary.update(status="failed", exit_code=exit_code, message=message, updated_at=now)
            self.write_summary(summary)
            return True
        except (OSError, ValueError):
            return False
        finally:
            self.unlock()

    def unlock(self) -> None:
        """Release the lock and remove ``.lock`` (a finished run folder has none)."""
        fd = getattr(self, "_lock_fd", None)
        if fd is not None:
            self._lock_fd = None
            with contextlib.suppress(OSError):
                os.unlink(self.file(".lock"))  # while still holding it
            os.close(fd)  # closing drops the flock
