"""Batches as the loop sees them: ``(x, y)`` from a list/tuple or a dict, on the device."""

from __future__ import annotations

from typing import Any

from ..tensor.tensor import Tensor

__all__ = ["model_device", "safe_len", "to_device", "unpack"]


def unpack(batch: Any, device: str | None = None) -> tuple[Any, Any]:
    """``(x, y)`` of a ``[x, y]`` batch or a ``{"x"|"input", "y"|"target"}`` dict, moved to
    ``device`` when given."""
    if isinstance(batch, dict):
        x, y = batch.get("x", batch.get("input")), batch.get("y", batch.get("target"))
    else:
        x, y = batch[0], batch[1]
    if device is not None:
        x, y = to_device(x, device), to_device(y, device)
    return x, y


def to_device(x: Any, device: str) -> Any:
    if isinstance(x, Tensor):
        return x.to(device)
    if isinstance(x, (list, tuple)):
        return type(x)(to_device(v, device) for v in x)
    return x


def safe_len(loader: Any) -> int | None:
    try:
        return len(loader)
    except TypeError:
        return None


def model_device(model: Any) -> str:
    for p in model.parameters():
        return str(p.device)
    return "cpu"
