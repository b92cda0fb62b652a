"""``train_from_config`` and ``resume``: a config (or a run folder) to a finished run.

This is the glue the ``agrad`` CLI calls: build the experiment, make the run folder, write the
configs, train, and return a ``RunResult`` (its ``status`` says how the run ended).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from typing import Any

from ..config import Config, build_experiment, load_config
from ..config.errors import ConfigError, ConfigIssue
from .builtin import BUILTIN_CALLBACKS
from .callbacks import FunctionCallback, ModuleHooks, event_table
from .distributed import DistributedContext
from .evaluate import TestEvaluation
from .init_from import INIT_FROM_FILE, describe_report, report_json, summary_entry
from .progress import Reporter, make_reporter
from .run_dir import RESOLVED_CONFIG, RunDir, RunFolderNotMade, os_reason
from .run_logger import RunLogger
from .trainer import RunResult, Trainer

__all__ = [
    "BUILTIN_CALLBACKS",
    "RunResult",
    "callbacks_from_hooks",
    "resume",
    "train_from_config",
    "trainer_from_experiment",
]


def _hook_error(spec: Any, message: str) -> ConfigError:
    """A problem with a user callback, at its hook's line (exit code 2)."""
    return ConfigError([ConfigIssue(spec.where or "config", spec.path, message)])


def callbacks_from_hooks(hooks: Any) -> list[Any]:
    """The callbacks for ``Experiment.hooks`` (``HookSpec`` list): built-in and user callbacks,
    and one ``ModuleHooks`` for the module hooks."""
    callbacks: list[Any] = []
    module_hooks: list[tuple[str, str, Callable]] = []
    for spec in hooks:
        if spec.kind == "builtin":
            try:
                callbacks.append(BUILTIN_CALLBACKS[spec.target](**spec.kwargs))
            except ImportError as err:  # an optional extra (tensorboardX) is missing
                raise _hook_error(spec, str(err)) from None
        elif spec.kind == "callback":
            target = spec.target
            if not isinstance(target, type):
                callbacks.append(FunctionCallback(target, **spec.kwargs))
                continue
            try:
                callback = target(**spec.kwargs)
            except Exception as err:
                raise _hook_error(spec, f"{target.__name__}(...) failed: {err}") from err
            try:
                event_table([callback])  # a Lightning-named event is refused here
            except TypeError as err:
                raise _hook_error(spec, str(err)) from None
            callbacks.append(callback)
        else:
            module_hooks.append((spec.layer, spec.kind, spec.target))
    if module_hooks:
        callbacks.append(ModuleHooks(module_hooks))
    return callbacks


def trainer_from_experiment(
    experiment: Any,
    *,
    run: RunDir | None = None,
    reporter: Reporter | None = None,
    epochs: int | None = None,
    context: DistributedContext | None = None,
) -> Trainer:
    """A ``Trainer`` for an ``Experiment`` (``config.build_experiment``); ``run``: the folder
    to write (with a ``RunLogger``), ``reporter``: the progress display; ``context``: this
    rank's place in a data-parallel run (a ``DistributedTrainer`` when there are several)."""
    exp = experiment
    callbacks = callbacks_from_hooks(exp.hooks)
    t = exp.train
    config = getattr(exp, "config", None)
    context = context or DistributedContext()
    if run is not None:
        extra = {"config": config.path if config is not None else None}
        extra["world_size"] = context.world_size
        if getattr(exp, "init_from", None):
            extra["init_from"] = summary_entry(exp.init_from)
        callbacks.append(RunLogger(run, exp.name, extra))
        if getattr(exp, "test_loader", None) is not None:
            callbacks.append(TestEvaluation(exp.test_loader))
    if reporter is not None:
        callbacks.append(reporter)
    kind: Any = Trainer
    if context.distributed:
        from .distributed_trainer import DistributedTrainer

        kind = functools.partial(DistributedTrainer, context=context)
    return kind(
        exp.model,
        exp.loss_fn,
        exp.optimizer,
        exp.train_loader,
        exp.val_loader,
        scheduler=exp.scheduler,
        scheduler_interval=exp.scheduler_interval,
        scheduler_monitor=getattr(exp, "scheduler_monitor", None),
        callbacks=callbacks,
        epochs=t.epochs if epochs is None else epochs,
        eval_every=t.eval_every,
        grad_clip=t.grad_clip,
        task=exp.task,
        metrics=exp.metrics,
        device=exp.device,
        run=run,
        seed=exp.seed,
        default_callbacks=False,  # the config's hooks already hold the defaults
    )


