"""``torch.serialization``'s allow-list of globals for ``weights_only`` loading.

``autogradcli.load`` of a PyTorch-layout file (``torch.save``'s zip or legacy pickle, or a whole
module saved with ``autogradcli.save(model, path)``) unpickles with an allow-list: tensors,
storages, dtypes and plain containers, plus the classes and functions listed here by the user.
Listing a class lets the file create its instances and set their attributes; only list classes
you trust, as in PyTorch.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_SAFE: list[Any] = []


def add_safe_globals(safe_globals: list[Any]) -> None:
    """Allow these classes/functions (or ``(obj, "module.name")`` pairs) in ``weights_only`` loads."""
    _SAFE.extend(safe_globals)


def get_safe_globals() -> list[Any]:
    """The user's allow-list, as ``add_safe_globals`` received it."""
    return list(_SAFE)


def clear_safe_globals() -> None:
    """Empty the user's allow-list."""
    _SAFE.clear()


@contextmanager
def safe_globals(safe_globals: list[Any]) -> Iterator[None]:
    """Allow ``safe_globals`` inside the block, as PyTorch's context manager does."""
    before = list(_SAFE)
    _SAFE.extend(safe_globals)
    try:
        yield
    finally:
        _SAFE[:] = before


def allowed_by_user() -> dict[str, Any]:
    """The user's allow-list by the ``module.qualname`` a pickle names each entry with."""
    out: dict[str, Any] = {}
    for entry in _SAFE:
        if isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[1], str):
            out[entry[1]] = entry[0]
        else:
            module = getattr(entry, "__module__", None)
            name = getattr(entry, "__qualname__", None) or getattr(entry, "__name__", None)
            if isinstance(module, str) and isinstance(name, str):
                out[f"{module}.{name}"] = entry
    return out
