"""Differentiable copies between dtypes and devices: ``to``, ``clone``, ``contiguous``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import backend
from ..autograd.function import Function
from ..autograd.gradient_ops import ToCopy
from ..tensor import dtype as dtypes
from ..tensor.tensor import Tensor


class Clone(Function):
    _backward_name = "CloneBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Any:
        return x._data.copy()

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        return g


def _parse_to_args(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any]:
    dtype, device = kwargs.get("dtype"), kwargs.get("device")
    for a in args:
        if isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, dtypes.DType):
            dtype = a
        elif isinstance(a, (str, backend.Device)):
            if isinstance(a, str) and a.removeprefix("torch.").removeprefix("autogradcli.") in (
                d.name for d in dtypes.ALL_DTYPES
            ):
                dtype = dtypes.to_dtype(a)
            else:
                device = backend.as_device(a)
        elif a is not None:
            dtype = dtypes.to_dtype(a)
    return dtype, device


def to(x: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """``x.to(dtype)``, ``x.to(device)``, ``x.to(other)``: x itself when nothing changes."""
    dtype, device = _parse_to_args(args, kwargs)
    np_dtype = dtypes.to_dtype(dtype).np if dtype is not None else None
    same_dtype = np_dtype is None or np_dtype == x._data.dtype
    same_device = (
        device is None
        or backend.as_device(device) == x.device
        or (
            backend.as_device(device).type == x.device.type == "cuda"
            and backend.as_device(device).index is None
        )
    )
    if same_dtype and same_device and not kwargs.get("copy", False):
        return x
    return ToCopy.apply(x, np_dtype, None if same_device else backend.as_device(device))


def clone(x: Tensor, memory_format: Any = None) -> Tensor:
    return Clone.apply(x)


def contiguous(x: Tensor, memory_format: Any = None) -> Tensor:
    if x._data.flags.c_contiguous:
        return x
    return Clone.apply(x)


def cpu(x: Tensor) -> Tensor:
    return to(x, "cpu")


def cuda(x: Tensor, device: Any = None) -> Tensor:
    return to(x, backend.Device("cuda", device) if isinstance(device, int) else (device or "cuda"))


def _cast(dtype: Any, name: str) -> Callable[[Tensor], Tensor]:
    """The Tensor method ``name``: ``to(x, dtype)``."""

    def cast(x: Tensor) -> Tensor:
        return to(x, dtype)

    cast.__name__ = cast.__qualname__ = name
    return cast


float_ = _cast(dtypes.float32, "float_")
double = _cast(dtypes.float64, "double")
long = _cast(dtypes.int64, "long")
int_ = _cast(dtypes.int32, "int_")
bool_ = _cast(dtypes.bool_, "bool_")
half = _cast(dtypes.float16, "half")
bfloat16 = _cast(dtypes.bfloat16, "bfloat16")
byte = _cast(dtypes.uint8, "byte")
char = _cast(dtypes.int8, "char")
short = _cast(dtypes.int16, "short")


def type_as(x: Tensor, other: Tensor) -> Tensor:
    return to(x, other.dtype)


TENSOR_METHODS: dict[str, Any] = {
    "to": to,
    "clone": clone,
    "contiguous": contiguous,
    "cpu": cpu,
    "cuda": cuda,
    "float": float_,
    "double": double,
    "long": long,
    "int": int_,
    "bool": bool_,
    "half": half,
    "bfloat16": bfloat16,
    "byte": byte,
    "char": char,
    "short": short,
    "type_as": type_as,
}
