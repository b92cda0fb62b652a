"""``assert_close``: tensors (or Python numbers) equal up to dtype-based tolerances.

Defaults are PyTorch's: float16 rtol 1e-3 / atol 1e-5, float32 1.3e-6 / 1e-5, float64 1e-7 /
1e-7, integers and bools exact. The failure message is PyTorch's, naming the worst element.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..backend import to_numpy
from ..tensor.tensor import Tensor

__all__ = ["assert_close"]

_TOLERANCES = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
}


def _tolerances(*dtypes: str, table: dict | None = None) -> tuple[float, float]:
    rtols, atols = zip(*((table or _TOLERANCES).get(d, (0.0, 0.0)) for d in dtypes))
    return max(rtols), max(atols)


def assert_close(
    actual: Any,
    expected: Any,
    *,
    allow_subclasses: bool = True,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = False,
    check_device: bool = True,
    check_dtype: bool = True,
    check_layout: bool = True,
    check_stride: bool = False,
    msg: Any = None,
) -> None:
    """Raise AssertionError unless ``actual`` and ``expected`` are close (see the module doc)."""
    if (rtol is None) != (atol is None):
        raise ValueError(
            "Both 'rtol' and 'atol' must be either specified or omitted, but got no "
            f"{'rtol' if rtol is None else 'atol'}."
        )
    opts = dict(rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=check_device,
                check_dtype=check_dtype, msg=msg)  # fmt: skip
    _compare(actual, expected, opts)


def _compare(actual: Any, expected: Any, opts: dict[str, Any]) -> None:
    if isinstance(actual, Tensor) and isinstance(expected, Tensor):
        _compare_tensors(actual, expected, opts)
    elif _is_number(actual) and _is_number(expected):
        _compare_scalars(actual, expected, opts)
    elif isinstance(actual, Mapping) and isinstance(expected, Mapping):
        if set(actual) != set(expected):
            _fail(
                opts,
                f"The keys of the mappings do not match: {sorted(actual)} != {sorted(expected)}",
            )
        for key in expected:
            _compare(actual[key], expected[key], opts)
    elif _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            _fail(opts, f"The length of the sequences mismatch: {len(actual)} != {len(expected)}")
        for a, e in zip(actual, expected):
            _compare(a, e, opts)
    else:
        raise TypeError(
            f"No comparison pair was able to handle inputs of type {type(actual)} and "
            f"{type(expected)}."
        )


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float, bool, np.generic)) and not isinstance(x, Tensor)


def _is_sequence(x: Any) -> bool:
    return isinstance(x, Sequence) and not isinstance(x, str)


def _fail(opts: dict[str, Any], default: str) -> None:
    msg = opts["msg"]
    if callable(msg):
        msg = msg(default)
    raise AssertionError(default if msg is None else msg)


def _compare_scalars(actual: Any, expected: Any, opts: dict[str, Any]) -> None:
    if (
        opts["check_dtype"]
        and type(actual) is not type(expected)
        and not (
            isinstance(actual, bool) == isinstance(expected, bool)
            and isinstance(actual, int) == isinstance(expected, int)
        )
    ):
        _fail(
            opts,
            f"The values for attribute 'dtype' do not match: {type(actual)} != {type(expected)}.",
        )
    is_float = isinstance(actual, float) or isinstance(expected, float)
    rtol, atol = (
        (opts["rtol"], opts["atol"])
        if opts["rtol"] is not None
        else (_tolerances("float64") if is_float else (0.0, 0.0))
    )
    a, e = float(actual), float(expected)
    if a == e or (opts["equal_nan"] and math.isnan(a) and math.isnan(e)):
        return
    if math.isfinite(a) and math.isfinite(e) and abs(a - e) <= atol + rtol * abs(e):
        return
    diff = abs(a - e)
    rel = diff / abs(e) if e != 0 else (math.nan if diff == 0 else math.inf)
    close = rtol or atol
    kind = "close" if close else "equal"
    lines = [f"Scalars are not {kind}!", "", f"Expected {expected} but got {actual}."]
    lines.append(f"Absolute difference: {diff}" + (f" (up to {atol} allowed)" if close else ""))
    lines.append(f"Relative difference: {rel}" + (f" (up to {rtol} allowed)" if close else ""))
    _fail(opts, "\n".join(lines))


def _compare_tensors(actual: Tensor, expected: Tensor, opts: dict[str, Any]) -> None:
    if actual.shape != expected.shape:
        _fail(
            opts,
            f"The values for attribute 'shape' do not match: {actual.shape!r} != {expected.shape!r}.",
        )
    if opts["check_device"] and actual.device != expected.device:
        _fail(
            opts,
            f"The values for attribute 'device' do not match: {actual.device} != {expected.device}.",
        )
    if opts["check_dtype"] and actual.dtype != expected.dtype:
        _fail(
            opts,
            f"The values for attribute 'dtype' do not match: {actual.dtype!r} != {expected.dtype!r}.",
        )
    if opts["rtol"] is not None:
        rtol, atol = opts["rtol"], opts["atol"]
    else:
        rtol, atol = _tolerances(actual.dtype.name, expected.dtype.name)
    a, e = to_numpy(actual._data), to_numpy(expected._data)
    if a.size == 1 and a.ndim == 0:
        return _compare_scalars(
            a.item(), e.item(), {**opts, "rtol": rtol, "atol": atol, "check_dtype": False}
        )
    compute = np.result_type(a.dtype, e.dtype)
    if compute.kind in "biu":
        compute = np.dtype(np.float32)
    a, e = a.astype(compute), e.astype(compute)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        ok = a == e
        if compute.kind in "fV":
            finite = np.isfinite(a) & np.isfinite(e)
            ok |= finite & (np.abs(a - e) <= atol + rtol * np.abs(e))
            if opts["equal_nan"]:
                ok |= np.isnan(a) & np.isnan(e)
        if ok.all():
            return
        diff = np.abs(a - e)
        rel = diff / np.abs(e)
    bad = ~ok
    n_bad, n = int(bad.sum()), a.size
    close = rtol or atol
    lines = [
        f"Tensor-likes are not {'close' if close else 'equal'}!",
        "",
        f"Mismatched elements: {n_bad} / {n} ({n_bad / n:.1%})",
    ]
    for label, values, tol in (("absolute", diff, atol), ("relative", rel, rtol)):
        masked = np.where(bad, values, -np.inf if not np.isnan(values[bad]).any() else values)
        idx = _worst(masked)
        value = values[idx].item()
        if (
            actual.dtype.name in ("int64", "int32", "int16", "int8", "uint8")
            and label == "absolute"
        ):
            value = int(value)
        suffix = f" (up to {tol} allowed)" if close else ""
        lines.append(
            f"Greatest {label} difference: {value} at index {tuple(int(i) for i in idx)}{suffix}"
        )
    _fail(opts, "\n".join(lines))


def _worst(values: np.ndarray) -> tuple[int, ...]:
    """The index of the largest value (the first NaN, if any, as PyTorch reports it)."""
    nan = np.isnan(values)
    flat = int(np.argmax(nan)) if nan.any() else int(np.argmax(values))
    return np.unravel_index(flat, values.shape)
