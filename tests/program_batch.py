"""Run many programs on one engine in one process (tests/programs/_runner.py: the engine imported
once, one forked child per program): the corpus and the seed pages share it (no tests here)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS_DIR = ROOT / "tests" / "programs"


def run_batch(
    engine: str, programs: list[Path], out_dir: Path, env: dict[str, str] | None = None
) -> dict[str, dict]:
    """Run ``programs`` on ``engine`` (autogradcli or torch, through the import shim); return each
    one's ``{rc, seconds, cpu, output}`` keyed by file name. ``env`` adds to the environment."""
    environ = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), environ.get("PYTHONPATH")) if p)
    environ.pop("PYTHONWARNINGS", None)
    environ.update(env or {})
    if engine == "torch":  # processes the programs spawn load the shim too (its sitecustomize)
        environ["AGRAD_CORPUS_TORCH_SHIM"] = "1"
        shim_site = str(PROGRAMS_DIR / "_shim_site")
        environ["PYTHONPATH"] = os.pathsep.join((shim_site, environ["PYTHONPATH"]))
    results = out_dir / "results.json"
    proc = subprocess.run(
        [sys.executable, str(PROGRAMS_DIR / "_runner.py"), engine, str(results)]
        + [str(p) for p in programs],
        env=environ,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    if proc.returncode != 0 or not results.exists():
        raise RuntimeError(f"the {engine} runner failed:\n{proc.stdout.decode(errors='replace')}")
    return json.loads(results.read_text())
