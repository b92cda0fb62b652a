"""``agrad eval``: the metrics of a run's checkpoint on its test data, or on any data file."""

from __future__ import annotations

import itertools
import json
import os
import sys
from typing import Any

from .console import console
from .errors import EXIT_OK, UserError

__all__ = ["data_from_file", "inputs_from_file", "refuse_data_overrides", "run_eval"]


def data_from_file(exp: Any, path: str) -> Any:
    """The (input, target) samples of the file (or folder) ``path``, read by the run's own data
    kind and spec (its target column, keys, preprocessing) with the state fitted on its
    training rows. A problem with the file is a UserError naming it."""
    kind, state = exp.data_kind, (exp.data_state or {}).get("state", {})
    try:
        source = kind.read(path)
        return source, kind.samples(source, state)
    except (OSError, ValueError) as err:
        raise UserError(str(err)) from None


def inputs_from_file(exp: Any, path: str) -> tuple[Any, Any]:
    """(source, the inputs dataset) of ``path`` for ``predict``, read by the run's kind."""
    kind, state = exp.data_kind, (exp.data_state or {}).get("state", {})
    try:
        source = kind.read(path)
        return source, kind.inputs(source, state)
    except (OSError, ValueError) as err:
        raise UserError(str(err)) from None


# ``--set`` keys that would change which rows are drawn, or from what: the run's data is fixed.
_DATA_KEYS = ("data", "seed")


def refuse_data_overrides(overrides: list[str] | None) -> None:
    """Refuse a ``--set`` that changes the data section or the seed: a new split re-draws
    rows the run trained or validated on, so its "test" numbers would be leaked ones."""
    for text in overrides or ():
        key = text.partition("=")[0].strip()
        if key.split(".")[0] in _DATA_KEYS:
            raise UserError(
                f"--set {text}: eval cannot change {key}: the run's data and split are fixed "
                "(another split would re-draw rows the run trained or validated on); to "
                "evaluate on other data, give --data FILE"
            )


def _has_test(config_path: str) -> bool:
    """Whether the run's stored config has a test split or a test set."""
    import yaml

    try:
        with open(config_path, encoding="utf-8") as fh:
            data = (yaml.safe_load(fh) or {}).get("data") or {}
        return bool(data.get("test") or data.get("test_split"))
    except (OSError, ValueError, AttributeError, yaml.YAMLError):
        return False  # a broken config: loading the run reports it


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
    from ..trainer.run_dir import RESOLVED_CONFIG

    refuse_data_overrides(overrides)
    stored_config = os.path.join(run_path, RESOLVED_CONFIG)
    has_test = os.path.isfile(stored_config) and _has_test(stored_config)
    try:
        loaded = open_run(run_path, checkpoint, overrides, read_data=data is None and has_test)
    except (FileNotFoundError, ValueError) as err:
        raise UserError(str(err)) from None
    if data is None and not has_test:
        raise UserError(
            f"{run_path} has no test data (no data.test_split or data.test in its config): "
            "give --data FILE with data the run never trained or validated on"
        )
    exp = loaded.experiment
    if data is None:
        loader, label = exp.test_loader, "test"
    else:
        _, dataset = data_from_file(exp, data)
        loader = DataLoader(dataset, batch_size=exp.train.batch_size)
        label = os.path.splitext(os.path.basename(os.path.normpath(data)))[0]
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
