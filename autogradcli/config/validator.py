"""``Validator``: checks a config's plain data and fills in every default.

This module holds the entry point (``validate``: the top-level keys, then each section in
order) and the checks every section shares: mappings, unknown keys with did-you-mean, typed
fields with defaults, constructor keyword arguments, ``type:`` names looked up in a table or
imported. The sections themselves are ``validate_data``, ``validate_model``,
``validate_training`` and ``validate_hooks``; the keys and defaults are in ``schema``.
"""

from __future__ import annotations

import re
from typing import Any

from . import registry
from .arguments import NO_DEFAULT, argument_check
from .checks import NONNEG_INT, STR, Check, check_for_default, describe, is_int, show
from .errors import Path, did_you_mean
from .imports import is_import_path
from .issues import IssueCollector
from .schema import (
    DEFAULT_OPTIMIZER,
    OUTPUT_DEFAULTS,
    REQUIRED,
    TOP_KEYS,
    monitor_check,
)
from .source import SourceMap
from .validate_data import has_validation, validate_data
from .validate_hooks import validate_hooks, validate_metrics
from .validate_init_from import validate_init_from
from .validate_model import validate_model
from .validate_sweep import validate_sweep
from .validate_training import (
    validate_loss,
    validate_optimizer,
    validate_scheduler,
    validate_train,
)

__all__ = ["Validator"]

_DEVICE = re.compile(r"^(cpu|cuda(:\d+)?)$")


