"""The time of a whole ``agrad train`` outside the training step (issue 19).

For each config it runs the real training in-process through the entry ``agrad train`` uses
(``cli.train_cmd.set_threads`` then ``trainer.train_from_config``, a fresh run folder in a
temporary directory) with timers put around the Trainer's methods (class attributes patched in
this process only, no library change):

- **step**: ``Trainer.train_step`` (``optimizer.zero_grad()``, forward, loss and its
  ``.item()``, backward, clipping, ``optimizer.step()``, a per-step ``scheduler.step()``, and
  the graph's release when the step's output goes) less what it calls that is not the step:
  ``Trainer._unpack``, the callbacks' events (the non-finite guard's ``on_before_backward``...)
  and the metric sums (``EpochSums.add``), each counted as its own item below;
- **validation**: ``Trainer.validate`` (reported apart: the issue's list -- data loading,
  metrics, progress, checkpoints -- does not name it, so both readings are printed);
- the rest, itemised: ``setup`` (config load, ``build_experiment``: reading and preparing the
  data, building the model, the run folder), ``data`` (waiting for the next training batch),
  ``unpack`` (``Trainer._unpack``), ``metrics`` (``EpochSums.add``/``.metrics``), each
  callback's events (progress reporter, checkpoint, run logger, ...), and ``loop`` (what is
  left: the loop's own code, RNG snapshots, ``fit`` start/end).

``run s`` is the whole ``train_from_config`` call (not the interpreter start and imports,
printed apart as ``import s`` by ``--cli``). ``outside %`` = (run - step - validation) / run,
``val %`` = validation / run.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python bench/bench_overhead.py
    ... --only digits_mlp,penguins --progress none,plain,bar --repeats 3 --profile CONFIG

``--floors`` prints each config's outside time beside the fixed costs no trainer avoids
(``overhead_floors.py``); ``--background`` times checkpoints written at once, by
``Checkpoint``'s default rule and in the background (``overhead_background.py``).

``--progress``: ``none`` (``agrad train --progress none``), ``plain`` (what ``agrad train``
shows when stdout is not a terminal) and ``bar`` (the default on a terminal: a rich progress
bar, drawn here to an in-memory terminal console). The median run of ``--repeats`` is shown.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

CONFIGS = [
    "digits_mlp",
    "penguins",
    "char_lstm",
    "char_gpt",
    "image_folder",
    "digits_cnn",
    "penguins_embedding",
    "residual",
    "legendre_sin",
    "linear_function",
    "custom_relu",
]
KIND = {
    "digits_mlp": "MLP",
    "penguins": "table",
    "char_lstm": "LSTM",
    "char_gpt": "transformer",
    "image_folder": "CNN, image folder",
    "digits_cnn": "CNN",
    "penguins_embedding": "table, embedding",
    "residual": "residual MLP",
    "legendre_sin": "custom Function",
    "linear_function": "custom Function",
    "custom_relu": "custom Function",
}

now = time.perf_counter


class Timers:
    def __init__(self) -> None:
        self.t: dict[str, float] = defaultdict(float)
        self.in_train_step = False
        self.in_validation = False

    def add(self, key: str, dt: float) -> None:
        self.t[key] += dt


T = Timers()


def _install() -> None:
    """Wrap the Trainer's methods (class level, this process only)."""
    from autogradcli.trainer import trainer as trainer_mod
    from autogradcli.trainer.metrics import EpochSums

    Trainer = trainer_mod.Trainer

    def timed(cls, name, key):
        orig = getattr(cls, name)

        def wrapper(*args, **kwargs):
            if T.in_validation:  # validation's own metric sums are validation's time
                return orig(*args, **kwargs)
            T.in_validation = key == "validation"
            t0 = now()
            try:
                return orig(*args, **kwargs)
            finally:
                dt = now() - t0
                T.in_validation = False
                T.add(key, dt)
                if T.in_train_step:
                    T.add("_inside", dt)

        wrapper.__wrapped__ = orig
        setattr(cls, name, wrapper)

    timed(Trainer, "validate", "validation")
    timed(Trainer, "_unpack", "unpack")
    timed(EpochSums, "add", "metrics")
    timed(EpochSums, "metrics", "metrics")

    orig_fit = Trainer.fit

    def fit(self, *args, **kwargs):
        t0 = now()
        try:
            return orig_fit(self, *args, **kwargs)
        finally:
            T.add("fit", now() - t0)

    Trainer.fit = fit

    orig_train_step = Trainer.train_step

    def train_step(self, batch):
        # the step: train_step whole (zero_grad, forward, loss and its .item(), backward,
        # clipping, optimizer.step, a per-step scheduler.step, the graph's release when the
        # output goes), less what it calls that is not the step: _unpack, the callbacks'
        # events, the metric sums
        T.in_train_step = True
        inside = T.t.get("_inside", 0.0)
        t0 = now()
        try:
            return orig_train_step(self, batch)
        finally:
            dt = now() - t0
            T.in_train_step = False
            step = dt - (T.t.get("_inside", 0.0) - inside)
            T.add("step", step)
            if "step1" not in T.t:  # the first step (warm-up: first calls, allocations)
                T.add("step1", step)

    Trainer.train_step = train_step

    orig_batches = Trainer.train_batches

    def train_batches(self, skip=0):
        it = orig_batches(self, skip)

        def gen():
            while True:
                t0 = now()
                try:
                    b = next(it)
                except StopIteration:
                    T.add("data", now() - t0)
                    return
                T.add("data", now() - t0)
                yield b

        return gen()

    Trainer.train_batches = train_batches

    def _emit(self, event, *args):
        for fn in self._events[event]:
            t0 = now()
            fn(self, *args)
            dt = now() - t0
            owner = type(getattr(fn, "__self__", fn)).__name__
            T.add(f"cb:{owner}", dt)
            if T.in_train_step:
                T.add("_inside", dt)

    Trainer._emit = _emit


