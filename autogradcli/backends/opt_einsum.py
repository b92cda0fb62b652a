"""``torch.backends.opt_einsum``: einsum's contraction-order optimiser, which autogradcli does not
use; the flags read as PyTorch's do when the ``opt_einsum`` package is absent."""

from __future__ import annotations

from typing import Any

__all__ = ["enabled", "get_opt_einsum", "is_available", "strategy"]

enabled: bool = False
strategy: Any = None


def is_available() -> bool:
    """False: einsum here contracts in the order written."""
    return False


def get_opt_einsum() -> Any:
    """None: no opt_einsum module is used."""
    return None
