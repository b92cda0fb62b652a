"""``agrad train``: load and validate a config, then print it, dry-run it, or train."""

from __future__ import annotations

import sys

from .console import console
from .errors import EXIT_FAILED, EXIT_OK, run_exit_code


def run_train(
    config_path: str | None,
    overrides: list[str],
    *,
    print_config: bool,
    dry_run: bool,
    resume: str | None,
    progress: str,
    runs_dir: str | None,
    nproc: int = 1,
    argv: list[str] | None = None,
    threads: int | None = None,
) -> int:
    from ..trainer.distributed import launched_world_size

    if nproc > 1 and launched_world_size() <= 1 and not (print_config or dry_run):
        from .launch import launch_checked

        return launch_checked(nproc, config_path, overrides, resume, argv or [])
    if not print_config:
        set_threads(threads, launched_world_size())
        from ..backend.heap import keep_freed_blocks

        keep_freed_blocks()  # this process is ours: freed step arrays stay in the heap
    if launched_world_size() <= 1 or print_config or dry_run:
        return _run_one(config_path, overrides, print_config, dry_run, resume, progress, runs_dir)
    from .launch import run_rank

    return run_rank(config_path, overrides, resume, progress, runs_dir, _finish)


def set_threads(threads: int | None, world_size: int = 1) -> int:
    """Set the intra-op (and BLAS) threads for this process: ``threads``, else the default
    (the usable cores or OMP_NUM_THREADS) shared among ``world_size`` ranks; the count set."""
    from ..backend.threads import get_num_threads, set_num_threads

    n = threads if threads is not None else max(1, get_num_threads() // max(1, world_size))
    set_num_threads(n)
    return n


def _run_one(
    config_path: str | None,
    overrides: list[str],
    print_config: bool,
    dry_run: bool,
    resume: str | None,
    progress: str,
    runs_dir: str | None,
) -> int:
    from .errors import UserError

    if resume is not None:
        if print_config or dry_run:
            raise UserError(
                "--resume continues a run with its stored config: drop --print-config/--dry-run"
            )
        import os

        if not os.path.isdir(resume):
            raise UserError(f"--resume {resume}: no such run folder")
        from ..trainer import train_from_config

        result = train_from_config(None, resume=resume, progress=progress, overrides=overrides)
        return _finish(result, progress)
    if config_path is None:
        raise UserError("missing CONFIG (or --resume RUN_DIR); see agrad train --help")
    from ..config import load_config

    config = load_config(config_path, overrides)  # ConfigError -> exit 2 (errors.report)
    if print_config:
        sys.stdout.write(config.to_yaml())
        return EXIT_OK
    if dry_run:
        return _dry_run(config)
    from ..trainer import train_from_config

    result = train_from_config(config, progress=progress, runs_dir=runs_dir)
    return _finish(result, progress)


def _finish(result: object, progress: str) -> int:
    """The run's exit code; with --progress none, one line saying how it ended and where."""
    code = run_exit_code(getattr(result, "status", "failed"))
    if progress == "none":
        message = str(getattr(result, "message", "")).splitlines()
        line = f"run {getattr(result, 'status', '')}: {getattr(result, 'run_dir', '')}"
        if message:
            line += f" ({message[0]})"
        print("\n".join([line, *message[1:]]), file=sys.stderr if code else sys.stdout)
    return code


def _dry_run(config: object) -> int:
    """Build, run the Trainer's own step on one batch (no optimizer step), show the table."""
    from ..config import build_experiment
    from ..nn.utils.summary import summarize
    from ..trainer import trainer_from_experiment
    from .inspect_cmd import render_summary

    exp = build_experiment(config)
    out = console()
    trainer = trainer_from_experiment(exp)
    step = trainer.dry_run()
    x = trainer.batch[0] if trainer.batch is not None else None
    summary = summarize(exp.model, x, depth=3)
    render_summary(out, summary, title=f"{exp.name} (dry run)")
    missing = step["missing_grads"]
    out.print(
        f"dry run: one batch {step['input']} -> {step['output']}, "
        f"loss {step['loss']:.6g} ({type(exp.loss_fn).__name__}), backward ok"
        + (f", {missing} parameters got no gradient" if missing else "")
    )
    if not step["finite"]:
        print(
            "agrad: error: the loss or a gradient is not finite on the first batch", file=sys.stderr
        )
        return EXIT_FAILED
    out.print(f"config {config.path} is valid; run without --dry-run to train")  # type: ignore[attr-defined]
    return EXIT_OK