def _image_root(tmp: str) -> str:
    root = os.path.join(tmp, "digit_images")
    if not os.path.isdir(root):
        subprocess.run(
            [sys.executable, "-m", "autogradcli.data.image.digits", root],
            check=True,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": ROOT},
        )
    return root


EXTRA_SETS: list[str] = []


def _overrides(name: str, tmp: str) -> list[str]:
    sets = [f"data.root={_image_root(tmp)}"] if name == "image_folder" else []
    return sets + EXTRA_SETS


def _reporter(mode: str):
    from autogradcli.trainer.progress import make_reporter

    if mode == "bar":
        from rich.console import Console

        return make_reporter("bar", Console(file=io.StringIO(), force_terminal=True, width=100))
    if mode == "plain":
        return make_reporter("plain", io.StringIO())
    return make_reporter("none")


def run_once(name: str, progress: str, tmp: str, profile: bool = False) -> dict:
    from autogradcli.config import load_config
    from autogradcli.trainer import train_from_config

    overrides = _overrides(name, tmp)
    runs = tempfile.mkdtemp(dir=tmp)
    T.t.clear()
    prof = cProfile.Profile() if profile else None
    t0 = now()
    if prof:
        prof.enable()
    cfg = load_config(os.path.join(ROOT, "configs", f"{name}.yaml"), overrides)
    result = train_from_config(cfg, progress=_reporter(progress), runs_dir=runs)
    if prof:
        prof.disable()
    run = now() - t0
    assert result.status == "completed", (name, result.status, result.message)
    t = dict(T.t)
    out = {
        "run": run,
        "setup": run - t.get("fit", 0.0),
        "epochs": len(result.history),
        "steps": result.history[-1]["step"] if result.history else 0,
        "run_dir": result.run_dir,
        **t,
    }
    if prof:
        out["profile"] = prof
    return out