def _as_config(config: Config | str | os.PathLike, overrides: Any = ()) -> Config:
    if isinstance(config, Config):
        return config
    return load_config(os.fspath(config), list(overrides or ()))


def _runs_dir(config: Config, runs_dir: str | None) -> str:
    if runs_dir is not None:
        return runs_dir
    return config.output_dir()  # relative to the config file when written there


def train_from_config(
    config: Config | str | os.PathLike | None,
    *,
    resume: str | os.PathLike | None = None,
    progress: str | Reporter = "auto",
    runs_dir: str | None = None,
    console: Any = None,
    epochs: int | None = None,
    overrides: Sequence[str] = (),
    context: DistributedContext | None = None,
    on_start: Callable[[str], None] | None = None,
    folder: str | None = None,
    callbacks: Sequence[Any] = (),
) -> RunResult:
    """Train the run ``config`` describes (a ``Config`` or a YAML path) in a new run folder
    under ``runs_dir`` (default: the config's ``output.dir``), or continue the run folder
    ``resume`` (then its stored config is used and ``config`` may be None).

    ``progress``: ``auto`` | ``bar`` | ``plain`` | ``none`` or a Reporter. ``epochs`` overrides
    ``train.epochs`` (to extend a finished run when resuming). ``overrides`` (``--set``
    strings) may change, on resume, only ``RESUMABLE_KEYS``. Config errors
    (``ConfigError``) propagate; training problems come back as the result's status.
    ``context``: this rank of a data-parallel run; only rank 0 writes the run folder and shows
    progress (the others get a result whose ``run_dir`` is None). ``on_start`` is called with
    the run folder's path once it exists (the ``--nproc`` launcher records it, to say how the
    run ended if its ranks are killed).
    """
    context = context or DistributedContext()
    if not context.is_main:
        progress = "none"
    reporter = progress if isinstance(progress, Reporter) else make_reporter(progress, console)
    if resume is not None:
        return _resume(os.fspath(resume), reporter, epochs, list(overrides), context, on_start)
    if config is None:
        raise ValueError("train_from_config needs a config (or resume=<run folder>)")
    cfg = _as_config(config)
    context.check_global_batch(cfg)
    exp = build_experiment(cfg)
    context.check_global_batch(cfg, exp)
    if exp.init_from and context.is_main:
        reporter.log(describe_report(exp.init_from))
    if not context.is_main:
        return trainer_from_experiment(exp, epochs=epochs, context=context).fit(raise_errors=False)
    trainer = _new_run(
        cfg, exp, _runs_dir(cfg, runs_dir), reporter, epochs, context, folder, callbacks
    )
    if on_start is not None and trainer.run is not None:
        on_start(trainer.run.path)
    return trainer.fit(raise_errors=False)


def _new_run(
    cfg: Config,
    exp: Any,
    runs_dir: str,
    reporter: Reporter,
    epochs: int | None,
    context: DistributedContext,
    folder: str | None = None,
    callbacks: Sequence[Any] = (),
) -> Trainer:
    """The trainer of a new run, its folder made whole (configs, model.txt, summary.json) out
    of sight and then renamed into place: a failure part-way (a user callback refused, a full
    disk) leaves no folder behind; a full disk is a ``RunFolderNotMade`` (exit 2)."""
    try:
        run = RunDir.stage(runs_dir, exp.name, folder=folder)
    except OSError as err:
        raise RunFolderNotMade(
            f"cannot make a run folder in {runs_dir}: {os_reason(err)}"
        ) from None
    try:
        run.write_config(cfg.text, cfg.to_yaml(absolute_paths=True))
        if exp.data_state is not None:
            run.write_data_state(exp.data_state)
        if getattr(exp, "init_from", None):
            run.write_text(INIT_FROM_FILE, report_json(exp.init_from))
        trainer = trainer_from_experiment(
            exp, run=run, reporter=reporter, epochs=epochs, context=context
        )
        for callback in callbacks:
            trainer.callbacks.append(callback)  # fit() orders them by `order`
        run.lock()  # held from here until fit() ends
        for callback in trainer.callbacks:
            if isinstance(callback, RunLogger):
                callback.begin(trainer)
        run.publish()
    except OSError as err:
        run.discard()
        raise run.not_made(err) from None
    except BaseException:
        run.discard()
        raise
    return trainer


