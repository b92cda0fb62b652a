"""tensorboardX imported without PyTorch: its writer module imports torch whenever torch is
installed (0.8 s and ~300 MiB, for a type hint), which a program on autogradcli never needs."""

from __future__ import annotations

import sys
from types import ModuleType

__all__ = ["import_tensorboardx"]


def import_tensorboardx() -> ModuleType:
    """The ``tensorboardX`` module (ImportError when it is not installed). While it loads,
    ``import torch`` fails as if torch were absent, which tensorboardX handles; a torch the
    process has already imported is left alone, and later imports of torch work as usual."""
    if "tensorboardX" in sys.modules or "torch" in sys.modules:
        import tensorboardX

        return tensorboardX
    sys.modules["torch"] = None  # type: ignore[assignment]  # import torch: ImportError
    try:
        import tensorboardX
    finally:
        if "torch" in sys.modules and sys.modules["torch"] is None:
            del sys.modules["torch"]
    return tensorboardX
