"""``repr(tensor)`` in PyTorch's layout: ``tensor([1.0000, 2.5000], requires_grad=True)``, and
``set_printoptions`` (precision, threshold, edgeitems, linewidth, profile, sci_mode)."""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

from .. import backend

__all__ = ["format_tensor", "get_printoptions", "set_printoptions"]

_PROFILES: dict[str, dict[str, Any]] = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}
_OPTS: dict[str, Any] = {**_PROFILES["default"], "sci_mode": None}


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set how tensors print, as ``torch.set_printoptions``: a profile (``default``, ``short``,
    ``full``) first, then each option given; ``sci_mode`` is always set (None: automatic)."""
    if profile is not None and profile in _PROFILES:
        _OPTS.update(_PROFILES[profile])
    given = {"precision": precision, "threshold": threshold}
    given.update(edgeitems=edgeitems, linewidth=linewidth)
    _OPTS.update({k: v for k, v in given.items() if v is not None})
    _OPTS["sci_mode"] = sci_mode


def get_printoptions() -> dict[str, Any]:
    """The current print options (a copy)."""
    return dict(_OPTS)


def _threshold() -> int:
    t = _OPTS["threshold"]
    return sys.maxsize if t == math.inf else int(t)


def _float_formatter(values: np.ndarray) -> Any:
    finite = np.abs(values[np.isfinite(values)]).astype(np.float64)
    nonzero = finite[finite != 0]
    int_mode = bool(finite.size) and bool(np.all(finite == np.round(finite)))
    wide = bool(nonzero.size) and (nonzero.max() / nonzero.min() > 1000.0 or nonzero.max() > 1e8)
    sci = wide or (not int_mode and bool(nonzero.size) and nonzero.min() < 1e-4)
    if _OPTS["sci_mode"] is not None:
        sci = bool(_OPTS["sci_mode"])
    if int_mode and not sci:
        width = max(len(f"{v:.0f}") for v in values[np.isfinite(values)]) + 1
        return lambda v: (f"{v:.0f}." if np.isfinite(v) else str(v)).rjust(width)
    precision = _OPTS["precision"]
    fmt = f"{{:.{precision}e}}" if sci else f"{{:.{precision}f}}"
    shown = [fmt.format(v) if np.isfinite(v) else str(v) for v in values.ravel()]
    width = max((len(s) for s in shown), default=1)
    return lambda v: (fmt.format(v) if np.isfinite(v) else str(v)).rjust(width)


def _summarized(arr: np.ndarray) -> np.ndarray:
    """The elements a summarised print shows (PyTorch picks the format from these alone)."""
    edge = _OPTS["edgeitems"]
    if arr.size <= _threshold():
        return arr
    for axis, n in enumerate(arr.shape):
        if n > 2 * edge:
            head = np.take(arr, range(edge), axis=axis)
            tail = np.take(arr, range(n - edge, n), axis=axis)
            arr = np.concatenate([head, tail], axis=axis)
    return arr


def format_array(arr: np.ndarray, prefix: str) -> str:
    if arr.dtype.kind == "V":  # bfloat16: numpy formats only its own float kinds
        arr = arr.astype(np.float32)
    if arr.dtype.kind == "f":
        shown = _summarized(arr).astype(np.float64)
        formatter: dict[str, Any] = {"float_kind": _float_formatter(shown)}
    elif arr.dtype.kind == "b":
        width = 5 if arr.size and not arr.all() else 4
        formatter = {"bool": lambda v: str(bool(v)).rjust(width)}
    else:
        formatter = {}
    if arr.ndim == 0:
        return formatter.get("float_kind", formatter.get("bool", str))(arr.item()).strip()
    text = np.array2string(
        arr,
        separator=", ",
        prefix=prefix,
        formatter=formatter,
        threshold=_threshold(),
        edgeitems=_OPTS["edgeitems"],
        max_line_width=_OPTS["linewidth"],
    )
    return text.replace(", ..., ", ",  ..., ") if arr.size > _threshold() else text


def format_tensor(t: Any, name: str = "tensor") -> str:
    from .dtype import bool_, get_default_dtype, int64

    prefix = f"{name}("
    arr = backend.to_numpy(t._data)
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    if arr.size == 0 and arr.ndim != 1:
        body = "[]"
        suffixes.append(f"size={tuple(arr.shape)}")
    else:
        body = format_array(arr, prefix)
    if t.dtype not in (get_default_dtype(), int64, bool_) or (
        arr.size == 0 and t.dtype is not get_default_dtype()
    ):
        suffixes.append(f"dtype={t.dtype!r}")
    if t._grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(t._grad_fn).__name__}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    return prefix + body + "".join(", " + s for s in suffixes) + ")"
