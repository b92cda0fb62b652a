# ruff: noqa: B008  (typer declares options as argument defaults)
"""The commands about a user's project beyond one run: ``export`` a trained model, list and
compare ``runs``, ``sweep`` hyperparameters and ``port`` a PyTorch script. Registered on
``app.app``; as there, each body imports what it needs when it runs."""

from __future__ import annotations

import enum
from pathlib import Path

import typer

from .app import app


class ExportFormat(str, enum.Enum):
    onnx = "onnx"
    safetensors = "safetensors"
    torch = "torch"


@app.command(name="export")
def export(
    run_dir: Path = typer.Argument(..., metavar="RUN", help="A run folder."),
    output: Path = typer.Option(
        ...,
        "--output",
        "-o",
        metavar="FILE",
        help="Where the model goes (its ending gives the format when --format is left out: "
        ".onnx, .safetensors, .pt/.pth/.bin).",
    ),
    format_: ExportFormat | None = typer.Option(
        None,
        "--format",
        "-f",
        help="onnx: the model (batch dim dynamic); safetensors: the weights, with the config "
        "and class names in its metadata; torch: a state dict file torch.load reads.",
        show_default=False,
    ),
    checkpoint: str = typer.Option(
        "best", "--checkpoint", metavar="best|last|PATH", help="Which weights to export."
    ),
    overwrite: bool = typer.Option(
        False, "--overwrite", help="Replace the output file if it exists (else refused)."
    ),
) -> None:
    """Write a trained run's model as ONNX, safetensors or a PyTorch state dict file."""
    from .export_cmd import run_export

    fmt = format_.value if format_ is not None else None
    raise typer.Exit(run_export(str(run_dir), checkpoint, fmt, str(output), overwrite))


@app.command()
def runs(
    runs_dir: Path = typer.Argument(Path("runs"), metavar="DIR", help="The runs folder."),
    json_: bool = typer.Option(False, "--json", help="Write the rows as JSON to stdout."),
    sort: str | None = typer.Option(
        None,
        "--sort",
        metavar="KEY",
        help="Sort by a metric of the best epoch (val_acc), a setting (optimizer.lr), status, "
        "epochs, best, wall_time or started; -KEY: descending.",
    ),
    desc: bool = typer.Option(False, "--desc", help="Sort descending."),
    filter_: list[str] = typer.Option(
        [],
        "--filter",
        "-f",
        metavar="KEY=VALUE",
        help="Keep the runs where KEY=VALUE (also !=, <, >, <=, >=: val_acc>0.9). Repeatable.",
    ),
    diff: tuple[str, str] | None = typer.Option(
        None,
        "--diff",
        metavar="RUN_A RUN_B",
        help="Compare two runs: the settings that differ and the metric changes.",
    ),
) -> None:
    """The runs in DIR as a table (name, status, epochs, best metric, the settings that differ
    between the runs, wall time, start time), newest first; a sweep's trials are grouped under
    it; folders whose summary.json is unreadable are listed as broken."""
    from .runs_cmd import run_runs

    raise typer.Exit(run_runs(str(runs_dir), json_, sort, desc, list(filter_), diff))


SWEEP_HELP = """Search hyperparameters of CONFIG with Optuna (the `sweep` extra).

The search space is the config's `sweep:` section (see README.md,
section "Hyperparameter sweeps"), a --space file with the same keys,
and --param options; each parameter is a dotted key path as --set
writes it. Every path and value is checked before any trial runs.
Each trial is a normal run folder SWEEP/trial-007/ under the sweep
folder <output.dir>/<name>-sweep-<time>/, whose study.db (SQLite) lets
`agrad sweep --resume SWEEP` continue a stopped or killed sweep. At the
end: the trials sorted by the metric, SWEEP/best.yaml (agrad train
reproduces it) and SWEEP/plot-<param>.svg.
"""


@app.command(help=SWEEP_HELP)
def sweep(
    config: Path | None = typer.Argument(
        None,
        metavar="CONFIG",
        help="The YAML config (not needed with --resume).",
        show_default=False,
    ),
    space: Path | None = typer.Option(
        None, "--space", metavar="FILE", help="A YAML file of sweep settings and params."
    ),
    param: list[str] = typer.Option(
        [],
        "--param",
        "-p",
        metavar="KEY.PATH=SPACE",
        help="A searched setting: optimizer.lr=loguniform:1e-4,1e-1, model.1.out_features="
        "choice:32,64, train.batch_size=int:32,128,step=32, x=uniform:0,1,log. Repeatable.",
    ),
    set_: list[str] = typer.Option(
        [], "--set", "-s", metavar="KEY.PATH=VALUE", help="Override a config value. Repeatable."
    ),
    jobs: int = typer.Option(
        1, "--jobs", "-j", min=1, metavar="N", help="Run trials in N processes (cores shared)."
    ),
    resume: Path | None = typer.Option(
        None, "--resume", metavar="SWEEP_DIR", help="Continue the sweep in SWEEP_DIR."
    ),
    runs_dir: Path | None = typer.Option(
        None, "--runs-dir", metavar="DIR", help="Where the sweep folder goes (default: output.dir)."
    ),
    threads: int | None = typer.Option(
        None, "--threads", min=1, metavar="N", help="BLAS threads per process.", show_default=False
    ),
    worker: bool = typer.Option(False, "--worker", hidden=True),
) -> None:
    from .sweep_cmd import run_sweep

    code = run_sweep(
        str(config) if config is not None else None,
        str(space) if space is not None else None,
        list(param),
        list(set_),
        jobs=jobs,
        resume=str(resume) if resume is not None else None,
        runs_dir=str(runs_dir) if runs_dir is not None else None,
        threads=threads,
        worker=worker,
    )
    raise typer.Exit(code)


PORT_HELP = """Show which torch names a PyTorch program uses that autogradcli lacks.

Reads each SCRIPT (.py or .ipynb; a folder: every one under it) with
Python's ast, resolves the torch imports and their aliases (import torch
as th, from torch import nn as N, import torch.nn.functional as F, star
imports) and method calls of Tensor/Module methods, and prints every
name autogradcli does not have with the file:line of each use, and the
names it has only as PyTorch behaves without the feature (torch.compile,
torch.jit.script). The same table gives the README's coverage figures.

Exit codes: 0 every name used is available, 1 some are missing, 2 a
path that does not exist or a file Python cannot parse (file:line).
"""


@app.command(help=PORT_HELP)
def port(
    paths: list[Path] = typer.Argument(
        ..., metavar="SCRIPT_OR_DIR", help="Python files, notebooks or folders."
    ),
    json_: bool = typer.Option(False, "--json", help="Write the report as JSON to stdout."),
) -> None:
    from .port_cmd import run_port

    raise typer.Exit(run_port([str(p) for p in paths], json_))
