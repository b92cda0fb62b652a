"""Global switches for recording the graph: ``no_grad``, ``enable_grad``, ``set_grad_enabled``."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class _GradState:
    __slots__ = ("anomaly", "bfloat16", "check_nan", "enabled", "trace")

    def __init__(self) -> None:
        self.enabled = True
        # an export's tracer (onnx/trace.py), called for each op run while recording is off
        self.trace: Any = None
        self.anomaly = False  # anomaly mode (anomaly_mode.py): forward traces kept on nodes
        self.check_nan = True  # ... and, with it, backward results checked for nan
        self.bfloat16 = False  # a bfloat16 tensor exists: op results are kept bfloat16


# One process-wide flag (not thread-local): read on every op, so it must be cheap.
STATE = _GradState()


def is_grad_enabled() -> bool:
    return STATE.enabled


class _GradModeContext:
    """Base for the grad-mode context managers; instances also work as decorators."""

    _mode: bool

    def __enter__(self) -> None:
        self._prev = STATE.enabled
        STATE.enabled = self._mode

    def __exit__(self, *exc: object) -> None:
        STATE.enabled = self._prev

    def __call__(self, func: F) -> F:
        mode = self._mode

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            prev = STATE.enabled
            STATE.enabled = mode
            try:
                return func(*args, **kwargs)
            finally:
                STATE.enabled = prev

        return wrapper  # type: ignore[return-value]


class no_grad(_GradModeContext):
    """Disable graph recording: ``with no_grad():`` or ``@no_grad()``."""

    _mode = False


class enable_grad(_GradModeContext):
    """Enable graph recording inside a ``no_grad`` region."""

    _mode = True


class set_grad_enabled(_GradModeContext):
    """Set recording on or off: as a call, a context manager or a decorator."""

    def __init__(self, mode: bool) -> None:
        self._mode = bool(mode)
        self._prev = STATE.enabled
        STATE.enabled = self._mode

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        STATE.enabled = self._prev

    def __call__(self, func: F) -> F:
        STATE.enabled = self._prev
        return super().__call__(func)
