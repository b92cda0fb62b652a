"""``torch._dynamo``: the compiler's switches that programs touch; nothing is compiled here, so
``reset`` has nothing to clear and ``config`` values are kept and read back."""

from __future__ import annotations

import types

from .compiler import disable, is_compiling, reset

__all__ = ["config", "disable", "is_compiling", "reset"]

config = types.SimpleNamespace(
    cache_size_limit=8,
    accumulated_cache_size_limit=256,
    suppress_errors=False,
    verbose=False,
    optimize_ddp=True,
    capture_scalar_outputs=False,
)
