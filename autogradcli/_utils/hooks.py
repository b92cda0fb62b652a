"""Handles returned by every ``register_*hook`` call, as in PyTorch."""

from __future__ import annotations

import itertools
from typing import Any

_ids = itertools.count()


class RemovableHandle:
    """Removes its hook from the dict it was registered in; usable as a context manager."""

    __slots__ = ("hooks_dict", "id")

    def __init__(self, hooks_dict: dict[int, Any]) -> None:
        self.hooks_dict = hooks_dict
        self.id = next(_ids)

    def remove(self) -> None:
        self.hooks_dict.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def add_hook(hooks_dict: dict[int, Any], hook: Any, prepend: bool = False) -> RemovableHandle:
    """Register ``hook`` in ``hooks_dict`` (insertion-ordered) and return its handle."""
    handle = RemovableHandle(hooks_dict)
    hooks_dict[handle.id] = hook
    if prepend:
        for key in [k for k in hooks_dict if k != handle.id]:
            hooks_dict[key] = hooks_dict.pop(key)
    return handle
