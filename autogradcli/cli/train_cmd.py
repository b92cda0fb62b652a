"""``agrad train``: load and validate a config, then print it, dry-run it, or train."""

from __future__ import annotations

import math
import sys

from .console import console
from .errors import EXIT_FAILED, EXIT_OK


def run_train(
    config_path: str | None,
    overrides: list[str],
    *,
    print_config: bool,
    dry_run: bool,
    resume: str | None,
    progress: str,
    runs_dir: str | None,
) -> int:
    from .errors import UserError

    if resume is not None:
        if print_config or dry_run or overrides:
            raise UserError(
                "--resume continues a run with its stored config: drop "
                "--print-config/--dry-run/--set"
            )
        import os

        if not os.path.isdir(resume):
            raise UserError(f"--resume {resume}: no such run folder")
        from ..trainer import train_from_config

        result = train_from_config(None, resume=resume, progress=progress)
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
    code = int(getattr(result, "exit_code", 1))
    if progress == "none":
        message = getattr(result, "message", "")
        line = f"run {getattr(result, 'status', '')}: {getattr(result, 'run_dir', '')}"
        print(line + (f" ({message})" if message else ""), file=sys.stderr if code else sys.stdout)
    return code


def _dry_run(config: object) -> int:
    from ..config import build_experiment
    from ..nn.utils.summary import summarize
    from .inspect_cmd import render_summary

    exp = build_experiment(config)
    out = console()
    batch = next(iter(exp.train_loader))
    x, y = batch[0], batch[1]
    exp.model.train()
    exp.optimizer.zero_grad()
    pred = exp.model(x)
    loss = exp.loss_fn(pred, y)
    loss.backward()
    value = float(loss.item())
    grads = [p.grad for p in exp.model.parameters() if p.requires_grad]
    missing = sum(1 for g in grads if g is None)
    finite = all(math.isfinite(float(g.abs().sum().item())) for g in grads if g is not None)
    exp.optimizer.zero_grad()
    summary = summarize(exp.model, x, depth=3)
    render_summary(out, summary, title=f"{exp.name} (dry run)")
    out.print(
        f"dry run: one batch {tuple(x.shape)} -> {tuple(pred.shape)}, "
        f"loss {value:.6g} ({type(exp.loss_fn).__name__}), backward ok"
        + (f", {missing} parameters got no gradient" if missing else "")
    )
    if not math.isfinite(value) or not finite:
        print(
            "agrad: error: the loss or a gradient is not finite on the first batch", file=sys.stderr
        )
        return EXIT_FAILED
    out.print(f"config {config.path} is valid; run without --dry-run to train")  # type: ignore[attr-defined]
    return EXIT_OK
