"""``bench_overhead.py --floors``: the fixed costs outside the training step that no trainer can
avoid, measured on this machine, beside what the run spends outside its step.

Per config (warm: imports done, as the in-process runs of ``bench_overhead.py`` are):

- **data**: reading the data file once with the fastest reader here: a table's CSV with
  Python's ``csv`` module or ``pyarrow.csv.read_csv`` (the faster of the two), a text file's
  bytes and their ids through a 256-entry lookup, every image of an image folder decoded once
  by Pillow (serial: a thread pool measured slower, the decode being mostly Python), the bundled
  digits' ``np.load``; the generated sets (spirals, sine) cost nothing to read;
- **model**: ``config.build_model`` as the real build calls it (layers, weights, ``auto``
  sizes' sample forward);
- **checkpoint**: one durable write of the run's ``checkpoints/last`` size (temporary file,
  fsync, rename, folder fsync: ``_utils.atomic.atomic_write_bytes``), times the epochs: one
  durable checkpoint an epoch is what a resume after a power loss needs.
"""

from __future__ import annotations

import csv
import io
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

now = time.perf_counter


def _median(fn: Callable[[], Any], n: int = 5) -> float:
    times = []
    for _ in range(n):
        t0 = now()
        fn()
        times.append(now() - t0)
    return statistics.median(times)


def _data_path(cfg: Any, key: str) -> str:
    path = cfg.data["data"][key]
    return path if os.path.isabs(path) else os.path.join(cfg.base_dir, path)


def data_floor(cfg: Any) -> tuple[str, float]:
    """(what was timed, seconds) for reading ``cfg``'s data once with the fastest reader."""
    spec = cfg.data["data"]
    kind = spec["dataset"]
    if kind == "table":
        path = _data_path(cfg, "path")

        def python_csv():
            with open(path, newline="", encoding="utf-8") as f:
                return list(csv.reader(f))

        times = {"csv module": _median(python_csv)}
        try:
            import pyarrow.csv as pcsv

            times["pyarrow.csv"] = _median(lambda: pcsv.read_csv(path))
        except ImportError:
            pass
        best = min(times, key=times.get)
        return best, times[best]
    if kind == "text":
        import numpy as np

        path = _data_path(cfg, "path")
        table = np.arange(256, dtype=np.int64)

        def ids():
            with open(path, "rb") as f:
                return table[np.frombuffer(f.read(), np.uint8)]

        return "bytes + lookup", _median(ids)
    if kind == "image_folder":
        from autogradcli.data.image.decode import decode_uint8
        from autogradcli.data.image.files import files_under

        root = _data_path(cfg, "root")
        files = [f for c in sorted(os.listdir(root)) for f in files_under(os.path.join(root, c))]
        size = spec.get("size") or 16
        size = (size, size) if isinstance(size, int) else tuple(size)
        channels = spec.get("channels") or 3
        return f"{len(files)} decodes", _median(
            lambda: [decode_uint8(f, size, channels) for f in files], 3
        )
    if kind == "digits":
        import numpy as np

        from autogradcli.data import files as bundled

        path = os.path.join(os.path.dirname(bundled.__file__), "files", "digits.npz")

        def load():
            with np.load(path) as z:
                return {k: z[k] for k in z.files}

        return "np.load", _median(load)
    return "generated", 0.0


def model_floor(name: str, run_once: Callable[[str], dict]) -> float:
    """Seconds of ``build_model`` inside a real build of config ``name`` (its sample forward
    for ``auto`` sizes included)."""
    from autogradcli.config import build

    spent: list[float] = []
    real = build.build_model

    def timed(*args, **kwargs):
        t0 = now()
        try:
            return real(*args, **kwargs)
        finally:
            spent.append(now() - t0)

    build.build_model = timed
    try:
        run_once(name)
    finally:
        build.build_model = real
    return min(spent)


def checkpoint_floor(nbytes: int, where: str) -> float:
    """Seconds of one durable atomic write of ``nbytes`` in folder ``where``."""
    from autogradcli._utils.atomic import atomic_write_bytes

    data = os.urandom(nbytes)
    path = os.path.join(where, "floor.bin")
    return _median(lambda: atomic_write_bytes(path, data), 15)


def floors_table(
    names: list[str], root: str, run_once: Callable[[str], dict], overrides: Callable, tmp: str
) -> str:
    """The ``--floors`` table: per config, what its run spends outside the step (the middle of
    3 runs of ``run_once(name)``) beside the floors (data, model, one durable checkpoint per
    epoch); ``overrides(name, tmp)`` gives the config's ``--set`` values."""
    from autogradcli.config import load_config

    out = io.StringIO()
    out.write(
        "| config | epochs | outside s | data floor (reader) s | model floor s "
        "| checkpoint floor ms x epochs = s | floors s | outside / floors |\n"
    )
    out.write("|---" * 8 + "|\n")
    for name in names:
        cfg = load_config(os.path.join(root, "configs", f"{name}.yaml"), overrides(name, tmp))
        runs = [run_once(name) for _ in range(3)]
        r = sorted(runs, key=lambda r: r["run"])[1]
        outside = r["run"] - r.get("step", 0.0) - r.get("validation", 0.0)
        reader, data_s = data_floor(cfg)
        model_s = model_floor(name, run_once)
        where = tempfile.mkdtemp(dir=tmp)
        ckpt = os.path.join(r["run_dir"], "checkpoints", "last")
        write_s = checkpoint_floor(os.path.getsize(ckpt), where)
        floors = data_s + model_s + write_s * r["epochs"]
        out.write(
            f"| {name} | {r['epochs']} | {outside:.3f} | {data_s:.4f} ({reader}) "
            f"| {model_s:.4f} | {1e3 * write_s:.2f} x {r['epochs']} = {write_s * r['epochs']:.3f} "
            f"| {floors:.3f} | {outside / floors:.1f}x |\n"
        )
    return out.getvalue()
