"""The corpus: real PyTorch programs ported by renaming ``torch`` to ``autogradcli`` (tests/programs/).

Each program runs to the end in its own process and exits 0 (it asserts its own outcome: a loss that
falls, an accuracy above chance, a value equal to the source's). When torch is installed the same
file runs again with ``autogradcli`` imports resolved to ``torch`` (tests/programs/_torch_shim.py),
which proves the port is faithful. Each engine's batch is one process forking a child per
program (tests/programs/_runner.py); under pytest-xdist the two batches run on two workers.

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
    if engine == "torch":  # processes the programs spawn load the shim too (its sitecustomize)
        env["AGRAD_CORPUS_TORCH_SHIM"] = "1"
        env["PYTHONPATH"] = os.pathsep.join((str(PROGRAMS_DIR / "_shim_site"), env["PYTHONPATH"]))
    args = [sys.executable, str(PROGRAMS_DIR / "_runner.py"), engine, str(out)]
    return subprocess.Popen(
        args + [str(PROGRAMS_DIR / p) for p in PROGRAMS],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


def _run_batch(engine: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """Every program on ``engine`` (one child process per program), keyed by program."""
    path = tmp_path_factory.mktemp(f"corpus-{engine}") / "results.json"
    proc = _launch(engine, path)
    log, _ = proc.communicate()
    if proc.returncode != 0 or not path.exists():
        raise RuntimeError(f"the {engine} runner failed:\n{log.decode(errors='replace')}")
    return json.loads(path.read_text())


# One session fixture per engine, each engine's tests in one xdist group: under `-n N` each
# batch runs once, on one worker, and the two batches can run on two workers side by side.
@pytest.fixture(scope="session")
def autogradcli_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    return _run_batch("autogradcli", tmp_path_factory)


@pytest.fixture(scope="session")
def torch_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    try:
        import importlib.util

        found = importlib.util.find_spec("torch") is not None
    except ValueError:  # a torch entry of None in sys.modules: unimportable
        found = False
    if not found:
        pytest.skip("torch is not installed")
    return _run_batch("torch", tmp_path_factory)


def _check(result: dict, program: str, engine: str) -> None:
    assert result["rc"] == 0, (
        f"{program} exited {result['rc']} on {engine} after {result['seconds']:.1f} s:\n"
        + result["output"][-4000:]
    )


@pytest.mark.slow
@pytest.mark.xdist_group("corpus-autogradcli")
@pytest.mark.parametrize(
    "program",
    [
        pytest.param(p, marks=pytest.mark.xfail(strict=True, reason=MISSING[p]))
        if p in MISSING
        else p
        for p in PROGRAMS
    ],
)
def test_program_runs_on_autogradcli(program: str, autogradcli_results: dict[str, dict]) -> None:
    _check(autogradcli_results[program], program, "autogradcli")


@pytest.mark.slow
@pytest.mark.xdist_group("corpus-torch")
@pytest.mark.parametrize("program", PROGRAMS)
def test_program_runs_on_torch(program: str, torch_results: dict[str, dict]) -> None:
    _check(torch_results[program], program, "torch")


def test_missing_lists_only_programs_of_the_corpus() -> None:
    assert set(MISSING) <= set(PROGRAMS)
    assert len(PROGRAMS) >= 40


def test_each_engine_batch_is_one_xdist_group() -> None:
    """Under `-n N --dist loadgroup` a batch's tests share one worker, so each batch runs once
    (split over two workers, both would run the whole batch)."""
    for test, engine in (
        (test_program_runs_on_autogradcli, "autogradcli"),
        (test_program_runs_on_torch, "torch"),
    ):
        groups = [m.args for m in test.pytestmark if m.name == "xdist_group"]
        assert groups == [(f"corpus-{engine}",)], test.__name__
