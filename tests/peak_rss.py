"""Peak resident memory of a fresh interpreter running a small program, for the tests that
check memory does not grow with the size of the data."""

from __future__ import annotations

import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# appended to each program: its peak RSS (VmHWM, KiB) as the last line of its output
_PRINT_PEAK = """
with open("/proc/self/status") as _status:
    print([line.split()[1] for line in _status if line.startswith("VmHWM")][0])
"""


def peak_rss_kib(program: str, *args: str) -> int:
    """VmHWM in KiB of ``python -c program args...`` run against this checkout."""
    env = dict(os.environ, PYTHONPATH=REPO)
    out = subprocess.run(
        [sys.executable, "-c", program + _PRINT_PEAK, *args],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout
    return int(out.strip().splitlines()[-1])
