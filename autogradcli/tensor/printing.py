"""``repr(tensor)`` in PyTorch's layout: ``tensor([1.0000, 2.5000], requires_grad=True)``."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import backend

_PRECISION = 4
_THRESHOLD = 1000
_EDGEITEMS = 3
_LINEWIDTH = 80


def _float_formatter(values: np.ndarray) -> Any:
    # as PyTorch, the column width comes from the nonzero finite values (-0. is not counted)
    shown_vals = values[np.isfinite(values) & (values != 0)]
    finite = np.abs(values[np.isfinite(values)]).astype(np.float64)
    nonzero = finite[finite != 0]
    if (
        finite.size
        and np.all(finite == np.round(finite))
        and (not nonzero.size or (nonzero.max() < 1e8 and nonzero.max() / nonzero.min() <= 1000.0))
    ):
        width = max((len(f"{v:.0f}") for v in shown_vals), default=0) + 1
        return lambda v: (f"{v:.0f}." if np.isfinite(v) else str(v)).rjust(width)
    sci = nonzero.size and (
        nonzero.max() / nonzero.min() > 1000.0 or nonzero.max() > 1e8 or nonzero.min() < 1e-4
    )
    fmt = f"{{:.{_PRECISION}e}}" if sci else f"{{:.{_PRECISION}f}}"
    width = max((len(fmt.format(v)) for v in shown_vals.ravel()), default=1)
    return lambda v: (fmt.format(v) if np.isfinite(v) else str(v)).rjust(width)


def _complex_formatter(values: np.ndarray) -> Any:
    """PyTorch's complex layout: real and imaginary parts each formatted as a float tensor of
    their own, joined as ``re+imj``."""
    real = _float_formatter(values.real.astype(np.float64))
    imag = _float_formatter(values.imag.astype(np.float64))

    def fmt(v: complex) -> str:
        im = imag(v.imag).lstrip()
        return real(v.real) + ("" if im[0] in "+-" else "+") + im + "j"

    return fmt, len(real(0.0)) + len(imag(0.0)) + 1


def _complex_rows(arr: np.ndarray, indent: int, summarize: bool, fmt: Any, width: int) -> str:
    """PyTorch's nested layout: as many elements a line as fit (an elided "..." takes a slot)."""
    edge = summarize and arr.shape[0] > 2 * _EDGEITEMS
    rows = (
        list(range(_EDGEITEMS)) + [None] + list(range(len(arr) - _EDGEITEMS, len(arr)))
        if edge
        else list(range(len(arr)))
    )
    if arr.ndim == 1:
        per_line = max(1, (_LINEWIDTH - indent) // (width + 2))
        items = [" ..." if i is None else fmt(complex(arr[i])) for i in rows]
        lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    parts = [
        "..." if i is None else _complex_rows(arr[i], indent + 1, summarize, fmt, width)
        for i in rows
    ]
    return "[" + ("," + "\n" * (arr.ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def _summarized(arr: np.ndarray) -> np.ndarray:
    """The elements a summarised print shows (PyTorch picks the format from these alone)."""
    if arr.size <= _THRESHOLD:
        return arr
    for axis, n in enumerate(arr.shape):
        if n > 2 * _EDGEITEMS:
            head = np.take(arr, range(_EDGEITEMS), axis=axis)
            tail = np.take(arr, range(n - _EDGEITEMS, n), axis=axis)
            arr = np.concatenate([head, tail], axis=axis)
    return arr


def format_array(arr: np.ndarray, prefix: str) -> str:
    if arr.dtype.kind == "V":  # bfloat16: numpy formats only its own float kinds
        arr = arr.astype(np.float32)
    if arr.dtype.kind == "f":
        shown = _summarized(arr).astype(np.float64)
        formatter: dict[str, Any] = {"float_kind": _float_formatter(shown)}
    elif arr.dtype.kind == "c":
        fmt, width = _complex_formatter(_summarized(arr))
        if arr.ndim == 0:
            return fmt(arr.item()).strip()
        return _complex_rows(arr, len(prefix), arr.size > _THRESHOLD, fmt, width)
    elif arr.dtype.kind == "b":
        width = 5 if arr.size and not arr.all() else 4
        formatter = {"bool": lambda v: str(bool(v)).rjust(width)}
    else:
        formatter = {}
    if arr.ndim == 0:
        scalar = formatter.get("float_kind", formatter.get("complex_kind", formatter.get("bool")))
        return (scalar or str)(arr.item()).strip()
    text = np.array2string(
        arr,
        separator=", ",
        prefix=prefix,
        formatter=formatter,
        threshold=_THRESHOLD,
        edgeitems=_EDGEITEMS,
        max_line_width=_LINEWIDTH,
    )
    return text.replace(", ..., ", ",  ..., ") if arr.size > _THRESHOLD else text


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
    return prefix + body + "".join(", " + s for s in suffixes) + ")"
