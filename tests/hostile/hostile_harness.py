"""Runs ``agrad`` as a process of its own under a memory and time limit, for the hostile suite.

Every hostile case checks the same contract: the exit code, a message that names the place at
fault, no Python traceback, and (for a refused config) no run folder left behind.
"""

from __future__ import annotations

import atexit
import json
import os
import resource
import subprocess
import sys
import tempfile
import textwrap
from dataclasses import dataclass

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MEMORY_LIMIT = 1 << 30  # address space: agrad on a small config needs well under this
TIME_LIMIT = 60.0
# variables read when the interpreter, numpy or agrad start: each set of values its own server
IMPORT_TIME_ENV = ("PYTHON", "AGRAD", "OMP_", "OPENBLAS", "MKL_", "NUMPY", "CUPY", "LD_")
SERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "agrad_fork_server.py")


@dataclass
class Result:
    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + self.err


def _environment(env: dict | None) -> dict:
    full_env = dict(os.environ, COLUMNS="120", PYTHONPATH=REPO, **(env or {}))
    full_env.pop("FORCE_COLOR", None)
    return full_env


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


_servers: dict[tuple, subprocess.Popen] = {}


def _fork_server(env: dict) -> subprocess.Popen:
    """This process's agrad fork server (agrad_fork_server.py) for the variables of ``env`` that
    an import may read, started on first use under the memory limit with ``env``; it ends when
    this process closes its stdin (at exit)."""
    key = tuple(sorted((k, v) for k, v in env.items() if k.startswith(IMPORT_TIME_ENV)))
    server = _servers.get(key)
    if server is None or server.poll() is not None:
        server = _servers[key] = subprocess.Popen(
            [sys.executable, SERVER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=REPO,
            env=env,
            preexec_fn=_limit_memory,
        )
        atexit.register(_stop_server, server)
    return server


def _stop_server(server: subprocess.Popen) -> None:
    server.stdin.close()
    server.wait(timeout=30)


def _run_forked(argv: tuple[str, ...], cwd: str, timeout: float, env: dict) -> Result:
    server = _fork_server(env)
    with tempfile.TemporaryDirectory() as tmp:
        out, err = os.path.join(tmp, "out"), os.path.join(tmp, "err")
        request = {"argv": list(argv), "cwd": os.path.abspath(cwd), "out": out, "err": err}
        request.update(timeout=timeout, env=env)
        server.stdin.write((json.dumps(request) + "\n").encode())
        server.stdin.flush()
        line = server.stdout.readline()
        if not line:
            raise RuntimeError(f"the agrad fork server ended (exit {server.wait()})")
        reply = json.loads(line)
        if reply["timed_out"]:
            raise subprocess.TimeoutExpired(["agrad", *argv], timeout)
        texts = []
        for path in (out, err):
            with open(path, encoding="utf-8", errors="replace", newline=None) as f:
                texts.append(f.read())
    return Result(reply["code"], *texts)


def run_agrad(
    *argv: str,
    cwd: str,
    timeout: float = TIME_LIMIT,
    env: dict | None = None,
    fsize: int | None = None,
) -> Result:
    """``agrad ARGV`` in ``cwd`` as its own process limited to 1 GiB of address space (and files
    to ``fsize`` bytes, if given: ``RLIMIT_FSIZE``). Forked from a server that has imported agrad
    (agrad_fork_server.py: the interpreter's start and imports paid once; one server per set of
    variables an import may read, the child's environment then set to the whole of it); with
    ``fsize`` (which would limit the files its output is captured in too), a fresh
    ``python -m autogradcli.cli``."""
    if fsize is None:
        return _run_forked(argv, cwd, timeout, _environment(env))

    def limits() -> None:
        _limit_memory()
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    proc = subprocess.run(
        [sys.executable, "-m", "autogradcli.cli", *argv],
        capture_output=True,
        text=True,
        errors="replace",
        cwd=cwd,
        env=_environment(env),
        timeout=timeout,
        preexec_fn=limits,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def assert_refused(res: Result, *words: str, code: int = 2) -> None:
    """Exit ``code``, each of ``words`` in the output, no traceback, no internal exception name
    standing as the explanation."""
    assert res.code == code, f"exit {res.code}, expected {code}:\n{res.text}"
    for w in words:
        assert w in res.text, f"{w!r} not in:\n{res.text}"
    assert "Traceback" not in res.text, res.text
    for internal in ("RecursionError", "MemoryError", "UnicodeDecodeError", "AttributeError:"):
        assert internal not in res.text, res.text


def no_run_folder(cwd: str) -> bool:
    runs = os.path.join(cwd, "runs")
    return not os.path.exists(runs) or os.listdir(runs) == []


def write(path: str, text: str | bytes) -> str:
    """Write ``text`` (dedented) or raw bytes to ``path``; the path."""
    if isinstance(text, bytes):
        with open(path, "wb") as f:
            f.write(text)
    else:
        with open(path, "w", encoding="utf-8") as f:
            f.write(textwrap.dedent(text).lstrip())
    return path


GOOD_CONFIG = """
name: hostile
seed: 0
data:
  dataset: sine
  n: 64
  val_split: 0.25
model:
  - {type: Linear, in_features: auto, out_features: 8}
  - Tanh
  - {type: Linear, in_features: auto, out_features: 1}
loss: mse
optimizer: {type: SGD, lr: 0.05}
train: {epochs: 1, batch_size: 16}
"""
