"""``lerp``: linear interpolation ``input + weight * (end - input)`` (PyTorch's two-sided
formula, exact at both ends), and its in-place form."""

from __future__ import annotations

from typing import Any

from ..autograd.function import Function
from ..tensor.tensor import Tensor
from ._util import array_module, scalar_type_name
from .inplace import apply_inplace

__all__ = ["lerp"]

_C_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half"}  # as torch says


class Lerp(Function):
    """input + w * (end - input); gradients (1 - w), w and end - input."""

    _backward_name = "LerpBackward0"

    @staticmethod
    def forward(ctx: Any, input: Tensor, end: Tensor, weight: Any) -> Any:
        ctx.save_for_backward(input, end, weight if isinstance(weight, Tensor) else None)
        ctx.weight = weight
        a, b = input._data, end._data
        w = weight._data if isinstance(weight, Tensor) else weight
        xp = array_module(a)
        low = a + w * (b - a)
        high = b - (b - a) * (1 - w)
        return xp.where(xp.abs(w) < 0.5, low, high).astype(a.dtype, copy=False)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, Any, Any]:
        input, end, weight = ctx.saved_tensors
        w = ctx.weight if weight is None else weight
        ni, ne, nw = ctx.needs_input_grad
        return (
            g * (1 - w) if ni else None,
            g * w if ne else None,
            g * (end - input) if nw else None,
        )


def lerp(input: Tensor, end: Tensor, weight: Any) -> Tensor:
    """``input + weight * (end - input)``; ``weight`` a number or a tensor (broadcast)."""
    dt = input._data.dtype
    if dt.kind not in "fc":
        raise RuntimeError(f"\"lerp_kernel_scalar\" not implemented for '{scalar_type_name(dt)}'")
    for name, other in (("end", end), ("weight", weight)):
        if isinstance(other, Tensor) and other._data.dtype != dt and other._data.ndim:
            theirs = other._data.dtype.name
            raise RuntimeError(
                f"expected dtype {_C_NAMES.get(dt.name, dt.name)} for `{name}` but got dtype "
                f"{_C_NAMES.get(theirs, theirs)}"
            )
    if isinstance(weight, Tensor) and weight._data.ndim == 0 and weight._data.dtype != dt:
        weight = weight.to(input.dtype)  # a 0-d weight acts as a number
    return Lerp.apply(input, end, weight)


def lerp_(input: Tensor, end: Tensor, weight: Any) -> Tensor:
    """In-place :func:`lerp`."""
    return apply_inplace(input, "lerp_", lambda s: lerp(s, end, weight), end, weight)


TENSOR_METHODS: dict[str, Any] = {"lerp": lerp, "lerp_": lerp_}
