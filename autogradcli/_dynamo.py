"""``torch._dynamo``: the compiler's cache and settings, which programs reset or tune around
``torch.compile``. autogradcli compiles nothing, so ``reset`` has nothing to clear and the
settings are kept and read back."""

from __future__ import annotations

from types import SimpleNamespace

config = SimpleNamespace(
    suppress_errors=False,
    cache_size_limit=8,
    accumulated_cache_size_limit=256,
    verbose=False,
    optimize_ddp=True,
)


def reset() -> None:
    """Clear compiled code (there is none)."""
