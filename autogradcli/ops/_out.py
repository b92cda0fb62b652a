"""``out=``: write an op's result into a given tensor (resized to fit), as PyTorch does."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from ..autograd.grad_mode import STATE
from ..tensor.tensor import Tensor


def write_out(name: str, compute: Callable[[], Tensor], out: Tensor, *inputs: Any) -> Tensor:
    """Copy ``compute()`` into ``out``; refused, as in PyTorch, when autograd would need the op."""
    if STATE.enabled and any(isinstance(t, Tensor) and t._requires_grad for t in (out, *inputs)):
        raise RuntimeError(
            f"{name}(): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad."
        )
    result = compute()
    if tuple(out.shape) != tuple(result.shape):
        if out.numel() != 0:
            warnings.warn(
                "An output with one or more elements was resized since it had shape "
                f"{list(out.shape)}, which does not match the required output shape "
                f"{list(result.shape)}. This behavior is deprecated, and in a future PyTorch "
                "release outputs will not be resized unless they have zero elements. You can "
                "explicitly reuse an out tensor t by resizing it, inplace, to zero elements with "
                "t.resize_(0).",
                UserWarning,
                stacklevel=3,
            )
        out.resize_(*result.shape)
    out.copy_(result)
    return out
