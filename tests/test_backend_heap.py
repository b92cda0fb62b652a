"""``backend.heap.keep_freed_blocks``: freed step arrays stay in the heap (no page faults on the
next step), set by ``agrad train`` for its own process and never by ``import autogradcli``."""

import platform
import subprocess
import sys

import pytest

_FAULTS = """
import resource, sys
import numpy as np
from autogradcli.backend.heap import keep_freed_blocks
if sys.argv[1] == "on":
    assert keep_freed_blocks()
def step():
    arrays = [np.ones(1 << 19, np.float32) for _ in range(8)]  # 8 x 2 MiB, freed together
    del arrays
for _ in range(3):
    step()
f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):
    step()
print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0) / 20)
"""


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's mallopt")
def test_freed_blocks_come_back_without_page_faults():
    def faults(mode: str) -> float:
        out = subprocess.run([sys.executable, "-c", _FAULTS, mode], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        return float(out.stdout)

    assert faults("off") > 1000  # glibc trims the freed heap top: 16 MiB faulted in anew a step
    assert faults("on") < 10


def test_agrad_train_sets_it_and_import_does_not(monkeypatch, tmp_path):
    from autogradcli.backend import heap
    from autogradcli.cli import train_cmd

    calls = []
    monkeypatch.setattr(heap, "keep_freed_blocks", lambda: calls.append(1) or True)
    code = subprocess.run(
        [
            sys.executable,
            "-c",
            "import autogradcli, sys; print('autogradcli.backend.heap' in sys.modules)",
        ],
        capture_output=True,
        text=True,
    )
    assert code.stdout.strip() == "False"  # importing the engine leaves the allocator alone
    monkeypatch.setattr(train_cmd, "_run_one", lambda *a: 0)
    assert train_cmd.run_train("x.yaml", [], print_config=False, dry_run=False, resume=None,
                               progress="none", runs_dir=None) == 0  # fmt: skip
    assert calls == [1]
