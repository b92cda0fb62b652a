"""``torch``, the test oracle, for test files whose tests do not all need it.

    from lazy_torch import torch

With PyTorch installed this is the torch module itself. Without it, a stand-in that skips the
test that uses it (``pytest.importorskip``), so the tests of the file that never use the oracle
still run instead of the whole file being skipped.
"""

from __future__ import annotations

from typing import Any

import pytest

__all__ = ["torch"]


class _MissingTorch:
    """``torch`` or one of its attributes when PyTorch is not installed: using it (calling,
    indexing, iterating, comparing) skips the current test; naming it (``F = torch.nn.functional``
    at module level) does not, so the file's other tests still run."""

    def __init__(self, path: str = "torch") -> None:
        self._path = path

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _MissingTorch(f"{self._path}.{name}")

    def _skip(self, *args: Any, **kwargs: Any) -> Any:
        pytest.importorskip("torch")  # raises Skipped: torch is absent
        raise AssertionError("unreachable")  # pragma: no cover

    __call__ = __getitem__ = __iter__ = __eq__ = __ne__ = __lt__ = __gt__ = _skip
    __mro_entries__ = _skip  # class Net(torch.nn.Module): ...
    __hash__ = object.__hash__

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"<{self._path}: PyTorch is not installed; tests that use it are skipped>"


try:
    import torch
except ImportError:
    torch = _MissingTorch()  # type: ignore[assignment]
