"""Global switches for recording the graph: ``no_grad``, ``enable_grad``, ``set_grad_enabled``."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def _mode(name: str, doc: str) -> property:
    """A switch of _GradState stored in slot ``_<name>``; setting it updates ``special``."""
    slot = "_" + name

    def get(self: _GradState) -> Any:
        return getattr(self, slot)

    def set_(self: _GradState, value: Any) -> None:
        setattr(self, slot, value)
        self.special = self._anomaly or self._bfloat16 or self._trace is not None

    return property(get, set_, doc=doc)


class _GradState:
    """The switches every op reads. ``enabled`` and ``special`` are read on every call, so they
    are plain slots; ``special`` is True while any of the rarer modes (anomaly, bfloat16, an
    export's trace) is on, kept so by their setters: an op with none of them on tests one flag."""

    __slots__ = ("_anomaly", "_bfloat16", "_trace", "check_nan", "enabled", "special")

    trace = _mode("trace", "An export's tracer (onnx/trace.py), called for each op run unrecorded.")
    anomaly = _mode("anomaly", "Anomaly mode (anomaly_mode.py): forward stacks kept on nodes.")
    bfloat16 = _mode("bfloat16", "A bfloat16 tensor exists: op results are kept bfloat16.")

    def __init__(self) -> None:
        self.enabled = True
        self.special = False
        self._trace: Any = None
        self._anomaly = False
        self._bfloat16 = False
        self.check_nan = True  # with anomaly mode, backward results are checked for nan


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
