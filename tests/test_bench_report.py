"""bench/report.py writes the README's benchmark table: the block is found and replaced exactly,
and the README's table lists exactly the workloads the script measures (no hand-typed rows).
Nothing here is timed: the measurements are bench/'s job."""

from __future__ import annotations

import importlib.util
import os

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def report():
    spec = importlib.util.spec_from_file_location("bench_report", f"{REPO}/bench/report.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _block(text: str, report) -> list[str]:
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if line == report.BEGIN)
    end = lines.index(report.END)
    return lines[start : end + 1]


def _runs(report, n: int = 2) -> list[dict]:
    """``n`` fake runs: every row measured with value 1.0 then 1.25 (memory: 10 and 8 MiB...)."""
    runs = []
    for i in range(n):
        run = {row.key: {c: 1.0 + 0.25 * i for _, c in report.COLUMNS} for row in report.WORKLOADS}
        run["chain"].pop("gemm")  # a floor a workload does not have
        for key, *_ in report.MEMORY:
            run[f"mem_{key}"] = {"ours": 10.0 + i, "numpy": 8.0}
        runs.append(run)
    return runs


def test_fmt_range(report):
    assert report.fmt_range([0.931, 0.874, 0.9]) == "0.87-0.93x"
    assert report.fmt_range([1.004, 0.996]) == "1.00x"
    assert report.fmt_range([]) == "-"
    assert report.fmt_range([38.26, 38.34], " MiB", 1) == "38.3 MiB"


def test_table_cells(report):
    block = report.table(_runs(report), "Measured:")
    rows = {line.split(" | ")[0][2:]: line.split(" | ")[1:] for line in block if line[:2] == "| "}
    chain = rows[report.WORKLOADS[0].workload]
    assert chain == ["1.00-1.25x", "1.00-1.25x", "-", "1.00-1.25x", "<= 0.9x torch |"]
    peak, _, faults, _ = (rows[name] for _, name, _, _ in report.MEMORY)
    assert peak == ["10.0-11.0 MiB", "8.0 MiB", "1.25-1.38x", "<= 1.1x floor |"]
    assert faults[:3] == ["10-11", "8", "-"]


def test_rows_never_measured_read_dash(report):
    runs = _runs(report, 1)
    for row in report.WORKLOADS:
        if row.threads != 1:
            del runs[0][row.key]
    block = report.table(runs, "Measured:", "no threads here")
    assert "no threads here" in block
    two = [line for line in block if "`--threads 2`" in line]
    assert len(two) == 2 and all(line.count("| - ") == len(report.COLUMNS) for line in two)


def test_replace_block_touches_only_the_block(report):
    block = report.table(_runs(report), "Measured:")
    text = "before\n" + "\n".join([report.BEGIN, "| old | 9x | 1 |", report.END]) + "\nafter\n"
    new = report.replace_block(text, block)
    assert new == "before\n" + "\n".join(block) + "\nafter\n"
    assert report.replace_block(new, block) == new
    assert "| 1.00-1.25x |" in new and "old" not in new
    with pytest.raises(ValueError, match="no benchmark block"):
        report.replace_block("no markers here\n", block)


def test_readme_table_is_the_generated_one(report):
    """The README's rows are the script's rows, its columns the script's columns."""
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as f:
        block = _block(f.read(), report)
    assert "python bench/report.py" in block[1]
    speed = [line for line in block if line.startswith("| ")]
    heads = [i for i, line in enumerate(speed) if line.startswith(("| workload |", "| memory |"))]
    assert len(heads) == 2, "the block has the speed table and the memory table"
    generated = report.table(_runs(report), "x")
    expected = [line for line in generated if line.startswith("| ")]
    assert [line.split(" | ")[0] for line in speed] == [line.split(" | ")[0] for line in expected]
    assert [line.rsplit(" | ", 1)[1] for line in speed] == [
        line.rsplit(" | ", 1)[1] for line in expected
    ], "the targets column"
    assert speed[heads[0]] == expected[heads[0]] and speed[heads[1]] == expected[heads[1]]


def test_measured_rows_are_the_table_rows(report, monkeypatch):
    """measure_once asks bench_floors for exactly the table's rows (threads rows only when the
    engine has a pool) and bench_memory for exactly its memory rows."""
    import sys

    calls = []

    class Floors:
        @staticmethod
        def measure(kind, threads=1, quick=False):
            calls.append((kind, threads))
            return {"ours": 1.0}

    class Memory:
        @staticmethod
        def measure(steps=200):
            return {key: (1.0, 2.0) for key, *_ in report.MEMORY}

    monkeypatch.setitem(sys.modules, "bench_floors", Floors)
    monkeypatch.setitem(sys.modules, "bench_memory", Memory)
    with_threads = report.measure_once(True, threads_ok=True)
    assert calls == [(row.kind, row.threads) for row in report.WORKLOADS]
    assert set(with_threads) == {r.key for r in report.WORKLOADS} | {
        f"mem_{k}" for k, *_ in report.MEMORY
    }
    calls.clear()
    without = report.measure_once(True, threads_ok=False)
    assert calls == [(row.kind, 1) for row in report.WORKLOADS if row.threads == 1]
    assert {r.key for r in report.WORKLOADS if r.threads != 1}.isdisjoint(without)
