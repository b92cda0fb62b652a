"""``Parameter``: a Tensor that a Module registers as one of its learnable parameters."""

from __future__ import annotations

from typing import Any

from ..tensor.legacy_types import typename  # noqa: F401 (nn's modules import it from here)
from ..tensor.printing import format_tensor
from ..tensor.tensor import Tensor

__all__ = ["Parameter"]


class Parameter(Tensor):
    """A Tensor that is a module parameter: assigning it to a Module attribute registers it.

    It shares ``data``'s storage (and version counter) and requires grad unless told otherwise.
    Operations on it give plain Tensors.
    """

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        if data is None:
            from ..tensor.factory import empty

            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(
                f"_make_subclass(): argument 'data' (position 2) must be Tensor, not "
                f"{type(data).__name__}"
            )
        self._data = data._data
        self._vc = data._shared_version_counter()
        self._grad = self._grad_fn = self._base = self._hooks = self._acc = None
        self._output_nr = 0
        self._requires_grad = False
        if requires_grad:
            self.requires_grad = True

    def __repr__(self) -> str:
        return "Parameter containing:\n" + format_tensor(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> Parameter:
        if id(self) in memo:
            return memo[id(self)]
        copy = Tensor.__new__(Tensor)
        Tensor.__init__(copy)
        copy._data = self._data.copy()
        result = type(self)(copy, self._requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol: Any) -> Any:
        return Tensor.__reduce_ex__(self, protocol)
