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
    assert 0 < r["step1"] < r["step"]  # the first step, reported apart by --cold
    outside, val, top = bench.summarize(r)
    items = dict(top)
    assert {"setup", "data", "metrics", "Checkpoint", "RunLogger", "loop"} <= set(items)
    assert abs(r["run"] - r["step"] - r["validation"] - sum(items.values())) < 1e-9
    assert 0 < outside < 1 and 0 < val < 1


def test_perplexity_sums_in_place_leave_the_output_alone():
    """add_perplexity shifts and exponentiates its float64 copy in place (issue 19's overhead):
    the scores it was given are unchanged and the sum is the log-softmax's, both layouts."""
    import numpy as np

    import autogradcli as ag
    from autogradcli import nn
    from autogradcli.trainer.metric_functions import add_perplexity

    rng = np.random.default_rng(0)
    for shape, tshape in (((4, 6, 5), (4, 6)), ((4, 5, 6), (4, 6)), ((9, 5), (9,))):
        scores = (rng.standard_normal(shape) * 4).astype(np.float32)
        target = rng.integers(0, 5, tshape)
        out, before = ag.tensor(scores), scores.copy()
        sums = {}
        add_perplexity(sums, out, ag.tensor(target), nn.CrossEntropyLoss())
        assert np.array_equal(out.detach().numpy(), before)
        s = np.moveaxis(before.astype(np.float64), 1 if shape[1] == 5 else -1, -1)
        logp = s - s.max(-1, keepdims=True)
        logp -= np.log(np.exp(logp).sum(-1, keepdims=True))
        want = -np.take_along_axis(logp, target[..., None], -1).sum()
        assert sums["nll_n"] == target.size
        assert np.isclose(sums["nll_sum"], want, rtol=1e-12)


def test_floors_read_a_table_and_time_a_durable_write(tmp_path):
    """``--floors``' data floor names the faster reader of penguins.csv and its durable write
    leaves the written file in place (bench/overhead_floors.py)."""
    import os
    import sys

    bench = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench")
    sys.path.insert(0, bench)
    try:
        from overhead_floors import checkpoint_floor, data_floor
    finally:
        sys.path.remove(bench)
    from autogradcli.config import load_config

    root = os.path.dirname(bench)
    reader, seconds = data_floor(load_config(os.path.join(root, "configs", "penguins.yaml")))
    assert reader in ("csv module", "pyarrow.csv") and 0 < seconds < 1
    assert 0 < checkpoint_floor(4096, str(tmp_path)) < 1
    assert os.path.getsize(tmp_path / "floor.bin") == 4096
