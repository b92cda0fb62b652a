"""The corpus: real PyTorch programs ported by renaming ``torch`` to ``autogradcli`` (tests/programs/).

Each program runs to the end in its own process and exits 0 (it asserts its own outcome: a loss that
falls, an accuracy above chance, a value equal to the source's). When torch is installed the same
file runs again with ``autogradcli`` imports resolved to ``torch`` (tests/programs/_torch_shim.py),
which proves the port is faithful. The two engines' batches run side by side, one process each,
forking a child per program (tests/programs/_runner.py).

A program that fails today on autogradcli because a feature is missing is listed in ``MISSING``:
strict xfail, so the test alerts once the feature lands; then remove its entry.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
PROGRAMS_DIR = HERE / "programs"
ROOT = HERE.parent
PROGRAMS = sorted(p.name for p in PROGRAMS_DIR.glob("*.py") if not p.name.startswith("_"))

# program -> the first feature it misses on autogradcli today (strict xfail)
MISSING: dict[str, str] = {}


def _launch(engine: str, out: Path) -> subprocess.Popen:
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    env["PYTHONHASHSEED"] = "0"  # set() orders in the NLP tutorials: the same vocabulary each run
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env.pop("PYTHONWARNINGS", None)
    args = [sys.executable, str(PROGRAMS_DIR / "_runner.py"), engine, str(out)]
    return subprocess.Popen(
        args + [str(PROGRAMS_DIR / p) for p in PROGRAMS],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


@pytest.fixture(scope="session")
def corpus_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """Both engines' results, keyed by engine then program; torch's absent without torch."""
    tmp = tmp_path_factory.mktemp("corpus")
    engines = ["autogradcli"]
    try:
        import importlib.util

        if importlib.util.find_spec("torch") is not None:
            engines.append("torch")
    except ValueError:
        pass
    procs = {e: _launch(e, tmp / f"{e}.json") for e in engines}
    results: dict[str, dict] = {}
    for engine, proc in procs.items():
        log, _ = proc.communicate()
        path = tmp / f"{engine}.json"
        if proc.returncode != 0 or not path.exists():
            raise RuntimeError(f"the {engine} runner failed:\n{log.decode(errors='replace')}")
        results[engine] = json.loads(path.read_text())
    return results


def _check(result: dict, program: str, engine: str) -> None:
    assert result["rc"] == 0, (
        f"{program} exited {result['rc']} on {engine} after {result['seconds']:.1f} s:\n"
        + result["output"][-4000:]
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "program",
    [
        pytest.param(p, marks=pytest.mark.xfail(strict=True, reason=MISSING[p]))
        if p in MISSING
        else p
        for p in PROGRAMS
    ],
)
def test_program_runs_on_autogradcli(program: str, corpus_results: dict[str, dict]) -> None:
    _check(corpus_results["autogradcli"][program], program, "autogradcli")


@pytest.mark.slow
@pytest.mark.parametrize("program", PROGRAMS)
def test_program_runs_on_torch(program: str, corpus_results: dict[str, dict]) -> None:
    if "torch" not in corpus_results:
        pytest.skip("torch is not installed")
    _check(corpus_results["torch"][program], program, "torch")


def test_missing_lists_only_programs_of_the_corpus() -> None:
    assert set(MISSING) <= set(PROGRAMS)
    assert len(PROGRAMS) >= 40
