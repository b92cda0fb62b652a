"""Older Tensor API that PyTorch still accepts and old programs use: ``x.new(...)``, ``new_zeros``
& co, ``resize_``, ``x.type()``, ``.volatile`` and the deprecated ``add(Number, Tensor)`` overloads
(which warn in PyTorch's words)."""

from __future__ import annotations

import warnings
from numbers import Number
from typing import Any

from ..backend import array_module
from ..tensor import factory
from ..tensor.legacy_types import legacy_array, tensor_type
from ..tensor.tensor import Tensor, wrap
from . import arithmetic as A
from . import fused as F
from . import inplace as P

__all__: list[str] = []


# ----------------------------------------------------------------- construction from a tensor
def new(self: Tensor, *args: Any, device: Any = None) -> Tensor:
    """``x.new(3, 4)`` / ``x.new([..])`` / ``x.new()``: a tensor of ``x``'s dtype and device."""
    return wrap(legacy_array(args, self.dtype, device or self.device, strict=True))


def new_tensor(
    self: Tensor, data: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Tensor:
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() "
            "or sourceTensor.detach().clone().requires_grad_(True), rather than "
            "tensor.new_tensor(sourceTensor).",
            UserWarning,
            stacklevel=2,
        )
        data = data.detach()
    return factory.tensor(
        data,
        dtype=self.dtype if dtype is None else dtype,
        device=self.device if device is None else device,
        requires_grad=requires_grad,
    )


def _sizes(size: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else size


def _new_like(make: Any) -> Any:
    """``x.new_zeros(...)`` & co: ``make`` with the size overloads of ``zeros`` and ``x``'s dtype
    and device unless given."""

    def method(
        self: Tensor,
        *shape: Any,
        size: Any = None,
        dtype: Any = None,
        device: Any = None,
        requires_grad: bool = False,
        layout: Any = None,
        pin_memory: bool = False,
    ) -> Tensor:
        return make(
            *shape,
            size=size,
            dtype=self.dtype if dtype is None else dtype,
            device=self.device if device is None else device,
            requires_grad=requires_grad,
        )

    method.__name__ = f"new_{make.__name__}"
    return method


def new_full(
    self: Tensor,
    size: Any,
    fill_value: Any,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    return factory.full(
        size,
        fill_value,
        dtype=self.dtype if dtype is None else dtype,
        device=self.device if device is None else device,
        requires_grad=requires_grad,
    )


# ----------------------------------------------------------------- resizing in place
def resize_(self: Tensor, *sizes: Any, memory_format: Any = None) -> Tensor:
    """Give ``self`` the shape ``sizes`` in place, keeping the elements it has (in order) and
    leaving any new ones uninitialised (zero here), as PyTorch does."""
    shape = tuple(int(s) for s in _sizes(sizes))
    if self._requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    if any(s < 0 for s in shape):
        raise RuntimeError(
            f"Trying to create tensor with negative dimension {min(shape)}: {list(shape)}"
        )
    data = self._data
    xp = array_module(data)
    n = 1
    for s in shape:
        n *= s
    if n == data.size:
        self._data = (
            data.reshape(shape)
            if data.flags.c_contiguous
            else xp.ascontiguousarray(data).reshape(shape)
        )
    else:
        flat = xp.zeros(n, dtype=data.dtype)
        keep = min(n, data.size)
        flat[:keep] = data.reshape(-1)[:keep]
        self._data = flat.reshape(shape)
    self._bump_version()
    return self


def resize(self: Tensor, *sizes: Any) -> Tensor:
    """The deprecated out-of-place resize: a view of the same elements in another shape (the
    element count must not change), with PyTorch's warning."""
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    shape = tuple(int(s) for s in _sizes(sizes))
    numel = 1
    for s in shape:
        numel *= s
    if numel != self.numel():
        raise RuntimeError(
            f"requested resize to {'x'.join(map(str, shape))} ({numel} elements in total), but "
            f"the given tensor has a size of {'x'.join(map(str, self.shape))} ({self.numel()} "
            "elements). autograd's resize can only change the shape of a given tensor, while "
            "preserving the number of elements. "
        )
    return self.contiguous().view(*shape)


def resize_as_(self: Tensor, other: Tensor, memory_format: Any = None) -> Tensor:
    return resize_(self, *other.shape)


# ----------------------------------------------------------------- removed Variable flags
def _get_volatile(self: Tensor) -> bool:
    warnings.warn(
        "volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=2
    )
    return False


def _set_volatile(self: Tensor, value: Any) -> None:
    warnings.warn(
        "volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
        UserWarning,
        stacklevel=2,
    )


# ----------------------------------------------------------------- deprecated overloads
def _deprecated(name: str, old: str, new: str) -> None:
    warnings.warn(
        f"This overload of {name} is deprecated:\n\t{name}({old})\n"
        f"Consider using one of the following signatures instead:\n\t{name}({new})",
        UserWarning,
        stacklevel=3,
    )


def _is_number(x: Any) -> bool:
    return isinstance(x, Number) and not isinstance(x, Tensor)


def _alpha_overload(name: str, fn: Any) -> Any:
    """``x.add(alpha, other)`` (the old order) -> ``fn(x, other, alpha=alpha)`` with the warning."""

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        if len(args) == 2 and _is_number(args[0]) and isinstance(args[1], Tensor) and not kwargs:
            _deprecated(name, "Number alpha, Tensor other", "Tensor other, *, Number alpha = 1")
            return fn(self, args[1], alpha=args[0])
        return fn(self, *args, **kwargs)

    method.__name__ = name
    return method


def _value_overload(name: str, fn: Any) -> Any:
    """``x.addcmul_(value, t1, t2)`` (the old order) -> ``fn(x, t1, t2, value=value)``."""

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        if len(args) == 3 and _is_number(args[0]) and not kwargs:
            _deprecated(
                name,
                "Number value, Tensor tensor1, Tensor tensor2",
                "Tensor tensor1, Tensor tensor2, *, Number value = 1",
            )
            return fn(self, args[1], args[2], value=args[0])
        return fn(self, *args, **kwargs)

    method.__name__ = name
    return method


TENSOR_METHODS: dict[str, Any] = {
    "new": new,
    "new_tensor": new_tensor,
    "new_zeros": _new_like(factory.zeros),
    "new_ones": _new_like(factory.ones),
    "new_empty": _new_like(factory.empty),
    "new_full": new_full,
    "resize_": resize_,
    "resize": resize,
    "resize_as_": resize_as_,
    "type": tensor_type,
    "volatile": property(_get_volatile, _set_volatile),
    "add": _alpha_overload("add", A.add),
    "sub": _alpha_overload("sub", A.sub),
    "add_": _alpha_overload("add_", P.add_),
    "sub_": _alpha_overload("sub_", P.sub_),
    "addcmul_": _value_overload("addcmul_", P.addcmul_),
    "addcdiv_": _value_overload("addcdiv_", P.addcdiv_),
    "addcmul": _value_overload("addcmul", F.addcmul),
    "addmm": F.addmm,
    "addcdiv": _value_overload("addcdiv", F.addcdiv),
}
