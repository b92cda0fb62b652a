"""bench/report.py writes the README's benchmark table: the block is found and replaced exactly,
and the README's table lists exactly the workloads the script measures (no hand-typed rows).
Nothing here is timed: the measurements are bench/'s job."""

from __future__ import annotations

import importlib.util
import os
import re

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
    assert len(two) == sum(row.threads != 1 for row in report.WORKLOADS) >= 5
    assert all(line.split(" | ")[1 : 1 + len(report.COLUMNS)] == ["-"] * 4 for line in two)


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
    # every number cell is one the script writes: a range or "-" (a row not measured yet)
    cell = re.compile(r"^(-|\d+(\.\d+)?(-\d+(\.\d+)?)?( ?[a-zA-Z]+)?)$")
    for line, want in zip(speed, expected):
        cells, want_cells = line.split(" | "), want.split(" | ")
        assert len(cells) == len(want_cells), line
        if line not in (speed[heads[0]], speed[heads[1]]):
            assert all(cell.match(c) for c in cells[1:-1]), line


def test_readme_has_issue_19_rows(report):
    """The realistic steps are in the table with issue 19's targets, at 1 and 2 threads, and the
    CIFAR ResNet-20 step (strided convs) reported beside them."""
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as f:
        block = _block(f.read(), report)
    models = [row for row in report.WORKLOADS if row.section == "models"]
    assert {(r.kind, r.threads) for r in models} == {
        (k, t) for k in ("gpt_mini", "lstm_lm", "resnet") for t in (1, 2)
    } | {("resnet20", 1)}
    targets = {r.kind: r.target for r in models if r.threads == 1}
    assert targets == {"gpt_mini": "<= 1.0x torch", "lstm_lm": "<= 1.0x torch",
                       "resnet": "<= 1.2x torch", "resnet20": "-"}  # fmt: skip
    for row in models:
        assert any(line.startswith(f"| {row.workload} |") and line.endswith(f"| {row.target} |")
                   for line in block), row.key  # fmt: skip


def test_only_keeps_the_other_sections_rows(report):
    """An ``--only models`` run replaces the models rows and its own note, nothing else."""
    old = report.table(_runs(report), "Lower is better; full run:")
    old.insert(2, f"{report.ONLY_NOTE}memory`: an earlier one.")
    old.insert(3, f"{report.ONLY_NOTE}models`: the previous one.")
    runs = [{r.key: {"ours": 3.0} for r in report.WORKLOADS if r.section == "models"}]
    new = report.table(runs, f"{report.ONLY_NOTE}models`: this one.")
    merged = report.keep_unmeasured(new, old, ["models"])
    assert merged[:4] == [
        report.BEGIN,
        "Lower is better; full run:",
        f"{report.ONLY_NOTE}memory`: an earlier one.",
        f"{report.ONLY_NOTE}models`: this one.",
    ]
    assert merged[4] == "" and merged[-1] == report.END
    rows = {line.split(" | ")[0][2:]: line for line in merged if line.startswith("| ")}
    for row in report.WORKLOADS:
        line = rows[row.workload]
        assert ("| 3.00x |" in line) == (row.section == "models"), line
        assert ("1.00-1.25x" in line) == (row.section != "models"), line
    assert "10.0-11.0 MiB" in rows[report.MEMORY[0][1]]
    assert report.keep_unmeasured(new, [], ["models"])[1] == new[1]  # no README block yet


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

    class Models:
        @staticmethod
        def measure(name, threads=1, rounds=5):
            calls.append((name, threads))
            out = {"autogradcli": 2.0, "torch": 1.0, "ratio": 2.0}
            return out | ({"floor_ratio": 1.5, "ours_floor": 1.3} if name != "gpt_mini" else {})

    monkeypatch.setitem(sys.modules, "bench_floors", Floors)
    monkeypatch.setitem(sys.modules, "bench_models", Models)
    monkeypatch.setitem(sys.modules, "bench_memory", Memory)
    with_threads = report.measure_once(True, threads_ok=True)
    assert calls == [(row.kind, row.threads) for row in report.WORKLOADS]
    assert set(with_threads) == {r.key for r in report.WORKLOADS} | {
        f"mem_{k}" for k, *_ in report.MEMORY
    }
    assert with_threads["resnet"] == {"ours": 2.0, "gemm": 1.5}
    assert with_threads["gpt_mini_t2"] == {"ours": 2.0}  # no floor: its column reads "-"
    calls.clear()
    without = report.measure_once(True, threads_ok=False)
    assert calls == [(row.kind, 1) for row in report.WORKLOADS if row.threads == 1]
    assert {r.key for r in report.WORKLOADS if r.threads != 1}.isdisjoint(without)
    calls.clear()
    only = report.measure_once(True, threads_ok=True, sections=["models"])
    assert calls == [(r.kind, r.threads) for r in report.WORKLOADS if r.section == "models"]
    assert set(only) == {r.key for r in report.WORKLOADS if r.section == "models"}


def test_blas_info_names_the_kernels(report, monkeypatch):
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Haswell")
    monkeypatch.delenv("OPENBLAS_L2_SIZE", raising=False)
    info = report.blas_info()
    assert info.startswith("BLAS ") and info.endswith(", OPENBLAS_CORETYPE=Haswell set")
