"""The name FSDP gives the module it wraps, and parameter names without it."""

from __future__ import annotations

FSDP_WRAPPED_MODULE = "_fsdp_wrapped_module"
_PREFIX = FSDP_WRAPPED_MODULE + "."


def clean_name(name: str) -> str:
    """``name`` without FSDP's wrapper components (the unwrapped module's dotted name)."""
    return name.replace(_PREFIX, "")


__all__ = ["FSDP_WRAPPED_MODULE", "clean_name"]
