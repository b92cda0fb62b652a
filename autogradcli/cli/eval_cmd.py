"""``agrad eval``: the metrics of a run's checkpoint on its test data, or on any data file."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from .console import console
from .errors import EXIT_OK, UserError

__all__ = ["data_from_file", "run_eval"]


def data_from_file(path: str, targets: bool) -> Any:
    """A TensorDataset from a data file, by its extension, through the training loaders:
    ``.npz`` (arrays ``x`` and ``y``), ``.csv`` (the last column is the target when ``targets``)
    or anything else as an IDX images file (``.idx``, ``-idx3-ubyte``; no targets)."""
    from ..data import load_csv, load_idx, load_npz

    if not os.path.isfile(path):
        raise UserError(f"no such data file: {path}")
    lower = path.lower()
    try:
        if lower.endswith(".npz"):
            return load_npz(path, "x", "y" if targets else None)
        if lower.endswith((".csv", ".txt")):
            return load_csv(path, -1 if targets else None)
        if targets:
            raise UserError(
                f"{path}: evaluation needs targets: give an .npz file (x, y) or a .csv file "
                "(the last column is the target)"
            )
        return load_idx(path)
    except UserError:
        raise
    except Exception as err:
        raise UserError(f"cannot load {path}: {err}") from None


def run_eval(
    run_path: str,
    checkpoint: str,
    data: str | None,
    as_json: bool,
    overrides: list[str] | None = None,
) -> int:
    from ..data import DataLoader
    from ..trainer.evaluate import evaluate
    from ..trainer.load_run import open_run

    try:
        loaded = open_run(run_path, checkpoint, overrides)
    except (FileNotFoundError, ValueError) as err:
        raise UserError(str(err)) from None
    exp = loaded.experiment
    if data is None:
        if exp.test_loader is None:
            raise UserError(
                f"{run_path} has no test data (data.test_split or data.test in its config): "
                "give --data FILE (or --set data.test_split=0.2 / --set data.test=...)"
            )
        loader, label = exp.test_loader, "test"
    else:
        dataset = data_from_file(data, targets=True)
        loader = DataLoader(dataset, batch_size=exp.train.batch_size)
        label = os.path.splitext(os.path.basename(data))[0]
    try:
        metrics = evaluate(loaded.model, exp.loss_fn, loader, exp.task, exp.metrics, "test")
    except Exception as err:
        raise UserError(f"cannot evaluate on {data or 'the test data'}: {err}") from None
    doc = {
        "run": loaded.run.path,
        "checkpoint": checkpoint,
        "epoch": loaded.epoch,
        "data": "test" if data is None else os.path.abspath(data),
        "overrides": list(overrides or []),
        **metrics,
    }
    out_path = loaded.run.file(os.path.join("eval", f"{checkpoint}-{_safe(label)}.json"))
    os.makedirs(os.path.dirname(out_path), exist_ok=True)
    from .._utils.atomic import atomic_write_text

    atomic_write_text(out_path, json.dumps(doc, indent=2) + "\n")
    if as_json:
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        return EXIT_OK
    values = "  ".join(
        f"{k} {v:.4f}" for k, v in metrics.items() if k != "samples" and v is not None
    )
    out = console()
    out.print(
        f"{checkpoint} checkpoint (epoch {loaded.epoch}) on {label} "
        f"({metrics['samples']} samples): {values}",
        markup=False,
    )
    out.print(f"written to {out_path}", markup=False)
    return EXIT_OK


def _safe(name: str) -> str:
    import re

    return re.sub(r"[^A-Za-z0-9._+-]+", "_", name) or "data"
