"""``init_from``: start a run from pretrained weights (a state dict file, a safetensors file, an
autogradcli checkpoint or another run's folder), with key renames, a key report and frozen
parameters.

``read_source`` reads the weights (never unpickling code), ``load_weights`` matches them to the
model (``map`` renames by prefix, then missing / unexpected / shape-mismatched keys), and
``freeze`` turns ``requires_grad`` off by name patterns. Problems raise ``InitFromError``
naming the config key at fault, so the config reports them at that key's line.
"""

from __future__ import annotations

import fnmatch
import json
import os
from collections.abc import Mapping
from typing import Any

__all__ = [
    "INIT_FROM_FILE",
    "InitFromError",
    "apply_init_from",
    "describe_report",
    "freeze",
    "load_weights",
    "read_source",
    "report_json",
    "state_dict_of",
    "summary_entry",
]

INIT_FROM_FILE = "init_from.json"  # the key report, in the run folder


class InitFromError(ValueError):
    """A problem with ``init_from``: ``key`` is the setting at fault (``path``, ``map``...)."""

    def __init__(self, key: str | tuple, message: str) -> None:
        super().__init__(message)
        self.key = key if isinstance(key, tuple) else (key,)


def _sha256(path: str) -> str:
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _read_safetensors(path: str) -> dict[str, Any]:
    """A safetensors file's tensors: through ``serialization.load_safetensors`` when present,
    else the ``safetensors`` package's numpy reader."""
    try:
        from ..serialization import load_safetensors  # type: ignore[attr-defined]
    except ImportError:
        try:
            from safetensors.numpy import load_file
        except ImportError:
            raise InitFromError(
                "path", f"{path}: reading safetensors needs the `safetensors` package"
            ) from None
        return dict(load_file(path))
    return dict(load_safetensors(path))


def state_dict_of(obj: Any, path: str) -> dict[str, Any]:
    """The state dict inside what a weights file held: itself, or an autogradcli checkpoint's
    ``model`` (Lightning's ``state_dict``, the tutorials' ``model_state_dict``); InitFromError
    (key ``path``) for anything else."""
    if isinstance(obj, Mapping):
        for key in ("model", "state_dict", "model_state_dict"):
            inner = obj.get(key)
            if isinstance(inner, Mapping) and not _is_array(inner):
                return dict(inner)
        if all(_is_array(v) for v in obj.values()):
            return dict(obj)
    raise InitFromError(
        "path", f"{path} holds {type(obj).__name__}, not a state dict of named tensors"
    )


def _is_array(value: Any) -> bool:
    return hasattr(value, "shape") and hasattr(value, "dtype")


def read_source(path: str, checkpoint: str = "best") -> tuple[dict[str, Any], dict[str, Any]]:
    """(state dict of Tensors, where it came from) for ``path``: a run folder (its
    ``checkpoints/<checkpoint>``), a ``.safetensors`` file, or a file ``autogradcli.load``
    reads (our checkpoints and state dicts; PyTorch ``.pt``/``.pth``/``.bin`` where the reader
    supports them). ``where`` holds the file read, its sha256 and its format."""
    from ..serialization import SerializationError, load
    from .run_dir import RESOLVED_CONFIG, RunDir

    fmt = "file"
    file = path
    if os.path.isdir(path):
        run = RunDir(path)
        if not os.path.isfile(run.file(RESOLVED_CONFIG)):
            raise InitFromError("path", f"{path} is a folder but not a run folder")
        file = run.checkpoint_path(checkpoint)
        if not os.path.isfile(file):
            raise InitFromError("checkpoint", f"{path} has no checkpoints/{checkpoint}")
        fmt = "run"
    elif not os.path.exists(path):
        raise InitFromError("path", f"no such file or run folder: {path}")
    try:
        if fmt != "run" and path.lower().endswith(".safetensors"):
            fmt, obj = "safetensors", _read_safetensors(path)
        else:
            obj = load(file)
    except InitFromError:
        raise
    except (SerializationError, OSError, ValueError) as err:
        raise InitFromError("path", f"cannot read {file}: {err}") from None
    except Exception as err:  # a refusal of the reader (a pickle global it does not allow)
        raise InitFromError("path", f"cannot read {file}: {type(err).__name__}: {err}") from None
    state = {k: _tensor(v) for k, v in state_dict_of(obj, file).items()}
    where = {"source": os.path.abspath(path), "file": os.path.abspath(file), "format": fmt}
    if fmt == "run":
        where["checkpoint"] = checkpoint
    where["sha256"] = _sha256(file)
    return state, where


def _rename(key: str, mapping: Mapping[str, Any]) -> str | None:
    """``key`` with its longest matching prefix of ``mapping`` replaced (None: dropped)."""
    best = max((p for p in mapping if key.startswith(p)), key=len, default=None)
    if best is None:
        return key
    to = mapping[best]
    return None if to is None else to + key[len(best) :]


def _tensor(value: Any) -> Any:
    from ..tensor.tensor import Tensor, wrap

    if isinstance(value, Tensor):
        return value
    import numpy as np

    return wrap(np.ascontiguousarray(value))


