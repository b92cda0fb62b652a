"""``torch._foreach_*``: one op over a list of tensors, as Python loops over the ops.

The second operand may be one scalar, a list of scalars, a 0-d tensor or a list of tensors (as
PyTorch's overloads take them); out-of-place forms return a tuple, in-place forms (``_`` suffix)
update the tensors and return them as a list. Each generated name is listed in ``__all__``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..tensor.tensor import Tensor
from .arithmetic import maximum, minimum, pow
from .clamp_where import clamp
from .inplace import apply_inplace
from .lazy_methods import FOREACH_UNARY

__all__: list[str] = []


def _tensor_list(tensors: Any) -> list[Tensor]:
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("Tensor list must have at least one tensor.")
    return tensors


def _per_tensor(n: int, other: Any) -> list[Any]:
    """``other`` as one operand per tensor: a list taken as it is, a scalar or 0-d tensor for all."""
    if isinstance(other, (list, tuple)):
        if len(other) != n:
            if other and isinstance(other[0], Tensor):
                raise RuntimeError(
                    f"Tensor lists must have the same number of tensors, got {n} and {len(other)}"
                )
            raise RuntimeError("Tensor list must have same number of elements as scalar list.")
        return list(other)
    if isinstance(other, Tensor) and other._data.ndim != 0:
        raise RuntimeError(
            f"scalar tensor expected to be 0 dim but it has {other._data.ndim} dimensions and "
            f"{other._data.size} elements."
        )
    return [other] * n


def _in_place(t: Tensor, name: str, op: Callable[..., Tensor], *args: Any) -> None:
    """``t.<name>(*args)`` where Tensor has that method, else ``op`` recorded in place."""
    method = getattr(Tensor, name, None)
    if method is not None:
        method(t, *args)
    else:
        apply_inplace(t, name, lambda s: op(s, *args), *args)


def _define(name: str, fn: Callable[..., Any]) -> None:
    fn.__name__ = fn.__qualname__ = f"_foreach_{name}"
    fn.__doc__ = f"``{name}`` of each tensor of a list (``torch._foreach_{name}``)."
    globals()[fn.__name__] = fn
    __all__.append(fn.__name__)


def _unary(name: str, op: Callable[[Tensor], Tensor]) -> None:
    def out_of_place(self: Sequence[Tensor]) -> tuple[Tensor, ...]:
        return tuple(op(t) for t in _tensor_list(self))

    def in_place(self: Sequence[Tensor]) -> list[Tensor]:
        tensors = _tensor_list(self)
        for t in tensors:
            _in_place(t, f"{name}_", op)
        return tensors

    _define(name, out_of_place)
    _define(f"{name}_", in_place)


def _binary(name: str, op: Callable[..., Tensor], alpha: bool = False) -> None:
    def operands(self: Sequence[Tensor], other: Any, kwargs: dict) -> tuple[list, list, dict]:
        tensors = _tensor_list(self)
        others = _per_tensor(len(tensors), other)
        if kwargs and (
            set(kwargs) != {"alpha"} or not alpha or not isinstance(other, (list, tuple))
        ):
            raise TypeError(
                f"_foreach_{name}() got an unexpected keyword argument '{next(iter(kwargs))}'"
            )
        return tensors, others, kwargs

    def out_of_place(self: Sequence[Tensor], other: Any, **kwargs: Any) -> tuple[Tensor, ...]:
        tensors, others, kwargs = operands(self, other, kwargs)
        return tuple(op(t, o, **kwargs) for t, o in zip(tensors, others))

    def in_place(self: Sequence[Tensor], other: Any, **kwargs: Any) -> list[Tensor]:
        tensors, others, kwargs = operands(self, other, kwargs)
        for t, o in zip(tensors, others):
            if kwargs:
                getattr(Tensor, f"{name}_")(t, o, **kwargs)
            else:
                _in_place(t, f"{name}_", op, o)
        return tensors

    _define(name, out_of_place)
    _define(f"{name}_", in_place)


def _ternary(name: str, op: Callable[..., Tensor]) -> None:
    """``self[i] + value[i] * op(tensor1[i], tensor2[i])`` (addcmul, addcdiv)."""

    def operands(self: Any, tensor1: Any, tensor2: Any, value: Any) -> zip:
        tensors = _tensor_list(self)
        n = len(tensors)
        if isinstance(value, Tensor) and value._data.ndim == 1:
            value = value.tolist()
        firsts, seconds = _per_tensor(n, list(tensor1)), _per_tensor(n, list(tensor2))
        return zip(tensors, firsts, seconds, _per_tensor(n, value))

    def out_of_place(self: Any, tensor1: Any, tensor2: Any, value: Any = 1) -> tuple:
        return tuple(t + op(a, b) * v for t, a, b, v in operands(self, tensor1, tensor2, value))

    def in_place(self: Any, tensor1: Any, tensor2: Any, value: Any = 1) -> list[Tensor]:
        for t, a, b, v in operands(self, tensor1, tensor2, value):
            getattr(Tensor, f"{name}_")(t, a, b, v)
        return list(self)

    _define(name, out_of_place)
    _define(f"{name}_", in_place)


def _max(x: Tensor, o: Any) -> Tensor:
    return maximum(x, o) if isinstance(o, Tensor) else clamp(x, min=o)


def _min(x: Tensor, o: Any) -> Tensor:
    return minimum(x, o) if isinstance(o, Tensor) else clamp(x, max=o)


def _lerp(x: Tensor, end: Tensor, weight: Any) -> Tensor:
    from .lerp_op import lerp

    return lerp(x, end, weight)


for _name in FOREACH_UNARY:
    _unary(_name, lambda x, name=_name: getattr(x, name)())
_binary("add", lambda x, o, alpha=1: x + (o if alpha == 1 else o * alpha), alpha=True)
_binary("sub", lambda x, o, alpha=1: x - (o if alpha == 1 else o * alpha), alpha=True)
_binary("mul", lambda x, o: x * o)
_binary("div", lambda x, o: x / o)
_binary("pow", pow)
_binary("maximum", _max)
_binary("minimum", _min)
_binary("clamp_min", _max)
_binary("clamp_max", _min)
_ternary("addcmul", lambda a, b: a * b)
_ternary("addcdiv", lambda a, b: a / b)


def _foreach_lerp(self: Sequence[Tensor], tensors1: Any, weight: Any) -> tuple[Tensor, ...]:
    """``lerp`` of each pair of tensors by one weight (a scalar, or a list of weights)."""
    tensors = _tensor_list(self)
    ends = _per_tensor(len(tensors), list(tensors1))
    weights = _per_tensor(len(tensors), weight)
    return tuple(_lerp(t, e, w) for t, e, w in zip(tensors, ends, weights))


def _foreach_lerp_(self: Sequence[Tensor], tensors1: Any, weight: Any) -> list[Tensor]:
    """In-place :func:`_foreach_lerp`."""
    tensors = _tensor_list(self)
    ends = _per_tensor(len(tensors), list(tensors1))
    for t, e, w in zip(tensors, ends, _per_tensor(len(tensors), weight)):
        _in_place(t, "lerp_", _lerp, e, w)
    return tensors


def _foreach_zero_(self: Sequence[Tensor]) -> list[Tensor]:
    """Set every tensor of the list to zero."""
    tensors = _tensor_list(self)
    for t in tensors:
        t.zero_()
    return tensors


def _foreach_copy_(self: Sequence[Tensor], src: Sequence[Tensor], non_blocking: bool = False):
    """Copy each ``src[i]`` into ``self[i]``."""
    tensors = _tensor_list(self)
    for t, s in zip(tensors, _per_tensor(len(tensors), list(src))):
        t.copy_(s)
    return tensors


def _foreach_norm(self: Sequence[Tensor], ord: Any = 2, dtype: Any = None) -> tuple[Tensor, ...]:
    """The vector ``ord``-norm of each tensor, as 0-d tensors."""
    from ..linalg import vector_norm

    return tuple(vector_norm(t, ord, dtype=dtype) for t in _tensor_list(self))


__all__ += ["_foreach_copy_", "_foreach_lerp", "_foreach_lerp_", "_foreach_norm", "_foreach_zero_"]
__all__.sort()

TENSOR_METHODS: dict[str, Any] = {}
