"""``inference_mode``: PyTorch's faster ``no_grad`` for evaluation; here it is ``no_grad``
(our engine has no extra per-tensor bookkeeping to skip), usable the same three ways."""

from __future__ import annotations

import functools
from typing import Any

from .grad_mode import STATE

__all__ = ["inference_mode", "is_inference_mode_enabled"]

_ACTIVE = [False]


class inference_mode:
    """``with inference_mode():``, ``@inference_mode()``, ``@inference_mode`` or
    ``inference_mode(False)`` (which changes nothing)."""

    def __new__(cls, mode: Any = True) -> Any:
        if callable(mode):  # used as a bare decorator: @inference_mode
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode: bool = True) -> None:
        self.mode = bool(mode)

    def __enter__(self) -> None:
        self._prev = (STATE.enabled, _ACTIVE[0])
        if self.mode:
            STATE.enabled = False
            _ACTIVE[0] = True

    def __exit__(self, *exc: object) -> None:
        STATE.enabled, _ACTIVE[0] = self._prev

    def __call__(self, func: Any) -> Any:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with inference_mode(self.mode):
                return func(*args, **kwargs)

        return wrapper

    def clone(self) -> inference_mode:
        return inference_mode(self.mode)


def is_inference_mode_enabled() -> bool:
    return _ACTIVE[0]
