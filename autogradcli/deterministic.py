"""``torch.use_deterministic_algorithms`` and its queries. autogradcli's CPU ops are deterministic
already, so the flags are kept and read back for programs that set them."""

from __future__ import annotations

__all__ = [
    "are_deterministic_algorithms_enabled",
    "is_deterministic_algorithms_warn_only_enabled",
    "use_deterministic_algorithms",
]

_flags = {"mode": False, "warn_only": False}


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Record the mode (and ``warn_only``)."""
    if not isinstance(mode, bool):
        raise TypeError(
            "use_deterministic_algorithms(): argument 'mode' (position 1) must be bool, "
            f"not {type(mode).__name__}"
        )
    _flags.update(mode=mode, warn_only=bool(warn_only))


def are_deterministic_algorithms_enabled() -> bool:
    """The mode last set (default False)."""
    return _flags["mode"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """``warn_only`` as last set (default False)."""
    return _flags["warn_only"]
