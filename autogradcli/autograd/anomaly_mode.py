"""Anomaly mode, as ``torch.autograd.detect_anomaly``: nodes keep the stack of the forward call
that made them, a failing backward warns with it, and backward results are checked for nan."""

from __future__ import annotations

import os
import warnings
from typing import Any

from .grad_mode import STATE

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def is_anomaly_enabled() -> bool:
    return STATE.anomaly


def is_anomaly_check_nan_enabled() -> bool:
    return STATE.check_nan


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    STATE.anomaly = bool(enabled)
    STATE.check_nan = bool(check_nan)


class detect_anomaly:
    """Context manager that turns anomaly mode on inside it (and warns that it is slow)."""

    def __init__(self, check_nan: bool = True) -> None:
        self.prev = STATE.anomaly
        self.check_nan = check_nan
        self.prev_check_nan = STATE.check_nan
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and should "
            "only be enabled for debugging.",
            stacklevel=2,
        )

    def __enter__(self) -> None:
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *exc: object) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)


class set_detect_anomaly:
    """Turn anomaly mode on or off: as a call, or as a context manager that restores it."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = STATE.anomaly
        self.prev_check_nan = STATE.check_nan
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)


def note_forward(node: Any) -> None:
    """Keep on ``node`` the stack of the forward call recording it, less autogradcli's own
    frames (the recording path is called only while anomaly mode is on)."""
    import traceback  # 0.1 MiB that only anomaly mode needs

    stack = traceback.extract_stack()
    while stack and stack[-1].filename.startswith(_PACKAGE):
        stack.pop()
    node._anomaly_trace = "".join(traceback.format_list(stack)).rstrip()


def check_nan(node: Any, grads: tuple[Any, ...]) -> None:
    """torch's error for a backward result holding nan."""
    for i, g in enumerate(grads):
        arr = getattr(g, "_data", g)
        if arr is not None and (arr != arr).any():  # nan is the one value unequal to itself
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")


def warn_forward_trace(node: Any) -> None:
    """The warning torch gives when a node's backward fails in anomaly mode."""
    trace = getattr(node, "_anomaly_trace", None)
    if trace is None:
        return
    warnings.warn(
        f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n"
        + trace,
        stacklevel=2,
    )
