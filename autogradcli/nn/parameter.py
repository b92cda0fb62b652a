"""``Parameter``: a Tensor that a Module registers as one of its learnable parameters."""

from __future__ import annotations

from typing import Any

from ..tensor.legacy_types import typename  # noqa: F401 (nn's modules import it from here)
from ..tensor.printing import format_tensor
from ..tensor.tensor import Tensor

__all__ = ["Parameter", "UninitializedBuffer", "UninitializedParameter"]


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


_SHAPE_ERROR = (
    "Can't access the shape of an uninitialized parameter or buffer. This error usually happens "
    "in `load_state_dict` when trying to load an uninitialized parameter into an initialized one. "
    "Call `forward` to initialize the parameters before accessing their attributes."
)


class UninitializedTensorMixin:
    """A placeholder of a lazy module: no shape until ``materialize(shape)`` gives it storage
    in place (the same object, so optimizers holding it see the real tensor)."""

    __slots__ = ()
    cls_to_become: type = Tensor

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Give the tensor storage of ``shape`` (uninitialised values) and its final class."""
        from ..tensor.factory import empty

        placeholder = Tensor.__new__(Tensor)
        placeholder._data = self._data
        device = placeholder.device if device is None else device
        dtype = placeholder.dtype if dtype is None else dtype
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        self._data = empty(shape, device=device, dtype=dtype)._data
        self.__class__ = self.cls_to_become

    @property
    def shape(self) -> Any:
        raise RuntimeError(_SHAPE_ERROR)

    def size(self, dim: int | None = None) -> Any:
        raise RuntimeError(_SHAPE_ERROR)

    def numel(self) -> int:
        raise RuntimeError(_SHAPE_ERROR)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A :class:`Parameter` whose shape a lazy module fills in on its first forward."""

    __slots__ = ()
    cls_to_become = Parameter

    def __init__(self, requires_grad: bool = True, device: Any = None, dtype: Any = None) -> None:
        from ..tensor.factory import empty

        super().__init__(empty(0, device=device, dtype=dtype), requires_grad)

    def __deepcopy__(self, memo: dict[int, Any]) -> UninitializedParameter:
        if id(self) not in memo:
            memo[id(self)] = type(self)(self._requires_grad, self.device, self.dtype)
        return memo[id(self)]


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape a lazy module fills in on its first forward."""

    __slots__ = ()
    cls_to_become = Tensor

    def __init__(self, requires_grad: bool = False, device: Any = None, dtype: Any = None) -> None:
        from ..tensor.factory import empty

        Tensor.__init__(self)
        self._data = empty(0, device=device, dtype=dtype)._data
        self._requires_grad = requires_grad

    def __deepcopy__(self, memo: dict[int, Any]) -> UninitializedBuffer:
        if id(self) not in memo:
            memo[id(self)] = type(self)(self._requires_grad, self.device, self.dtype)
        return memo[id(self)]


def is_lazy(param: Any) -> bool:
    """Whether ``param`` is an uninitialized parameter or buffer of a lazy module."""
    return isinstance(param, UninitializedTensorMixin)
