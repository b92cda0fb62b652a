"""``import autogradcli`` stays light (issue 13): under 40 MiB of RSS in a fresh process, and
without the trainer, the CLI or anything only the benchmarks and tests use. Memory is not
timing: the RSS after an import is the same run to run to a fraction of a MiB."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

LIMIT_MIB = 40.0
NOT_ON_IMPORT = (
    "autogradcli.trainer", "autogradcli.cli", "autogradcli.config", "torch", "threadpoolctl",
    "typer", "rich",
)  # fmt: skip

PROBE = """
import json, sys
import autogradcli
with open("/proc/self/status") as f:
    rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
# a None entry is an import refused (a blocked module), not a module loaded
print(json.dumps({"rss_kib": rss, "modules": sorted(n for n, m in sys.modules.items() if m)}))
"""


@pytest.fixture(scope="module")
def footprint() -> dict:
    """RSS (KiB) and loaded modules right after ``import autogradcli`` in a fresh interpreter."""
    if not sys.platform.startswith("linux"):
        pytest.skip("reads /proc/self/status")
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=120
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def loaded_heavy(modules: list[str]) -> list[str]:
    """The names among ``modules`` that ``import autogradcli`` must not load (or their parts)."""
    return [m for m in modules if any(m == n or m.startswith(n + ".") for n in NOT_ON_IMPORT)]


def test_loaded_heavy_matches_packages_and_their_parts_only():
    mods = ["torch", "torch.nn", "torchvision", "autogradcli.cli.app", "autogradcli.clip", "rich"]
    assert loaded_heavy(mods) == ["torch", "torch.nn", "autogradcli.cli.app", "rich"]
    assert loaded_heavy(["autogradcli", "autogradcli.nn", "numpy", "typing"]) == []


def test_import_rss_under_40_mib(footprint):
    mib = footprint["rss_kib"] / 1024
    assert mib < LIMIT_MIB, (
        f"RSS after `import autogradcli` is {mib:.1f} MiB, over the {LIMIT_MIB:.0f} MiB limit "
        f"(numpy alone is ~27.6 MiB); {len(footprint['modules'])} modules loaded"
    )


def test_import_loads_no_trainer_cli_or_bench_tools(footprint):
    assert loaded_heavy(footprint["modules"]) == [], "`import autogradcli` loaded these"
