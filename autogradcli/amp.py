"""``autogradcli.amp``: ``autocast`` and ``GradScaler`` for programs written for mixed precision.

Both are accepted and do nothing to the numbers: ``autocast`` leaves every op in its input dtype
(float32 stays float32; PyTorch would run some CPU ops in bfloat16 and CUDA ops in float16), and
``GradScaler`` scales by 1, so a program with them computes exactly what it computes without them.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any

from .backend.cuda import is_available as _cuda_is_available

__all__ = ["GradScaler", "autocast"]


class autocast:
    """A no-op ``torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None)``:
    context manager and decorator."""

    def __init__(
        self,
        device_type: str = "cuda",
        dtype: Any = None,
        enabled: bool = True,
        cache_enabled: bool | None = None,
    ) -> None:
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device = device_type
        self.fast_dtype = dtype
        self._enabled = enabled

    def __enter__(self) -> autocast:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def __call__(self, func: Any) -> Any:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)

        return wrapper


class GradScaler:
    """A ``torch.amp.GradScaler`` with scale 1: ``scale(loss)`` is ``loss``, ``step`` steps.

    Like PyTorch's, a ``"cuda"`` scaler on a machine without CUDA warns and disables itself."""

    def __init__(
        self,
        device: str = "cuda",
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        self._enabled = enabled
        if device == "cuda" and enabled and not _cuda_is_available():
            warnings.warn(
                "torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                stacklevel=2,
            )
            self._enabled = False

    def scale(self, outputs: Any) -> Any:
        return outputs

    def unscale_(self, optimizer: Any) -> None:
        return None

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale: Any = None) -> None:
        return None

    def get_scale(self) -> float:
        return 1.0

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        return None
