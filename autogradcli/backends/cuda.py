"""``torch.backends.cuda``: cuBLAS and attention switches. autogradcli's GPU path is cupy, which
has no TF32 or fused-attention switches, so these are kept and read back but change nothing;
``matmul.allow_tf32`` and ``set_float32_matmul_precision`` are tied as in PyTorch."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Any

__all__ = [
    "enable_flash_sdp",
    "enable_math_sdp",
    "enable_mem_efficient_sdp",
    "flash_sdp_enabled",
    "get_float32_matmul_precision",
    "is_built",
    "math_sdp_enabled",
    "matmul",
    "mem_efficient_sdp_enabled",
    "sdp_kernel",
    "set_float32_matmul_precision",
]

_PRECISIONS = ("highest", "high", "medium")
_state: dict[str, Any] = {
    "precision": "highest",
    "flash": True,
    "mem_efficient": True,
    "math": True,
    "cudnn": True,  # set only through torch.nn.attention.sdpa_kernel here
    "overrideable": True,
}


def set_float32_matmul_precision(precision: str) -> None:
    """Record ``highest`` | ``high`` | ``medium`` (float32 products here are always full
    float32); anything else warns and changes nothing, as in PyTorch."""
    if precision not in _PRECISIONS:
        warnings.warn(
            f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
            "set_float32_matmul_precision call has no effect.",
            UserWarning,
            stacklevel=2,
        )
        return
    _state["precision"] = precision


def get_float32_matmul_precision() -> str:
    """The precision last set (default ``highest``)."""
    return str(_state["precision"])


class _CuBLAS:
    """``matmul``: ``allow_tf32`` (False; the same switch as the matmul precision),
    ``allow_fp16_reduced_precision_reduction`` and ``allow_bf16_reduced_precision_reduction``."""

    _FLAGS = ("allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction")

    def __init__(self) -> None:
        object.__setattr__(self, "_flags", dict.fromkeys(self._FLAGS, True))

    def __getattr__(self, name: str) -> Any:
        if name == "allow_tf32":
            return _state["precision"] != "highest"
        if name in self._FLAGS:
            return self._flags[name]
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "allow_tf32":
            _state["precision"] = "high" if value else "highest"
        elif name in self._FLAGS:
            self._flags[name] = value
        else:
            raise AttributeError(f"Unknown attribute {name}")


matmul = _CuBLAS()


def is_built() -> bool:
    """Whether autogradcli can run on CUDA here (cupy imports and sees a GPU)."""
    from ..backend.cuda import is_available

    return is_available()


def flash_sdp_enabled() -> bool:
    """The flag last set by ``enable_flash_sdp`` (default True)."""
    return bool(_state["flash"])


def mem_efficient_sdp_enabled() -> bool:
    """The flag last set by ``enable_mem_efficient_sdp`` (default True)."""
    return bool(_state["mem_efficient"])


def math_sdp_enabled() -> bool:
    """The flag last set by ``enable_math_sdp`` (default True)."""
    return bool(_state["math"])


def enable_flash_sdp(enabled: bool) -> None:
    """Keep the flag (attention here always runs the math path)."""
    _state["flash"] = bool(enabled)


def enable_mem_efficient_sdp(enabled: bool) -> None:
    """Keep the flag (attention here always runs the math path)."""
    _state["mem_efficient"] = bool(enabled)


def enable_math_sdp(enabled: bool) -> None:
    """Keep the flag (attention here always runs the math path)."""
    _state["math"] = bool(enabled)


@contextlib.contextmanager
def sdp_kernel(
    enable_flash: bool = True,
    enable_math: bool = True,
    enable_mem_efficient: bool = True,
    enable_cudnn: bool = True,
) -> Iterator[None]:
    """PyTorch's deprecated context manager: sets the three flags, restores them on exit."""
    warnings.warn(
        "`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this context manager "
        "will be removed. Please see `torch.nn.attention.sdpa_kernel()` for the new context "
        "manager, with updated signature.",
        FutureWarning,
        stacklevel=3,
    )
    saved = dict(_state)
    _state.update(flash=enable_flash, math=enable_math, mem_efficient=enable_mem_efficient)
    try:
        yield
    finally:
        _state.update(
            flash=saved["flash"], math=saved["math"], mem_efficient=saved["mem_efficient"]
        )
