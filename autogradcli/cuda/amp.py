"""``torch.cuda.amp``: PyTorch's deprecated spellings of ``autogradcli.amp``'s ``GradScaler`` and
``autocast``, with PyTorch's FutureWarning."""

from __future__ import annotations

import warnings
from typing import Any

from .. import amp as _amp

__all__ = ["GradScaler", "autocast"]


class GradScaler(_amp.GradScaler):
    """``autogradcli.amp.GradScaler("cuda", ...)`` under its deprecated name."""

    def __init__(
        self,
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        warnings.warn(
            "`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
            "`torch.amp.GradScaler('cuda', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__(
            "cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled
        )


class autocast(_amp.autocast):
    """``autogradcli.amp.autocast("cuda", ...)`` under its deprecated name."""

    def __init__(self, enabled: bool = True, dtype: Any = None, cache_enabled: bool = True) -> None:
        warnings.warn(
            "`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
            "`torch.amp.autocast('cuda', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)
