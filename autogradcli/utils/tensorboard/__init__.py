"""``torch.utils.tensorboard``: ``SummaryWriter`` through the ``tensorboardX`` package, imported on
first use (a clear ImportError names the package when it is not installed)."""

from __future__ import annotations

from typing import Any

__all__ = ["SummaryWriter"]


def __getattr__(name: str) -> Any:
    if name == "SummaryWriter":
        from .writer import writer_class

        value = writer_class()
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
