"""The corpus of ported programs (tests/programs/: PyTorch tutorials, pytorch/examples, nanoGPT,
makemore, d2l...) timed on both engines: the work users do, not our fixtures.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python bench/bench_programs.py [--only a,b] [--runs 1]

Each engine runs every program through tests/program_batch.py (the engine imported once, one
forked child per program, one BLAS thread, the program's own shrunken sizes): the programs the
test suite runs, as they run there. Reported per program: the child's CPU seconds on each
engine (the median over ``--runs``) and their ratio, slowest first, then the geometric mean of the
ratios. CPU time, not wall clock, so a busy machine moves the figures less; programs that fail
on either engine are listed apart.

The package's bytecode is compiled first (``bench_nn.as_installed``), as in an installed
package: where PYTHONDONTWRITEBYTECODE is set, each child compiled the modules a program
imports lazily again (tut_basics_buildmodel 0.06 -> 0.04 s, ex_mnist 0.25 -> 0.21 s), which
torch's precompiled install never pays.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from bench_nn import as_installed  # noqa: E402
from program_batch import PROGRAMS_DIR, run_batch  # noqa: E402

ENGINES = ("autogradcli", "torch")


def _programs(only: str | None) -> list[Path]:
    found = sorted(p for p in PROGRAMS_DIR.glob("*.py") if not p.name.startswith("_"))
    if only:
        wanted = {n if n.endswith(".py") else n + ".py" for n in only.split(",")}
        found = [p for p in found if p.name in wanted]
    return found


def measure(programs: list[Path], runs: int) -> dict[str, dict[str, list]]:
    """{engine: {program: [(rc, cpu seconds) per run]}}, the engines alternating run by run."""
    as_installed()  # the children inherit the environment through run_batch
    out: dict[str, dict[str, list]] = {e: {} for e in ENGINES}
    for _ in range(runs):
        for engine in ENGINES:
            with tempfile.TemporaryDirectory() as tmp:
                for name, res in run_batch(engine, programs, Path(tmp)).items():
                    out[engine].setdefault(name, []).append((res["rc"], res["cpu"]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", help="comma-separated program names")
    ap.add_argument("--runs", type=int, default=1)
    args = ap.parse_args()
    results = measure(_programs(args.only), args.runs)
    rows, failed = [], []
    for name, ours in results["autogradcli"].items():
        theirs = results["torch"].get(name, [])
        if any(rc != 0 for rc, _ in ours + theirs) or not theirs:
            failed.append(name)
            continue
        a = statistics.median(c for _, c in ours)
        t = statistics.median(c for _, c in theirs)
        rows.append((a / t, name, a, t))
    rows.sort(reverse=True)
    print("| program | autogradcli CPU s | torch CPU s | autogradcli / torch |")
    print("|---|---|---|---|")
    for ratio, name, a, t in rows:
        print(f"| {name} | {a:.2f} | {t:.2f} | {ratio:.2f} |")
    if rows:
        gmean = math.exp(statistics.fmean(math.log(r[0]) for r in rows))
        print(
            f"\n{len(rows)} programs; geometric mean of the ratios {gmean:.2f}; "
            f"median {statistics.median(r[0] for r in rows):.2f}"
        )
    if failed:
        print("failed on an engine:", ", ".join(sorted(failed)))


if __name__ == "__main__":
    main()
