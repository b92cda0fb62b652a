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


class _Formatter:
    """PyTorch's element formatter: one width and style (integer-valued, fixed or scientific)
    for every element printed, chosen from the (summarised) values."""

    def __init__(self, values: np.ndarray) -> None:
        self.floating = values.dtype.kind == "f"
        self.int_mode, self.sci_mode, self.width = True, False, 1
        flat = values.ravel()
        if not self.floating:
            self.width = max((len(self._plain(v)) for v in flat.tolist()), default=1)
            return
        shown = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
        if not shown.size:  # no finite non-zero value: integer style, width 1
            return
        precision = _OPTS["precision"]
        low, high = float(np.abs(shown).min()), float(np.abs(shown).max())
        self.int_mode = bool(np.all(shown == np.ceil(shown)))
        self.sci_mode = (
            high / low > 1000.0 or high > 1.0e8 or low < 1.0e-4
            if _OPTS["sci_mode"] is None
            else bool(_OPTS["sci_mode"])
        )
        if self.sci_mode:
            fmt = f"{{:.{precision}e}}"
        elif self.int_mode:
            fmt = "{:.0f}."
        else:
            fmt = f"{{:.{precision}f}}"
        self.width = max(len(fmt.format(v)) for v in shown.tolist())

    @staticmethod
    def _plain(v: Any) -> str:
        return str(bool(v)) if isinstance(v, (bool, np.bool_)) else str(v)

    def format(self, v: Any) -> str:
        """One element, right-aligned to the common width."""
        precision = _OPTS["precision"]
        if not self.floating:
            text = self._plain(v)
        elif self.sci_mode:
            text = f"{{:{self.width}.{precision}e}}".format(v)
        elif self.int_mode:
            text = f"{v:.0f}" + ("" if math.isinf(v) or math.isnan(v) else ".")
        else:
            text = f"{{:.{precision}f}}".format(v)
        return text.rjust(self.width)


class _ComplexFormatter:
    """PyTorch's complex layout: the real and imaginary parts each formatted as a float tensor of
    their own, joined as ``re+imj``; an element is as wide as both formats and the ``j``."""

    def __init__(self, values: np.ndarray) -> None:
        self.real = _Formatter(values.real.astype(np.float64))
        self.imag = _Formatter(values.imag.astype(np.float64))
        self.width = self.real.width + self.imag.width + 1

    def format(self, v: complex) -> str:
        im = self.imag.format(v.imag).lstrip()
        return self.real.format(v.real) + ("" if im[0] in "+-" else "+") + im + "j"


def _summarized(arr: np.ndarray) -> np.ndarray:
    """The elements a summarised print shows (PyTorch picks the format from these alone)."""
    edge = _OPTS["edgeitems"]
    for axis, n in enumerate(arr.shape):
        if n > 2 * edge:
            head = np.take(arr, range(edge), axis=axis)
            tail = np.take(arr, range(n - edge, n), axis=axis)
            arr = np.concatenate([head, tail], axis=axis)
    return arr


def _vector(arr: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    edge = _OPTS["edgeitems"]
    per_line = max(1, math.floor((_OPTS["linewidth"] - indent) / (fmt.width + 2)))
    if summarize and arr.shape[0] > 2 * edge:
        head, tail = arr[:edge].tolist(), arr[arr.shape[0] - edge :].tolist()
        items = [fmt.format(v) for v in head] + [" ..."] + [fmt.format(v) for v in tail]
    else:
        items = [fmt.format(v) for v in arr.tolist()]
    lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(arr: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    if arr.ndim == 1:
        return _vector(arr, indent, summarize, fmt)
    edge, n = _OPTS["edgeitems"], arr.shape[0]
    if summarize and n > 2 * edge:
        rows = [*range(edge), None, *range(n - edge, n)]
    else:
        rows = list(range(n))
    parts = ["..." if i is None else _nested(arr[i], indent + 1, summarize, fmt) for i in rows]
    return "[" + ("," + "\n" * (arr.ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def format_array(arr: np.ndarray, prefix: str) -> str:
    """The body of a tensor's repr in PyTorch's layout (``prefix`` sets the indent)."""
    if arr.dtype.kind not in "biufc" or arr.dtype == np.float16:  # as PyTorch: via float32
        arr = arr.astype(np.float32)
    summarize = arr.size > _threshold()
    shown = _summarized(arr) if summarize else arr
    fmt = _ComplexFormatter(shown) if arr.dtype.kind == "c" else _Formatter(shown)
    if arr.ndim == 0:
        return fmt.format(arr.item()).strip()
    return _nested(arr, len(prefix), summarize, fmt)


def format_tensor(t: Any, name: str = "tensor") -> str:
    from .dtype import bool_, default_complex, get_default_dtype, int64

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
    if t.dtype not in (get_default_dtype(), default_complex(), int64, bool_) or (
        arr.size == 0 and t.dtype is not get_default_dtype()
    ):
        suffixes.append(f"dtype={t.dtype!r}")
    if t._grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(t._grad_fn).__name__}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    return _with_suffixes(prefix + body, suffixes, len(prefix))


def _with_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    """``text, suffix, ...)``: a suffix that would pass the line width goes on its own line."""
    parts = [text]
    last = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last + len(suffix) + 2 > _OPTS["linewidth"]:
            parts.append(",\n" + " " * indent + suffix)
            last = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last += len(suffix) + 2
    return "".join(parts) + ")"
