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


def test_fmt_range(report):
    assert report.fmt_range([0.931, 0.874, 0.9]) == "0.87-0.93x"
    assert report.fmt_range([1.004, 0.996]) == "1.00x"


def test_replace_block_touches_only_the_block(report):
    ratios = {key: [1.0, 1.25] for key, _, _ in report.WORKLOADS}
    block = report.table(ratios, "Measured:")
    text = "before\n" + "\n".join([report.BEGIN, "| old | 9x | 1 |", report.END]) + "\nafter\n"
    new = report.replace_block(text, block)
    assert new == "before\n" + "\n".join(block) + "\nafter\n"
    assert report.replace_block(new, block) == new
    assert "| 1.00-1.25x |" in new and "old" not in new
    with pytest.raises(ValueError, match="no benchmark block"):
        report.replace_block("no markers here\n", block)


def test_readme_table_is_the_generated_one(report):
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as f:
        block = _block(f.read(), report)
    rows = [line for line in block if line.startswith("| ") and "---" not in line][1:]
    assert [row.split(" | ")[0][2:] for row in rows] == [w for _, w, _ in report.WORKLOADS]
    assert [row.split(" | ")[2].rstrip(" |") for row in rows] == [t for _, _, t in report.WORKLOADS]
    assert "python bench/report.py" in block[1]
