# ruff: noqa: B008  (typer declares options as argument defaults)
"""The typer application: global options and the commands' signatures.

Every command body imports what it needs inside the function, so ``agrad --help`` and
``agrad COMMAND --help`` do not load numpy, the engine, the config loader or the trainer.
"""

from __future__ import annotations

import enum
import os
from pathlib import Path

import typer

from .errors import EXIT_INTERRUPTED, EXIT_USAGE, report
from .train_help import TrainCommand

_STATE: dict = {"debug": False, "argv": []}

app = typer.Typer(
    name="agrad",
    help=(
        "Train models from YAML configs on autogradcli's own autograd engine, check custom "
        "autograd Functions against finite differences, inspect models, and evaluate, predict "
        "with and compare runs.\n\n"
        "Exit codes: 0 ok, 1 a run or check failed, 2 usage/config/import error, 130 interrupted."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain click help: rich is imported only by commands that print
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        from .._version import __version__

        typer.echo(f"agrad {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", "-V", callback=_version, is_eager=True, help="Print the version."
    ),
    debug: bool = typer.Option(
        False, "--debug", help="Show Python tracebacks for errors (also AGRAD_DEBUG=1)."
    ),
) -> None:
    """agrad: a config-driven trainer on autogradcli's autograd engine."""
    _STATE["debug"] = debug or _STATE["debug"]


class Progress(str, enum.Enum):
    auto = "auto"
    bar = "bar"
    plain = "plain"
    none = "none"


TRAIN_HELP = """Train the model described by CONFIG (a YAML file).

Top-level keys of the config (only data and model are required; every
default is filled in, see --print-config):

\b
  name       run name (default: the file's stem)
  seed       seeds weights, the split and shuffling (default 0)
  device     cpu | cuda | cuda:N
  data       dataset: one of
             {datasets}
             and its keys; val_split or val, test_split or test
  model      a list of layers, or {blocks: ..., output: ...};
             sizes may be `auto`; a layer type may be an import
             path to an nn.Module or an autograd.Function
  init_from  {path: weights file or run folder, strict, map, freeze,
             checkpoint}: start from pretrained weights
  loss       a name or {type: ..., kwargs}: one of
             {losses}
             (case and `_` ignored: cross_entropy), or
             {shorthands}
  optimizer  {type: ..., lr: ...}, type one of
             {optimizers}
  scheduler  {type: ..., interval: epoch|step}, type one of
             {schedulers}
  hooks      a list of
             {hooks},
             or user hooks by import path
  metrics    logged every epoch as train_<m>/val_<m>, a list of
             {metrics}
  train      {train}
  output     dir: where run folders go
  sweep      the search space of `agrad sweep` (agrad train ignores it)

The full schema: README.md, section "Config schema". Problems in the
config are reported all at once as `file:line:col  key.path: message`
(exit code 2).
"""


@app.command(help=TRAIN_HELP, cls=TrainCommand)
def train(
    config: Path | None = typer.Argument(
        None,
        metavar="CONFIG",
        help="The YAML config file (not needed with --resume).",
        show_default=False,
    ),
    set_: list[str] = typer.Option(
        [],
        "--set",
        "-s",
        metavar="KEY.PATH=VALUE",
        help="Override a config value (YAML value; list items by index: model.1.out_features=32). "
        "Repeatable.",
    ),
    print_config: bool = typer.Option(
        False, "--print-config", help="Print the resolved config (every default filled) and exit."
    ),
    dry_run: bool = typer.Option(
        False,
        "--dry-run",
        help="Validate and build, run one forward/backward on one batch, print the model table, "
        "and stop.",
    ),
    resume: Path | None = typer.Option(
        None,
        "--resume",
        metavar="RUN_DIR",
        help="Continue the run in RUN_DIR from its last checkpoint.",
    ),
    progress: Progress = typer.Option(
        Progress.auto, "--progress", help="Progress display (auto: a bar on a terminal)."
    ),
    runs_dir: Path | None = typer.Option(
        None, "--runs-dir", metavar="DIR", help="Where run folders go (default: output.dir)."
    ),
    nproc: int = typer.Option(
        1,
        "--nproc",
        min=1,
        metavar="N",
        help="Train data-parallel on N processes started through mpiexec (train.batch_size "
        "stays the global batch).",
    ),
    threads: int | None = typer.Option(
        None,
        "--threads",
        min=1,
        metavar="N",
        help="CPU threads for numpy's BLAS (the matrix products; default: the usable cores, "
        "or OMP_NUM_THREADS; under --nproc, the cores shared among the ranks).",
        show_default=False,
    ),
) -> None:
    from .train_cmd import run_train

    code = run_train(
        str(config) if config is not None else None,
        list(set_),
        print_config=print_config,
        dry_run=dry_run,
        resume=str(resume) if resume is not None else None,
        progress=progress.value,
        runs_dir=str(runs_dir) if runs_dir is not None else None,
        nproc=nproc,
        argv=list(_STATE["argv"]),
        threads=threads,
    )
    raise typer.Exit(code)


GRADCHECK_HELP = """Check a custom autograd Function against finite differences.

TARGET is `package.module:Name` or `path/to/file.py:Name` (an
autograd.Function subclass), or a config file: then every custom
Function used as a layer is checked on the layer's parameters and the
input it receives from the data.

Inputs: --input name=SHAPE (names: forward's parameters after ctx), or
the Function's `example_inputs` (a tuple, or a staticmethod returning
one); --input/--arg override single entries. All in float64.

\b
Checks: backward returns one gradient per input (shapes, dtypes); the
Jacobian matches central differences (|a - n| <= atol + rtol * |n|);
backward is deterministic (--nondet-tol); second order (--order 2).
Kinks (left and right slopes differ, e.g. relu at 0) are reported as
kinks, not failures. A Jacobian of more than 2^20 elements is never
built: it is checked as v^T J at every input element (at a random
sample of them for very large inputs), and the output says so. See
README.md, section "agrad gradcheck".

Exit codes: 0 all checks pass, 1 a check failed, 2 usage/import error.
"""


@app.command(help=GRADCHECK_HELP)
def gradcheck(
    target: str = typer.Argument(
        ..., metavar="TARGET", help="module:Name, file.py:Name, or a config .yaml."
    ),
    input_: list[str] = typer.Option(
        [],
        "--input",
        "-i",
        metavar="NAME=SHAPE",
        help="A tensor argument by shape, e.g. x=4,3 (x=() or x=scalar: 0-d). Repeatable.",
    ),
    arg: list[str] = typer.Option(
        [], "--arg", metavar="NAME=VALUE", help="A non-tensor argument (YAML value). Repeatable."
    ),
    domain: list[str] = typer.Option(
        [],
        "--domain",
        metavar="NAME=DOMAIN",
        help="Where random values for NAME are drawn: any (normal), positive (0.5..2), "
        "nonzero (±0.5..2), unit (-0.9..0.9). Repeatable.",
    ),
    eps: float = typer.Option(1e-6, "--eps", help="Finite-difference step."),
    atol: float = typer.Option(1e-5, "--atol", help="Absolute tolerance."),
    rtol: float = typer.Option(1e-3, "--rtol", help="Relative tolerance."),
    nondet_tol: float = typer.Option(
        0.0, "--nondet-tol", help="Allowed difference between two backward runs."
    ),
    order: int = typer.Option(1, "--order", min=1, max=2, help="2: also check second order."),
    fast: bool = typer.Option(
        False, "--fast", help="Compare v^T J u only; locate failures with full Jacobians."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed for the random inputs."),
    show: int = typer.Option(5, "--show", min=1, help="Worst elements shown per failing pair."),
    set_: list[str] = typer.Option(
        [], "--set", "-s", metavar="KEY.PATH=VALUE", help="Config override (config TARGET)."
    ),
    json_: bool = typer.Option(False, "--json", help="Write the report as JSON to stdout."),
) -> None:
    from ..autograd.function_check import CheckOptions
    from .gradcheck_cmd import run_gradcheck

    options = CheckOptions(eps, atol, rtol, nondet_tol, order, fast, seed)
    code = run_gradcheck(
        target,
        list(input_),
        list(arg),
        list(domain),
        options,
        show=show,
        overrides=list(set_),
        as_json=json_,
        debug=_STATE["debug"],
    )
    raise typer.Exit(code)


INSPECT_HELP = """Show a model as a table: layers, shapes, parameters, MACs, memory.

MODEL is a config file or a run folder (config.resolved.yaml or
config.yaml; its summary.json gives the run's status and best metrics).
The model is built from the config and one batch of its training data
runs through it (the batch dim is shown as B). See README.md, section
"agrad inspect".
"""


@app.command(help=INSPECT_HELP)
def inspect(
    model: Path = typer.Argument(..., metavar="MODEL", help="A config file or a run folder."),
    depth: int = typer.Option(3, "--depth", min=0, help="How many levels of submodules to show."),
    set_: list[str] = typer.Option(
        [], "--set", "-s", metavar="KEY.PATH=VALUE", help="Config override."
    ),
    json_: bool = typer.Option(False, "--json", help="Write the summary as JSON to stdout."),
) -> None:
    from .inspect_cmd import run_inspect

    raise typer.Exit(run_inspect(str(model), depth, list(set_), json_))


class CheckpointName(str, enum.Enum):
    best = "best"
    last = "last"


@app.command(name="eval")
def eval_(
    run_dir: Path = typer.Argument(..., metavar="RUN", help="A run folder."),
    checkpoint: CheckpointName = typer.Option(CheckpointName.best, "--checkpoint"),
    data: Path | None = typer.Option(
        None,
        "--data",
        metavar="FILE",
        help="Evaluate on this file, read with the run's own data spec (a csv run's "
        "target_column...; by extension for digits/sine/spirals/idx) instead of the run's "
        "test data. Needed for a run without a test split.",
    ),
    set_: list[str] = typer.Option(
        [],
        "--set",
        "-s",
        metavar="KEY.PATH=VALUE",
        help="Change the run's stored config first, e.g. train.batch_size=256 or device=cpu. "
        "data.* and seed are refused: a new split would re-draw rows the run trained or "
        "validated on (give --data). Repeatable.",
    ),
    json_: bool = typer.Option(False, "--json", help="Write the metrics as JSON to stdout."),
) -> None:
    """Print a checkpoint's metrics on the run's test data (data.test_split or data.test) or
    on --data FILE, and write them to RUN/eval/<checkpoint>-<data>.json (<data>: test or the
    file's stem; -2, -3... when that name holds another file's result)."""
    from .eval_cmd import run_eval

    data_file = str(data) if data else None
    raise typer.Exit(run_eval(str(run_dir), checkpoint.value, data_file, json_, list(set_)))


@app.command()
def predict(
    run_dir: Path = typer.Argument(..., metavar="RUN", help="A run folder."),
    input_: Path = typer.Option(
        ..., "--input", "-i", metavar="FILE", help="Inputs: .npz (array x), .csv, or IDX images."
    ),
    output: Path | None = typer.Option(
        None,
        "--output",
        "-o",
        metavar="FILE",
        help="Where the predictions go: .csv or .npz (default RUN/predict/<ckpt>-<input>.csv); "
        "never the --input file.",
    ),
    checkpoint: CheckpointName = typer.Option(CheckpointName.best, "--checkpoint"),
    overwrite: bool = typer.Option(
        False, "--overwrite", help="Replace the output file if it exists (else refused)."
    ),
) -> None:
    """Run a trained model on new inputs: the class and per-class probabilities for
    classification, the values for regression."""
    from .predict_cmd import run_predict

    out = str(output) if output else None
    raise typer.Exit(run_predict(str(run_dir), str(input_), out, checkpoint.value, overwrite))


GENERATE_HELP = """Sample text from a language-model run (dataset: text, task: next_token).

The prompt is read with the run's tokens and vocabulary (a token the
vocabulary lacks is read as <unk>, with a note) and cropped to the
last block_size tokens, as the model was trained; then --length tokens
are drawn one at a time from the model's last position. Prints the
prompt and what follows it. The same --seed repeats the same text.
"""


@app.command(help=GENERATE_HELP)
def generate(
    run_dir: Path = typer.Argument(..., metavar="RUN", help="A language-model run folder."),
    prompt: str = typer.Option(
        "\n", "--prompt", "-p", help="The text to continue.", show_default="a newline"
    ),
    length: int = typer.Option(200, "--length", "-n", min=1, help="How many tokens to draw."),
    temperature: float = typer.Option(
        0.8,
        "--temperature",
        "-t",
        min=0.0,
        help="Divides the logits: below 1 sharper, above 1 flatter; 0 takes the likeliest.",
    ),
    top_k: int = typer.Option(
        40, "--top-k", "-k", min=0, help="Draw among the K likeliest tokens only (0: all)."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the draws."),
    checkpoint: CheckpointName = typer.Option(CheckpointName.best, "--checkpoint"),
) -> None:
    from .generate_cmd import run_generate

    code = run_generate(str(run_dir), prompt, length, temperature, top_k, seed, checkpoint.value)
    raise typer.Exit(code)


def _is_cli_exception(err: BaseException) -> bool:
    """A usage error raised by typer's (or click's) parser: it knows how to show itself."""
    mod = type(err).__module__
    return mod.startswith(("typer", "click")) and hasattr(err, "show") and hasattr(err, "exit_code")


def run(argv: list[str]) -> int:
    """Run the app on ``argv``; map every outcome to an exit code."""
    import sys

    _STATE["debug"] = "--debug" in argv or os.environ.get("AGRAD_DEBUG", "") not in ("", "0")
    _STATE["argv"] = list(argv)
    try:
        result = app(args=argv, prog_name="agrad", standalone_mode=False)
    except typer.Exit as e:
        if int(e.exit_code) == EXIT_INTERRUPTED:  # typer's own handling of Ctrl-C
            print("agrad: interrupted", file=sys.stderr)
        return int(e.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        print("agrad: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as e:
        if type(e).__name__ == "Exit" and hasattr(e, "exit_code"):
            if int(e.exit_code) == EXIT_INTERRUPTED:
                print("agrad: interrupted", file=sys.stderr)
            return int(e.exit_code)
        if type(e).__name__ == "Abort":
            print("agrad: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
        if _is_cli_exception(e):
            e.show()  # type: ignore[attr-defined]
            code = int(e.exit_code)  # type: ignore[attr-defined]
            return code if code else EXIT_USAGE
        return report(e, _STATE["debug"])
    code = int(result) if isinstance(result, int) else 0
    if code == EXIT_INTERRUPTED:  # typer turns Ctrl-C into Exit(130), returned as the result
        print("agrad: interrupted", file=sys.stderr)
    return code


# the project commands (export, runs, sweep, port) register on the same app
from . import app_project  # noqa: E402,F401
