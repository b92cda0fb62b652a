"""Every code block of the five seed pages, ported by changing the import (tests/programs/seeds/),
runs to the end on autogradcli and, renamed back to ``torch``, on PyTorch.

Each program checks its own outcome (it asserts what the page shows or describes), so exit 0
means the block worked. Programs PyTorch 2 no longer runs are listed with the reason, and the
test asserts that PyTorch really refuses them for that reason (so the list cannot go stale).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from program_batch import run_batch

ROOT = Path(__file__).resolve().parent.parent
SEEDS = ROOT / "tests" / "programs" / "seeds"
PROGRAMS = sorted(SEEDS.glob("seed*.py"))

_LEGACY = "Legacy autograd function with non-static forward method is deprecated"
# program -> the error PyTorch 2.x stops it with
TORCH_REFUSES = {
    "seed000_block1_3_legacy_linear_function.py": _LEGACY,  # instance-style Function
    "seed000_block4_linear_module.py": _LEGACY,  # instance-style Function
    "seed001_block2_linear_function.py": _LEGACY,  # LinearFunction()(...) on a static Function
}


def _batch(engine: str, programs: list[Path], out: Path) -> dict[str, dict]:
    # one BLAS thread for both engines (program_batch): on a loaded 2-core machine OpenBLAS
    # threads spin against each other (a 64x1000 @ 1000x100 product: 0.55 ms on one, 83 on two)
    return run_batch(engine, programs, out, {"PYTHONWARNINGS": "default"})


# One session fixture per engine, its tests in one xdist group (so each batch runs once): the
# engine is imported once and each program runs in a forked child, in its own temporary directory.
@pytest.fixture(scope="session")
def autogradcli_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    return _batch("autogradcli", PROGRAMS, tmp_path_factory.mktemp("seeds-autogradcli"))


@pytest.fixture(scope="session")
def torch_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    pytest.importorskip("torch")
    out = tmp_path_factory.mktemp("seeds-torch")
    ported = []
    for program in PROGRAMS:
        source = program.read_text(encoding="utf-8")
        path = out / program.name
        path.write_text(re.sub(r"\bautogradcli\b", "torch", source), encoding="utf-8")
        ported.append(path)
    return _batch("torch", ported, out)


def test_every_seed_page_has_programs() -> None:
    pages = {p.name[:7] for p in PROGRAMS}
    assert pages == {"seed000", "seed001", "seed002", "seed003", "seed004"}
    for p in PROGRAMS:
        head = p.read_text(encoding="utf-8")[:3000]
        assert "Source: shared/seeds/" in head and "Changes made in the port" in head, p.name


@pytest.mark.xdist_group("seeds-autogradcli")
@pytest.mark.parametrize("program", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_seed_program_runs_on_autogradcli(program: Path, autogradcli_results: dict) -> None:
    result = autogradcli_results[program.name]
    assert result["rc"] == 0, f"{program.name} failed:\n{result['output'][-5000:]}"


@pytest.mark.xdist_group("seeds-torch")
@pytest.mark.parametrize("program", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_seed_program_runs_on_torch(program: Path, torch_results: dict) -> None:
    source = program.read_text(encoding="utf-8")
    assert re.sub(r"\bautogradcli\b", "torch", source) != source
    result = torch_results[program.name]
    refusal = TORCH_REFUSES.get(program.name)
    if refusal is None:
        assert result["rc"] == 0, f"{program.name} failed on torch:\n{result['output'][-5000:]}"
    else:  # the runner's child prints the uncaught exception's traceback
        refused = (
            "Traceback (most recent call last)" in result["output"] and refusal in result["output"]
        )
        assert result["rc"] != 0 and refused, (
            f"{program.name} is listed as refused by PyTorch ({refusal!r}) but:\n{result['output'][-3000:]}"
        )
