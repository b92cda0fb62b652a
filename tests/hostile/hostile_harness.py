"""Runs ``agrad`` as a real subprocess under a memory and time limit, for the hostile suite.

Every hostile case checks the same contract: the exit code, a message that names the place at
fault, no Python traceback, and (for a refused config) no run folder left behind.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import textwrap
from dataclasses import dataclass

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MEMORY_LIMIT = 1 << 30  # address space: agrad on a small config needs well under this
TIME_LIMIT = 60.0


@dataclass
class Result:
    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + self.err


def run_agrad(
    *argv: str,
    cwd: str,
    timeout: float = TIME_LIMIT,
    env: dict | None = None,
    fsize: int | None = None,
) -> Result:
    """``agrad ARGV`` in ``cwd`` as a subprocess limited to 1 GiB of address space (and files to
    ``fsize`` bytes, if given: ``RLIMIT_FSIZE``)."""

    def limits() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    full_env = dict(os.environ, COLUMNS="120", PYTHONPATH=REPO, **(env or {}))
    full_env.pop("FORCE_COLOR", None)
    proc = subprocess.run(
        [sys.executable, "-m", "autogradcli.cli", *argv],
        capture_output=True,
        text=True,
        errors="replace",
        cwd=cwd,
        env=full_env,
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