def load_weights(
    model: Any, state: Mapping[str, Any], mapping: Mapping[str, Any], strict: bool
) -> dict[str, list[str]]:
    """Copy ``state`` (keys renamed by ``mapping``) into ``model``; the key report:
    ``matched``, ``missing`` (the model's keys the source lacks), ``unexpected`` (the source's
    keys the model lacks, by their renamed names), ``dropped`` (mapped to null). A shape
    mismatch, and with ``strict`` any missing or unexpected key, raise InitFromError."""
    own = model.state_dict()
    renamed: dict[str, Any] = {}
    dropped = []
    for key, value in state.items():
        new = _rename(key, mapping)
        if new is None:
            dropped.append(key)
        else:
            renamed[new] = value
    matched = [k for k in own if k in renamed]
    unexpected = [k for k in renamed if k not in own]
    missing = [k for k in own if k not in renamed]
    shapes = [
        f"{k}: the source has shape {tuple(renamed[k].shape)}, the model {tuple(own[k].shape)}"
        for k in matched
        if tuple(renamed[k].shape) != tuple(own[k].shape)
    ]
    if shapes:
        raise InitFromError(
            "path",
            "size mismatch (rename the key with init_from.map, or map it to null to skip it):"
            + "".join(f"\n    {line}" for line in shapes),
        )
    if strict and (missing or unexpected):
        lines = []
        if missing:
            lines.append(f"missing from the source: {', '.join(missing)}")
        if unexpected:
            lines.append(f"unexpected in the source: {', '.join(unexpected)}")
        raise InitFromError(
            "strict",
            "the source's keys do not match the model's (strict: true; use init_from.map to "
            "rename, or strict: false):" + "".join(f"\n    {line}" for line in lines),
        )
    model.load_state_dict({k: renamed[k] for k in matched}, strict=False)
    return {"matched": matched, "missing": missing, "unexpected": unexpected, "dropped": dropped}


def freeze(model: Any, patterns: list[str]) -> list[str]:
    """Turn ``requires_grad`` off for the parameters whose names match a pattern (fnmatch);
    the names frozen. A pattern matching no parameter raises InitFromError naming it."""
    from ..config.errors import did_you_mean

    names = [n for n, _ in model.named_parameters()]
    frozen = []
    for i, pattern in enumerate(patterns):
        hits = [n for n in names if fnmatch.fnmatchcase(n, pattern)]
        if not hits:
            hint = did_you_mean(pattern, names) or f" (parameters: {', '.join(names[:12])})"
            raise InitFromError(("freeze", i), f"{pattern!r} matches no parameter{hint}")
        frozen += [n for n in hits if n not in frozen]
    params = dict(model.named_parameters())
    for n in frozen:
        params[n].requires_grad_(False)
    return frozen


def apply_init_from(
    model: Any, spec: Mapping[str, Any], path: str, load: bool
) -> tuple[dict | None, list[InitFromError]]:
    """Apply a validated ``init_from`` section to a freshly built ``model``: with ``load``,
    the weights of ``path`` (already absolute); always, ``freeze``. (The report, plain JSON:
    the source, its sha256, the keys matched / missing / unexpected, the frozen names; None
    without ``load`` or after a problem), and the problems found."""
    report, problems = None, []
    if load:
        strict = bool(spec.get("strict", True))
        try:
            state, where = read_source(path, spec.get("checkpoint", "best"))
            keys = load_weights(model, state, spec.get("map") or {}, strict)
            report = {**where, "strict": strict, **keys}
        except InitFromError as err:
            problems.append(err)
    try:
        frozen = freeze(model, list(spec.get("freeze") or []))
    except InitFromError as err:
        problems.append(err)
        return None, problems
    if report is not None:
        total = sum(1 for _ in model.parameters())
        report.update(frozen=frozen, trainable=total - len(frozen))
    return report, problems


def describe_report(report: Mapping[str, Any]) -> str:
    """The console lines of an init_from report."""
    lines = [
        f"init_from {report['source']} (sha256 {report['sha256'][:12]}): "
        f"{len(report['matched'])} keys loaded, {len(report['missing'])} missing, "
        f"{len(report['unexpected'])} unexpected"
        + (f", {len(report['dropped'])} dropped by map" if report.get("dropped") else "")
    ]
    for what in ("missing", "unexpected"):
        if report[what]:
            lines.append(
                f"  {what} (kept {'as built' if what == 'missing' else 'out'}): "
                + ", ".join(report[what])
            )
    if report.get("frozen"):
        lines.append(
            f"  frozen: {len(report['frozen'])} parameters ({', '.join(report['frozen'])}); "
            f"the optimizer trains the other {report['trainable']}"
        )
    return "\n".join(lines)


def summary_entry(report: Mapping[str, Any]) -> dict[str, Any]:
    """What summary.json records of the report (the full lists are in init_from.json)."""
    return {
        "source": report["source"],
        "sha256": report["sha256"],
        "matched": len(report["matched"]),
        "missing": len(report["missing"]),
        "unexpected": len(report["unexpected"]),
        "frozen": len(report.get("frozen", [])),
    }


def report_json(report: Mapping[str, Any]) -> str:
    """The text of ``init_from.json``."""
    return json.dumps(dict(report), indent=2) + "\n"