# What may change when a run is resumed (``--resume RUN --set ...``): the length, validation
# frequency and early stopping; anything else would make the run a different run.
RESUMABLE_KEYS = ("train.epochs", "train.eval_every", "hooks.*.patience", "hooks.*.min_delta")


def _changed(old: Any, new: Any, path: tuple = ()) -> list[tuple]:
    """The key paths where two resolved configs differ."""
    if isinstance(old, dict) and isinstance(new, dict):
        out = []
        for key in sorted(set(old) | set(new), key=str):
            out += _changed(old.get(key), new.get(key), (*path, key))
        return out
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [p for i, (a, b) in enumerate(zip(old, new)) for p in _changed(a, b, (*path, i))]
    return [] if old == new else [path]


def _resume_config(run: RunDir, overrides: list[str], write: bool = True) -> Config:
    """The stored config, with ``overrides`` applied when they only touch ``RESUMABLE_KEYS``
    (then written back, so a later resume keeps them); ConfigError naming any other key."""
    import fnmatch

    stored = load_config(run.file(RESOLVED_CONFIG))
    if not overrides:
        return stored
    cfg = load_config(run.file(RESOLVED_CONFIG), overrides)
    refused = [
        ".".join(map(str, p))
        for p in _changed(stored.data, cfg.data)
        if not any(fnmatch.fnmatchcase(".".join(map(str, p)), k) for k in RESUMABLE_KEYS)
    ]
    if refused:
        message = (
            f"cannot change {', '.join(refused)} when resuming (the run would no longer be the "
            f"same run); only {', '.join(RESUMABLE_KEYS)} can change: start a new run instead"
        )
        raise ConfigError([ConfigIssue("--set", (), message)])
    if write:
        run.write_text(RESOLVED_CONFIG, cfg.to_yaml(absolute_paths=True))
    return cfg


def _resume(
    folder: str,
    reporter: Reporter,
    epochs: int | None,
    overrides: list[str],
    context: DistributedContext,
    on_start: Callable[[str], None] | None = None,
) -> RunResult:
    run = RunDir(folder)
    if on_start is not None and context.is_main:
        on_start(run.path)
    ckpt = run.checkpoint_path("last")
    if not os.path.isfile(ckpt):
        raise FileNotFoundError(
            f"cannot resume {folder!r}: it has no checkpoints/last (the run stopped before "
            "finishing its first epoch, or checkpoints were disabled)"
        )
    cfg = _resume_config(run, overrides, write=context.is_main)
    context.check_global_batch(cfg)
    exp = build_experiment(cfg, run.read_data_state())  # then the checkpoint's weights, RNG
    context.check_global_batch(cfg, exp)
    if context.is_main:
        trainer = trainer_from_experiment(
            exp, run=run, reporter=reporter, epochs=epochs, context=context
        )
    else:
        trainer = trainer_from_experiment(exp, epochs=epochs, context=context)
    trainer.load_checkpoint(ckpt)
    if overrides and trainer.epochs_done < trainer.epochs:
        trainer.should_stop, trainer.stop_reason = False, ""  # extended: train on
    reporter.log(
        f"resuming {run.path} after epoch {trainer.epochs_done}"
        + (f", step {trainer.global_step}" if trainer.batch_in_epoch else "")
    )
    return trainer.fit(raise_errors=False)


def resume(
    run_folder: str | os.PathLike,
    *,
    progress: str | Reporter = "auto",
    console: Any = None,
    epochs: int | None = None,
) -> RunResult:
    """Continue the run in ``run_folder`` from ``checkpoints/last`` with its stored config
    (``config.resolved.yaml``); ``epochs`` extends (or sets) the total number of epochs."""
    return train_from_config(
        None, resume=run_folder, progress=progress, console=console, epochs=epochs
    )
