"""bench/bench_memory.py --models: our side of a realistic step runs in a fresh process without
torch (bench_models fills the weights from numpy) and reports a peak above the RSS before the
step loop. Nothing is compared with torch here (that is the benchmark's job): about 1 s."""

from __future__ import annotations

import importlib.util
import math
import os

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

pytestmark = pytest.mark.skipif(
    not os.path.exists("/proc/self/clear_refs"), reason="VmHWM and clear_refs are Linux's"
)


def test_ours_alone_in_a_fresh_process():
    spec = importlib.util.spec_from_file_location("bench_memory", f"{REPO}/bench/bench_memory.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    r = module.model_child("resnet", "ours", steps=1, warmup=2, mallopt=True)
    assert r["loaded"] is False  # model_child raises too; torch never imported on our side
    assert r["after_import"] <= r["before_build"] <= r["before_loop"] < r["peak"]
    assert r["settled"] <= r["steady_peak"] <= r["peak"]
    assert len(r["losses"]) == 3 and all(math.isfinite(x) for x in r["losses"])
