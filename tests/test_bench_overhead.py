"""bench/bench_overhead.py runs a real ``agrad train`` in-process with its timers and gives a
consistent itemisation (one short epoch of digits_mlp; nothing here is judged by its timing).
The Trainer's methods it wraps are put back afterwards."""

from __future__ import annotations

import importlib.util
import os

from autogradcli.trainer.metrics import EpochSums
from autogradcli.trainer.trainer import Trainer

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WRAPPED = {
    Trainer: ("validate", "_unpack", "fit", "train_step", "train_batches", "_emit"),
    EpochSums: ("add", "metrics"),
}


def test_bench_overhead_itemises_a_run(tmp_path):
    spec = importlib.util.spec_from_file_location(
        "bench_overhead", f"{REPO}/bench/bench_overhead.py"
    )
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    saved = {(cls, n): cls.__dict__[n] for cls, names in WRAPPED.items() for n in names}
    try:
        bench._install()
        bench.EXTRA_SETS.append("train.epochs=1")
        r = bench.run_once("digits_mlp", "none", str(tmp_path))
    finally:
        for (cls, name), fn in saved.items():
            setattr(cls, name, fn)
    assert (r["epochs"], r["steps"]) == (1, 23)
    assert 0 < r["step"] < r["fit"] < r["run"]
    outside, val, top = bench.summarize(r)
    items = dict(top)
    assert {"setup", "data", "metrics", "Checkpoint", "RunLogger", "loop"} <= set(items)
    assert abs(r["run"] - r["step"] - r["validation"] - sum(items.values())) < 1e-9
    assert 0 < outside < 1 and 0 < val < 1
