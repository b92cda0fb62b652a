"""``torch.backends.cudnn``: the flags programs set (``benchmark``, ``deterministic``,
``enabled``). autogradcli runs no cuDNN, so they are kept and read back but change nothing;
``is_available()`` says so."""

from __future__ import annotations

benchmark: bool = False
deterministic: bool = False
enabled: bool = True
allow_tf32: bool = True


def is_available() -> bool:
    """False: autogradcli's GPU path is cupy, without cuDNN."""
    return False


def version() -> None:
    """None, as PyTorch reports without cuDNN."""
    return None