def cold_child(name: str, tmp: str) -> None:
    """``--cold``'s child process: the stages of one ``agrad train`` from a fresh interpreter
    (imports as the CLI's, then the run with the timers of ``_install``), as JSON."""
    import json

    t0 = now()
    from autogradcli.cli.train_cmd import set_threads
    from autogradcli.trainer import api

    imported = now() - t0
    set_threads(None)
    _install()
    stages: dict[str, float] = defaultdict(float)

    def timed(module, name, key):
        orig = getattr(module, name)

        def wrapper(*args, **kwargs):
            t = now()
            try:
                return orig(*args, **kwargs)
            finally:
                stages[key] += now() - t

        setattr(module, name, wrapper)

    timed(api, "build_experiment", "data+model")
    timed(api, "_new_run", "run folder")
    r = run_once(name, "none", tmp)
    r.update(stages, imported=imported, **{"in-process": now() - t0})
    print(json.dumps({k: v for k, v in r.items() if isinstance(v, (int, float))}))


COLD_ITEMS = ("import", "config", "data+model", "run folder", "first step", "steps")
COLD_ITEMS += ("validation", "checkpoint", "run files", "rest")


def cold_breakdown(name: str, tmp: str) -> dict[str, float]:
    """Seconds per stage of ``agrad train NAME --progress none`` in a fresh process (the
    bench's own child, which imports what the CLI imports): ``process`` is the wall time seen
    from outside, ``interpreter`` what the child did not see (start-up and exit)."""
    import json

    cmd = [sys.executable, os.path.abspath(__file__), "--cold-child", name, "--tmp", tmp]
    t0 = now()
    out = subprocess.run(
        cmd, check=True, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": ROOT}
    ).stdout
    wall = now() - t0
    r = json.loads(out.strip().splitlines()[-1])
    fit_items = r["step"] + r.get("validation", 0.0)
    fit_items += r.get("cb:Checkpoint", 0.0) + r.get("cb:RunLogger", 0.0)
    b = {
        "process": wall,
        "interpreter": wall - r["in-process"],
        "import": r["imported"],
        "config": r["setup"] - r["data+model"] - r["run folder"],
        "data+model": r["data+model"],
        "run folder": r["run folder"],
        "first step": r["step1"],
        "steps": r["step"] - r["step1"],
        "validation": r.get("validation", 0.0),
        "checkpoint": r.get("cb:Checkpoint", 0.0),
        "run files": r.get("cb:RunLogger", 0.0),
    }
    b["rest"] = r["in-process"] - r["imported"] - r["setup"] - fit_items
    return b


def summarize(r: dict) -> tuple[float, float, list[tuple[str, float]]]:
    run, step, val = r["run"], r.get("step", 0.0), r.get("validation", 0.0)
    items = {k: v for k, v in r.items() if k in ("setup", "data", "unpack", "metrics")}
    items.update({k[3:]: v for k, v in r.items() if k.startswith("cb:")})
    accounted = sum(items.values())
    items["loop"] = run - step - val - accounted
    outside = (run - step - val) / run
    top = sorted(items.items(), key=lambda kv: -kv[1])
    return outside, val / run, top


def cli_time(name: str, tmp: str) -> float:
    """Wall time of the process ``agrad train CONFIG --progress none`` (imports included)."""
    runs = tempfile.mkdtemp(dir=tmp)
    cmd = [sys.executable, "-m", "autogradcli.cli", "train", f"configs/{name}.yaml"]
    cmd += ["--progress", "none", "--runs-dir", runs]
    for o in _overrides(name, tmp):
        cmd += ["--set", o]
    t0 = now()
    subprocess.run(
        cmd,
        check=True,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": ROOT},
    )
    return now() - t0


