"""``real``/``imag``/``is_complex``/``is_floating_point`` for the real dtypes autogradcli has (no
complex dtypes yet): ``real`` is the tensor itself and ``imag`` raises, as in PyTorch."""

from __future__ import annotations

from typing import Any

from ..tensor.tensor import Tensor

__all__ = ["imag", "is_complex", "is_floating_point", "real"]


def real(input: Tensor) -> Tensor:
    """The real part: the tensor itself for real dtypes."""
    return input


def imag(input: Tensor) -> Tensor:
    """The imaginary part; real tensors have none."""
    raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")


def is_complex(input: Tensor) -> bool:
    """Whether ``input`` has a complex dtype."""
    return input._data.dtype.kind == "c"


def is_floating_point(input: Tensor) -> bool:
    """Whether ``input`` has a floating-point dtype."""
    return input.is_floating_point()


TENSOR_METHODS: dict[str, Any] = {"is_complex": is_complex}
