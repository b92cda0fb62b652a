"""``agrad sweep``: validate the search, make (or reopen) the sweep folder and its study, run
the trials in this process or in ``--jobs N`` worker processes, then show the trials table and
write ``best.yaml`` and the plots."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

from .console import console
from .errors import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, UserError

__all__ = ["run_sweep"]


def run_sweep(
    config_path: str | None,
    space_path: str | None,
    params: list[str],
    overrides: list[str],
    *,
    jobs: int = 1,
    resume: str | None = None,
    runs_dir: str | None = None,
    threads: int | None = None,
    worker: bool = False,
) -> int:
    from ..sweep.study import SweepError

    try:
        return _run(
            config_path, space_path, params, overrides, jobs, resume, runs_dir, threads, worker
        )
    except SweepError as err:
        raise UserError(str(err)) from None


def _manifest(
    config_path: str | None,
    space_path: str | None,
    params: list[str],
    overrides: list[str],
    old: dict,
) -> dict[str, Any]:
    """What rebuilds the sweep (``sweep.json``): a resume adds its options to the stored ones."""
    from ..config.source import read_config_text

    out = dict(old)
    if config_path is not None:
        out["config_path"] = os.path.abspath(config_path)
        out["config_text"] = read_config_text(config_path)
    if space_path is not None:
        out["space_path"] = os.path.abspath(space_path)
        out["space_text"] = read_config_text(space_path)
    out["overrides"] = list(old.get("overrides", [])) + overrides
    out["params"] = list(old.get("params", [])) + params
    return out


def _spec(m: dict[str, Any]) -> Any:
    from ..sweep.spec import load_spec

    space = (m["space_text"], m["space_path"]) if m.get("space_text") is not None else None
    return load_spec(m["config_text"], m["config_path"], m["overrides"], m["params"], space)


def _run(
    config_path, space_path, params, overrides, jobs, resume, runs_dir, threads, worker
) -> int:
    import json

    from ..sweep.study import (
        MANIFEST,
        close_study,
        make_sweep_dir,
        open_study,
        optuna_module,
        read_manifest,
        requeue_interrupted,
    )

    optuna_module()  # missing: say so before anything is read or made
    say = _printer()
    if resume is not None:
        if not os.path.isdir(resume):
            raise UserError(f"--resume {resume}: no such sweep folder")
        manifest = _manifest(config_path, space_path, params, overrides, read_manifest(resume))
        spec = _spec(manifest)
        sweep_dir = os.path.abspath(resume)
        study = open_study(sweep_dir, spec, create=False)
        if not worker:
            from .._utils.atomic import atomic_write_text

            atomic_write_text(
                os.path.join(sweep_dir, MANIFEST), json.dumps(manifest, indent=2) + "\n"
            )
            for n in requeue_interrupted(study, sweep_dir, spec):
                say(f"trial {n} was interrupted: it runs again")
    else:
        if config_path is None:
            raise UserError("missing CONFIG (or --resume SWEEP_DIR); see agrad sweep --help")
        manifest = _manifest(config_path, space_path, params, overrides, {})
        spec = _spec(manifest)
        runs = runs_dir if runs_dir is not None else spec.config.output_dir()
        sweep_dir = make_sweep_dir(runs, spec.config.data["name"], manifest)
        study = open_study(sweep_dir, spec, create=True)
    try:
        return _work(spec, sweep_dir, study, jobs, threads, worker, say)
    finally:
        close_study(study)


def _work(
    spec: Any, sweep_dir: str, study: Any, jobs: int, threads: Any, worker: bool, say: Any
) -> int:
    """Run the trials (a ``--worker`` process: only its share of them), then report them."""
    from ..sweep.runner import run_trials
    from .train_cmd import set_threads

    if worker:
        set_threads(threads)
        return run_trials(spec, sweep_dir, study, say)
    say(
        f"sweep {_shown(sweep_dir)}: {spec.trials} trial{'s' * (spec.trials != 1)}, "
        f"{spec.settings['sampler']} sampler, "
        f"{spec.direction} {spec.metric}, {jobs} process{'es' if jobs > 1 else ''}"
    )
    code = _run_workers(spec, sweep_dir, study, jobs, threads, say)
    best = _report(sweep_dir, spec, study, code)
    return EXIT_FAILED if code == EXIT_OK and best is None else code


def _printer() -> Any:
    def say(line: str) -> None:
        print(line, flush=True)

    return say


def _run_workers(
    spec: Any, sweep_dir: str, study: Any, jobs: int, threads: int | None, say: Any
) -> int:
    """This process and ``jobs - 1`` worker processes take trials from the shared study, each
    with its share of the cores (``--threads``, default the usable cores / ``jobs``)."""
    from ..backend.threads import get_num_threads
    from ..sweep.runner import run_trials
    from .train_cmd import set_threads

    share = threads if threads is not None else max(1, get_num_threads() // jobs)
    cmd = [sys.executable, "-m", "autogradcli.cli", "sweep", "--resume", sweep_dir, "--worker"]
    cmd += ["--threads", str(share)]
    procs = [subprocess.Popen(cmd) for _ in range(jobs - 1)]
    set_threads(share)
    codes = [run_trials(spec, sweep_dir, study, say)]
    while True:
        try:
            codes += [p.wait() for p in procs]
            break
        except KeyboardInterrupt:  # the workers got it too: wait for them to stop cleanly
            codes.append(EXIT_INTERRUPTED)
    if EXIT_INTERRUPTED in codes:
        return EXIT_INTERRUPTED
    return max(codes) if any(codes) else EXIT_OK


def _report(sweep_dir: str, spec: Any, study: Any, code: int) -> str | None:
    """Print the trials table; write best.yaml and the plots; best.yaml's path (None when no
    trial completed)."""
    from ..sweep.report import trial_rows, write_best, write_plots

    rows = trial_rows(study, spec)
    out = console()
    from rich import box
    from rich.table import Table

    table = Table(
        box=box.SIMPLE_HEAD,
        title=f"{os.path.basename(sweep_dir)}: {spec.metric} ({spec.direction})",
    )
    for col in ("trial", "state", spec.metric, *(p.path for p in spec.params), "run"):
        table.add_column(col, no_wrap=True)
    for r in rows:
        value = f"{r['value']:.4g}" if isinstance(r["value"], (int, float)) else ""
        cells = [_cell(r["params"].get(p.path)) for p in spec.params]
        table.add_row(str(r["number"]), r["state"], value, *cells, r["run"])
    out.print(table)
    best = write_best(sweep_dir, rows, spec)
    plots = write_plots(sweep_dir, rows, spec)
    if best is not None:
        out.print(f"best config: {_shown(best)} (agrad train {_shown(best)})", markup=False)
    else:
        out.print("no trial completed: no best.yaml", markup=False)
    out.print(f"plots: {', '.join(os.path.basename(p) for p in plots)}", markup=False)
    if code == EXIT_INTERRUPTED:
        out.print(
            f"interrupted: continue with agrad sweep --resume {_shown(sweep_dir)}", markup=False
        )
    return best


def _shown(path: str) -> str:
    """``path`` relative to the working directory when it is inside it."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def _cell(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return "" if v is None else str(v)
