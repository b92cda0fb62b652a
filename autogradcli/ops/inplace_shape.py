"""In-place shape ops (``unsqueeze_``, ``squeeze_``, ``t_``, ``transpose_``): the tensor takes
the view's shape and, when it is in a graph, the view's history."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..tensor.tensor import Tensor
from . import shape

__all__: list[str] = []


def _restride(self: Tensor, view: Callable[[Tensor], Tensor]) -> Tensor:
    if self._requires_grad and self._grad_fn is None:
        from ..autograd import is_grad_enabled

        if is_grad_enabled():
            raise RuntimeError(
                "a leaf Variable that requires grad is being used in an in-place operation."
            )
    result = view(self)
    self._data = result._data
    if result._grad_fn is not None:
        self._grad_fn, self._output_nr = result._grad_fn, result._output_nr
    return self


def unsqueeze_(self: Tensor, dim: int) -> Tensor:
    return _restride(self, lambda t: shape.unsqueeze(t, dim))


def squeeze_(self: Tensor, dim: Any = None) -> Tensor:
    return _restride(self, lambda t: shape.squeeze(t, dim))


def t_(self: Tensor) -> Tensor:
    return _restride(self, shape.t)


def transpose_(self: Tensor, dim0: int, dim1: int) -> Tensor:
    return _restride(self, lambda t: shape.transpose(t, dim0, dim1))


TENSOR_METHODS: dict[str, Any] = {
    "unsqueeze_": unsqueeze_,
    "squeeze_": squeeze_,
    "t_": t_,
    "transpose_": transpose_,
}
