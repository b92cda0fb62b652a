"""Validation of the ``data`` section: a built-in dataset's keys, or a user dataset function's
keyword arguments, plus the validation data (``val_split`` or a separate ``val`` dataset)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .checks import FRACTION, OPT_NONNEG_INT, STR, is_num, show
from .errors import Path, did_you_mean
from .imports import is_import_path
from .schema import DATASET_CHECKS, DATASETS, path_settings_of

if TYPE_CHECKING:
    from .validator import Validator

__all__ = ["has_validation", "validate_data"]


def validate_data(
    v: Validator, value: Any, path: Path, seed: int, top: bool
) -> dict[str, Any] | None:
    """The dataset at ``path`` with defaults filled in; ``top`` for ``data`` itself (which also
    takes ``val_split``/``val`` and ``test_split``/``test``), not for ``data.val``/``data.test``.
    A null dataset ``seed`` becomes the run's ``seed`` (``seed + 1`` for ``data.val``,
    ``seed + 2`` for ``data.test``, so the sets differ)."""
    spec = v.mapping(value, path, f"'{path[-1]}'")
    if spec is None:
        return None
    if "dataset" not in spec:
        v.error(path, f"'{path[-1]}' needs 'dataset' (one of {', '.join(DATASETS)})")
        return dict(spec)
    name = spec["dataset"]
    extra = (
        {"val_split": FRACTION, "val": None, "test_split": FRACTION, "test": None} if top else {}
    )
    out: dict[str, Any]
    if is_import_path(name):
        fn = v.resolve(name, path + ("dataset",))
        if fn is not None and not callable(fn):
            v.error(path + ("dataset",), f"{name!r} is not callable")
        out = {k: x for k, x in spec.items() if k not in extra}
        if fn is not None and callable(fn):
            rest = {k: x for k, x in out.items() if k != "dataset"}
            v.kwargs(rest, path, fn, f"dataset {name}")
            for key in path_settings_of(name, fn):
                if key in rest:
                    v.check(rest[key], path + (key,), STR)
    elif not isinstance(name, str) or name not in DATASETS:
        hint = did_you_mean(str(name), DATASETS) if isinstance(name, str) else ""
        v.error(
            path + ("dataset",),
            f"unknown dataset {show(name) if not isinstance(name, str) else repr(name)}"
            f"{hint}; expected one of {', '.join(DATASETS)} or an import path",
        )
        return dict(spec)
    else:
        out = _builtin_dataset(v, spec, path, name, extra, top)
        if "seed" in out and out["seed"] is None:
            out["seed"] = seed if top else seed + (2 if path[-1] == "test" else 1)
    if top:
        if "val" in spec and spec["val"] is not None:
            if spec.get("val_split") is not None:  # null: as config.resolved.yaml writes it
                v.error(path + ("val_split",), "give either 'val_split' or 'val', not both")
            out["val_split"] = None
            out["val"] = validate_data(v, spec["val"], path + ("val",), seed, top=False)
        else:
            out["val_split"] = spec.get("val_split", 0.2)
            v.check(out["val_split"], path + ("val_split",), FRACTION)
            out["val"] = None
        _test_data(v, spec, path, seed, out)
    return out


def _test_data(v: Validator, spec: dict[str, Any], path: Path, seed: int, out: dict) -> None:
    """``test_split`` (a seeded fraction of the data, carved before ``val_split``) or a separate
    ``test`` dataset, into ``out``."""
    if "test" in spec and spec["test"] is not None:
        if spec.get("test_split"):
            v.error(path + ("test_split",), "give either 'test_split' or 'test', not both")
        out["test_split"] = 0.0
        out["test"] = validate_data(v, spec["test"], path + ("test",), seed, top=False)
        return
    out["test_split"] = spec.get("test_split", 0.0)
    v.check(out["test_split"], path + ("test_split",), FRACTION)
    out["test"] = None


def _builtin_dataset(
    v: Validator, spec: dict[str, Any], path: Path, name: str, extra: dict, top: bool
) -> dict[str, Any]:
    """The keys of dataset kind ``name`` (``schema.DATASETS``: its ``__init__`` arguments),
    checked and completed."""
    defaults = {"dataset": name, **DATASETS[name]}
    checks = {k[1]: c for k, c in DATASET_CHECKS.items() if k[0] == name}
    checks["seed"] = OPT_NONNEG_INT
    for key in path_settings_of(name):
        checks.setdefault(key, STR)
    body = {k: x for k, x in spec.items() if k not in extra}
    allowed = dict(defaults)
    if top:
        allowed.update({"val_split": 0, "val": 0, "test_split": 0, "test": 0})
    v.unknown_keys(spec, path, allowed, f"dataset {name!r}")
    return v.fields(
        {k: x for k, x in body.items() if k in defaults},
        path,
        defaults,
        checks,
        f"dataset {name!r}",
    )


def has_validation(data: Any) -> bool:
    """Whether the validated ``data`` section gives validation data. True too when the section
    is broken, so its errors are not followed by ones about missing validation data."""
    spec = data if isinstance(data, dict) else {}
    split = spec.get("val_split")
    return (
        spec.get("val") is not None
        or not is_num(split)
        or split > 0
        or not isinstance(spec.get("dataset"), str)
    )
