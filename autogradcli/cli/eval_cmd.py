"""``agrad eval``: the metrics of a run's checkpoint on its test data, or on any data file."""

from __future__ import annotations

import itertools
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
    or anything else as an IDX images file (``.idx``, ``-idx3-ubyte``; no targets). A file
    without a single sample is refused: "FILE has no rows"."""
    from ..data import load_csv, load_idx, load_npz
    from ..data.files import NoRowsError

    if not os.path.isfile(path):
        raise UserError(f"no such data file: {path}")
    lower = path.lower()
    try:
        if lower.endswith(".npz"):
            dataset = load_npz(path, "x", "y" if targets else None)
        elif lower.endswith((".csv", ".txt")):
            dataset = load_csv(path, -1 if targets else None)
        elif targets:
            raise UserError(
                f"{path}: evaluation needs targets: give an .npz file (x, y) or a .csv file "
                "(the last column is the target)"
            )
        else:
            dataset = load_idx(path)
    except UserError:
        raise
    except NoRowsError as err:
        raise UserError(f"{path} has no rows: {err.why}") from None
    except Exception as err:
        raise UserError(f"cannot load {path}: {err}") from None
    if len(dataset) == 0:
        shapes = ", ".join(str(tuple(t.shape)) for t in dataset.tensors)
        raise UserError(f"{path} has no rows (its arrays have shapes {shapes})")
    return dataset


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
        "data": "test" if data is None else os.path.realpath(data),
        "overrides": list(overrides or []),
        **metrics,
    }
    folder = loaded.run.file("eval")
    os.makedirs(folder, exist_ok=True)
    out_path = result_path(folder, f"{checkpoint}-{_safe(label)}", doc)
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


def _same_data(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two result documents are for the same data: the same file (or the run's test
    split) read under the same ``--set`` overrides."""

    def key(doc: dict[str, Any]) -> tuple[Any, Any]:
        data = doc.get("data")
        if isinstance(data, str) and data != "test":
            data = os.path.realpath(data)
        return data, doc.get("overrides", [])

    return key(a) == key(b)


def result_path(folder: str, base: str, doc: dict[str, Any]) -> str:
    """Where ``doc`` goes in ``folder``: ``BASE.json``, or ``BASE-2.json``, ``BASE-3.json``...
    when that name holds the result of other data. The result of the same data is replaced
    (re-evaluating replaces it); another's, or a file that is not a result, is never touched."""
    for n in itertools.count(1):
        path = os.path.join(folder, f"{base}.json" if n == 1 else f"{base}-{n}.json")
        if not os.path.lexists(path):
            return path
        try:
            with open(path, encoding="utf-8") as fh:
                old = json.load(fh)
        except (OSError, ValueError):
            continue
        if isinstance(old, dict) and _same_data(old, doc):
            return path
    raise AssertionError("unreachable")


def _safe(name: str) -> str:
    import re

    return re.sub(r"[^A-Za-z0-9._+-]+", "_", name) or "data"