def cold_table(names: list[str], repeats: int) -> None:
    """Print ``--cold``'s table: each stage's share of the whole process."""
    cols = ("interpreter", *COLD_ITEMS)
    print(f"fresh process per run; medians of {repeats}; % of the process's wall time")
    print("| config | process s | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 2) + "|")
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            runs = [cold_breakdown(name, tmp) for _ in range(repeats)]
            med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
            cells = " | ".join(f"{100 * med[k] / med['process']:.0f}" for k in cols)
            print(f"| {name} | {med['process']:.3f} | {cells} |", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", default=",".join(CONFIGS[:5]), help="configs (names under configs/)")
    p.add_argument("--all", action="store_true", help="every config in CONFIGS")
    p.add_argument("--progress", default="none,bar", help="none,plain,bar")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--threads", type=int, default=None, help="as agrad train --threads")
    p.add_argument("--cli", action="store_true", help="also time the agrad train process")
    p.add_argument("--profile", default="", help="a config: cProfile its run (progress none)")
    p.add_argument("--set", action="append", default=[], help="a config override, as agrad's")
    p.add_argument(
        "--no-fsync",
        action="store_true",
        help="what-if: os.fsync a no-op in this process (the run folder's durability off)",
    )
    p.add_argument(
        "--cold",
        default="",
        help="configs: each agrad train's stages from a fresh process (interpreter, import, "
        "config, data+model, run folder, first step, ...), medians of --repeats",
    )
    p.add_argument(
        "--floors",
        action="store_true",
        help="per config: the outside time beside its floors (fastest data read, model build, "
        "one durable checkpoint write per epoch); see bench/overhead_floors.py",
    )
    p.add_argument(
        "--background",
        action="store_true",
        help="per config, checkpoints written at once / by the background thread (alternating "
        "in this process), then by checkpoint size; see bench/overhead_background.py",
    )
    p.add_argument("--cold-child", default="", help=argparse.SUPPRESS)
    p.add_argument("--tmp", default="", help=argparse.SUPPRESS)
    args = p.parse_args()
    EXTRA_SETS.extend(args.set)
    if args.no_fsync:
        os.fsync = lambda fd: None
    if args.cold_child:
        cold_child(args.cold_child, args.tmp)
        return
    if args.cold:
        cold_table(args.cold.split(","), args.repeats)
        return

    from autogradcli.cli.train_cmd import set_threads

    n = set_threads(args.threads)
    _install()
    names = CONFIGS if args.all else args.only.split(",")
    modes = args.progress.split(",")
    with open("/proc/loadavg") as f:
        load = f.read().split()[:3]
    print(f"threads {n}; load average before: {' '.join(load)}; repeats {args.repeats} (median)")
    if args.background:
        from overhead_background import configs_ab, sizes_ab

        with tempfile.TemporaryDirectory() as tmp:
            run = lambda name: run_once(name, "none", tmp)  # noqa: E731
            print(configs_ab(names, run, args.repeats) + "\n" + sizes_ab(args.repeats), end="")
        with open("/proc/loadavg") as f:
            print("load average after:", " ".join(f.read().split()[:3]))
        return
    if args.floors:
        from overhead_floors import floors_table

        with tempfile.TemporaryDirectory() as tmp:
            run = lambda name: run_once(name, "none", tmp)  # noqa: E731
            print(floors_table(names, ROOT, run, _overrides, tmp), end="")
        with open("/proc/loadavg") as f:
            print("load average after:", " ".join(f.read().split()[:3]))
        return
    if args.no_fsync or args.set:
        print(f"what-if: no fsync {args.no_fsync}, --set {args.set}")
    hdr = "| config | kind | progress | epochs | steps | run s | step s | outside % | val % |"
    print(hdr + " top outside items (s) |")
    print("|---" * 10 + "|")
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            for mode in modes:
                rs = [run_once(name, mode, tmp) for _ in range(args.repeats)]
                rs.sort(key=lambda r: r["run"])
                r = rs[len(rs) // 2]
                outside, val, top = summarize(r)
                items = ", ".join(f"{k} {v:.3f}" for k, v in top[:4])
                print(
                    f"| {name} | {KIND.get(name, '')} | {mode} | {r['epochs']} | {r['steps']} "
                    f"| {r['run']:.3f} | {r.get('step', 0):.3f} | {100 * outside:.1f} "
                    f"| {100 * val:.1f} | {items} |",
                    flush=True,
                )
            if args.cli:
                ts = [cli_time(name, tmp) for _ in range(args.repeats)]
                print(f"  agrad train {name} --progress none: {statistics.median(ts):.3f} s")
        if args.profile:
            r = run_once(args.profile, "none", tmp, profile=True)
            s = io.StringIO()
            with contextlib.redirect_stdout(s):
                pstats.Stats(r["profile"], stream=s).sort_stats("cumulative").print_stats(45)
            print(s.getvalue())
    with open("/proc/loadavg") as f:
        print("load average after:", " ".join(f.read().split()[:3]))


if __name__ == "__main__":
    main()