class Validator(IssueCollector):
    """Checks a config's plain data and returns it with every default filled in.

    ``base_dir`` is the config file's directory (relative paths are resolved against it) and
    ``stem`` its name without extension (the default run name). Problems go to ``issues``.
    """

    def __init__(self, source: SourceMap, base_dir: str, stem: str) -> None:
        super().__init__(source, base_dir)
        self.stem = stem

    # ------------------------------------------------------------------ the whole config
    def validate(self, data: Any) -> dict[str, Any]:
        """The resolved config (every default filled in); problems are left in ``issues``."""
        root = self.mapping(data, (), "the config")
        if root is None:
            return {}
        self.unknown_keys(root, (), TOP_KEYS, "the config")
        out: dict[str, Any] = {}
        name = root.get("name", self.stem)
        if self.check(name, ("name",), STR) and (
            "/" in name or "\\" in name or name in (".", "..")
        ):
            self.error(("name",), f"the run name {name!r} must not be a path")
        out["name"] = name
        out["seed"] = root.get("seed", 0)
        self.check(out["seed"], ("seed",), NONNEG_INT)
        device = root.get("device", "cpu")
        if not (isinstance(device, str) and _DEVICE.match(device)):
            self.error(("device",), f"expected cpu, cuda or cuda:N, got {show(device)}")
        out["device"] = device
        seed = out["seed"] if is_int(out["seed"]) else 0

        if "data" not in root:
            self.error((), "the config needs 'data' (e.g. data: {dataset: digits})")
            out["data"] = None
        else:
            out["data"] = validate_data(self, root["data"], ("data",), seed, top=True)
        has_val = has_validation(out["data"])
        if "model" not in root:
            self.error((), "the config needs 'model' (a list of layers, or {blocks: ...})")
            out["model"] = None
        else:
            out["model"] = validate_model(self, root["model"], ("model",))
        if "init_from" in root:  # only when written: other configs' --print-config unchanged
            out["init_from"] = validate_init_from(self, root["init_from"], ("init_from",))
        dataset_name = (out["data"] or {}).get("dataset")
        default_loss = "MSELoss" if dataset_name == "sine" else "CrossEntropyLoss"
        out["loss"] = validate_loss(self, root.get("loss", default_loss), ("loss",))
        out["optimizer"] = validate_optimizer(
            self, root.get("optimizer", dict(DEFAULT_OPTIMIZER)), ("optimizer",)
        )
        out["scheduler"] = validate_scheduler(self, root.get("scheduler"), ("scheduler",), has_val)
        out["metrics"] = validate_metrics(self, root.get("metrics"), ("metrics",))
        out["hooks"] = validate_hooks(
            self, root.get("hooks", []), ("hooks",), has_val, out["metrics"]
        )
        out["train"] = validate_train(self, root.get("train", {}), ("train",))
        output = self.mapping(root.get("output", {}), ("output",), "'output'")
        out["output"] = self.fields(output or {}, ("output",), OUTPUT_DEFAULTS, {}, "'output'")
        if "sweep" in root:  # only when written: `--print-config` of other configs is unchanged
            out["sweep"] = validate_sweep(self, root["sweep"], ("sweep",), has_val, out["metrics"])
        return out

    # ------------------------------------------------------------------ shared checks
    def mapping(self, value: Any, path: Path, what: str) -> dict[str, Any] | None:
        """``value`` if it is a mapping, else None after reporting it."""
        if isinstance(value, dict):
            return value
        self.error(path, f"{what} must be a mapping, got {show(value)}")
        return None

    def unknown_keys(self, spec: dict, path: Path, allowed: Any, what: str) -> None:
        """Report each key of ``spec`` not in ``allowed``, with the nearest allowed one."""
        allowed = list(allowed)
        for key in spec:
            if key not in allowed:
                self.error(
                    path + (key,),
                    f"unknown key {key!r} for {what}{did_you_mean(str(key), allowed)}",
                )

    def check(self, value: Any, path: Path, check: Check | None) -> bool:
        """Whether ``value`` passes ``check`` (no check: it does); report it if not."""
        if check is None or check[1](value):
            return True
        self.error(path, f"expected {check[0]}, got {show(value)}")
        return False

    def fields(
        self,
        spec: dict[str, Any],
        path: Path,
        defaults: dict[str, Any],
        checks: dict[str, Check],
        what: str,
    ) -> dict[str, Any]:
        """Unknown keys, missing required keys, types; ``defaults`` filled in."""
        self.unknown_keys(spec, path, defaults, what)
        out: dict[str, Any] = {}
        for key, default in defaults.items():
            if key in spec:
                value = spec[key]
                self.check(value, path + (key,), checks.get(key, check_for_default(default)))
                out[key] = value
            elif default is REQUIRED:
                self.error(path, f"{what} needs {key!r}")
            else:
                out[key] = default
        return out

    def kwargs(self, spec: dict, path: Path, target: Any, what: str, skip: tuple = ()) -> None:
        """The keys of ``spec`` (less ``skip``) as keyword arguments of ``target``: unknown
        names (with did-you-mean) and missing required ones."""
        sig = registry.signature_of(target, skip)
        given = [k for k in spec if k not in skip]
        if not sig.var_keyword:
            accepted = list(sig.names)
            for key in given:
                if key not in accepted:
                    hint = did_you_mean(str(key), accepted)
                    if not hint:
                        hint = (
                            f" (it takes {', '.join(accepted)})" if accepted else " (it takes none)"
                        )
                    self.error(path + (key,), f"{what} got an unexpected argument {key!r}{hint}")
        for key in given:
            if key in sig.names and spec[key] != "auto":
                self.check(
                    spec[key], path + (key,), argument_check(key, sig.defaults.get(key, NO_DEFAULT))
                )
        missing = [n for n in sig.required if n not in spec]
        if missing:
            names = ", ".join(repr(n) for n in missing)
            self.error(
                path, f"{what} is missing required argument{'s' * (len(missing) > 1)} {names}"
            )

    def named_spec(self, value: Any, path: Path, what: str) -> dict[str, Any] | None:
        """A ``type:`` mapping (a copy) from ``value``, a bare name or a mapping with ``type``."""
        if isinstance(value, str):
            return {"type": value}
        spec = self.mapping(value, path, what)
        if spec is None:
            return None
        if "type" not in spec:
            self.error(path, f"{what} needs a 'type'")
            return None
        return dict(spec)

    def named_target(
        self, spec: dict, path: Path, table: dict, what: str, base: type, suffix: str = ""
    ) -> Any:
        """The class ``spec["type"]`` names: imported (a ``base`` subclass), or looked up in
        ``table`` loosely (case, ``_``, ``suffix``), when ``spec["type"]`` becomes the table's
        own spelling. None after reporting why there is none."""
        kind = spec["type"]
        if not isinstance(kind, str):
            self.error(
                path + ("type",),
                f"expected {'an' if what[0] in 'aeiou' else 'a'} {what} name, got {show(kind)}",
            )
            return None
        if is_import_path(kind):
            obj = self.resolve(kind, path + ("type",))
            if obj is not None and not (isinstance(obj, type) and issubclass(obj, base)):
                article = "an" if base.__name__[0] in "AEIOU" else "a"
                self.error(
                    path + ("type",),
                    f"{kind!r} is {describe(obj)}, not {article} {base.__name__} subclass",
                )
                return None
            return obj
        key = registry.loose_lookup(kind, table, suffix)
        if key is None:
            self.error(
                path + ("type",),
                f"unknown {what} {kind!r}{did_you_mean(kind, table)}; expected one of "
                f"{', '.join(sorted(table))} or an import path",
            )
            return None
        spec["type"] = key
        return table[key]

    def monitor(self, value: Any, path: Path, has_val: bool) -> None:
        """A metric name (``schema.monitor_check``); a ``val_`` one needs validation data."""
        if self.check(value, path, monitor_check()) and value.startswith("val_") and not has_val:
            self.error(path, f"{value} needs validation data (val_split > 0 or val)")
