"""PyTorch-style dtype objects over numpy dtypes, and PyTorch's type-promotion rules."""

from __future__ import annotations

from typing import Any

import numpy as np

# numpy's kinds of floating-point dtypes: "f", and "V" for ml_dtypes' bfloat16 (numpy has no
# kind of its own for it; tensors never hold numpy's structured "V" dtypes)
FLOAT_KINDS = "fV"


class DType:
    """A tensor element type; ``repr`` matches PyTorch's with our package name."""

    __slots__ = ("is_complex", "is_floating_point", "is_signed", "itemsize", "name", "np")

    def __init__(self, name: str, np_dtype: Any) -> None:
        self.name = name
        self.np = np.dtype(np_dtype)
        self.itemsize = self.np.itemsize
        self.is_floating_point = self.np.kind in FLOAT_KINDS
        self.is_complex = self.np.kind == "c"
        self.is_signed = self.np.kind in "fciV"

    def __repr__(self) -> str:
        return f"autogradcli.{self.name}"

    def __reduce__(self) -> str:
        return self.name


float16 = DType("float16", np.float16)


class _BFloat16(DType):
    """bfloat16, whose numpy dtype comes from ml_dtypes, imported on first use (it adds about
    1 MiB to ``import autogradcli``)."""

    __slots__ = ()

    def __init__(self) -> None:
        self.name, self.itemsize = "bfloat16", 2
        self.is_floating_point = self.is_signed = True
        self.is_complex = False

    @property
    def np(self) -> np.dtype:  # type: ignore[override]
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)


bfloat16 = _BFloat16()
float32 = DType("float32", np.float32)
float64 = DType("float64", np.float64)
uint8 = DType("uint8", np.uint8)
int8 = DType("int8", np.int8)
int16 = DType("int16", np.int16)
int32 = DType("int32", np.int32)
int64 = DType("int64", np.int64)
bool_ = DType("bool", np.bool_)
complex64 = DType("complex64", np.complex64)
complex128 = DType("complex128", np.complex128)

half, float, double = float16, float32, float64
short, int, long = int16, int32, int64
cfloat, cdouble = complex64, complex128

ALL_DTYPES = (float16, bfloat16, float32, float64, uint8, int8, int16, int32, int64, bool_)
ALL_DTYPES += (complex64, complex128)
_BY_NUMPY: dict[np.dtype, DType] = {d.np: d for d in ALL_DTYPES if d is not bfloat16}
_BY_NAME: dict[str, DType] = {d.name: d for d in ALL_DTYPES}
_BY_NAME.update(half=float16, float=float32, double=float64, short=int16, int=int32, long=int64)
_BY_NAME.update(cfloat=complex64, cdouble=complex128)

_default_float = float32


def get_default_dtype() -> DType:
    return _default_float


def set_default_dtype(dtype: DType) -> None:
    global _default_float
    if not to_dtype(dtype).is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _default_float = to_dtype(dtype)


def from_numpy_dtype(np_dtype: Any) -> DType:
    dt = _BY_NUMPY.get(np_dtype)
    if dt is None:
        dt = _BY_NUMPY.get(np.dtype(np_dtype))
        if dt is None:
            if np.dtype(np_dtype).name != "bfloat16":
                raise TypeError(f"can't convert np.ndarray of type {np_dtype} to a tensor")
            dt = _BY_NUMPY[np.dtype(np_dtype)] = bfloat16
    if dt is bfloat16:
        _note_bfloat16()
    return dt


def _note_bfloat16() -> None:
    """From the first bfloat16 tensor on, ops check whether to round their results to it."""
    from ..autograd.grad_mode import STATE

    STATE.bfloat16 = True


def to_dtype(spec: Any) -> DType:
    """Accept a DType, a dtype name ("float32"), a numpy dtype or a Python type."""
    if isinstance(spec, DType):
        if spec is bfloat16:
            _note_bfloat16()
        return spec
    if isinstance(spec, str):
        dt = _BY_NAME.get(spec.removeprefix("torch.").removeprefix("autogradcli."))
        if dt is None:
            raise TypeError(f"unknown dtype {spec!r}; expected one of {sorted(_BY_NAME)}")
        if dt is bfloat16:
            _note_bfloat16()
        return dt
    if spec is builtins_float:
        return _default_float
    if spec is builtins_int:
        return int64
    if spec is builtins_bool:
        return bool_
    if spec is builtins_complex:
        return default_complex()
    return from_numpy_dtype(np.dtype(spec))


builtins_float, builtins_int, builtins_bool = type(1.0), type(1), type(True)
builtins_complex = type(1j)


def default_complex() -> DType:
    """PyTorch's default complex dtype: complex128 when the default float is float64."""
    return complex128 if _default_float is float64 else complex64


# Promotion categories: bool < integer < floating < complex.
_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "V": 2, "c": 3}
_F16, _F32 = np.dtype(np.float16), np.dtype(np.float32)
_C64, _C128 = np.dtype(np.complex64), np.dtype(np.complex128)


def category(np_dtype: np.dtype) -> int:
    """0 for bool, 1 for integers, 2 for floating point, 3 for complex."""
    return _CATEGORY[np_dtype.kind]


def _category_of_scalar(value: Any) -> int:
    if isinstance(value, builtins_bool):
        return 0
    if isinstance(value, builtins_int):
        return 1
    if isinstance(value, builtins_complex):
        return 3
    return 2


def _complex_of(np_dtype: np.dtype) -> np.dtype:
    """The complex dtype holding ``np_dtype``'s real values (float64 -> complex128)."""
    return _C128 if np_dtype.itemsize == 8 and np_dtype.kind == "f" else _C64


def promote_types(*np_dtypes: np.dtype) -> np.dtype:
    """PyTorch's promote_types: the highest category wins outright (float32 with int64 is
    float32, not numpy's float64); within a category numpy's widening applies."""
    top = max(_CATEGORY[d.kind] for d in np_dtypes)
    if top == 3:  # complex: a float's precision counts too (float64 + complex64 -> complex128)
        return max(
            (_complex_of(d) if d.kind != "c" else d for d in np_dtypes if d.kind in "fVc"),
            key=lambda d: d.itemsize,
        )
    group = [d for d in np_dtypes if _CATEGORY[d.kind] == top]
    if top == 2 and any(d.kind == "V" for d in group):
        return _promote_bfloat16(group)
    return np.result_type(*group)


def _promote_bfloat16(floats: list[np.dtype]) -> np.dtype:
    """bfloat16 with itself stays bfloat16; with float16 both widen to float32 (neither holds
    the other); with float32/float64 the wider one wins, as in PyTorch."""
    others = [d for d in floats if d.kind != "V"]
    if not others:
        return floats[0]
    if all(d == _F16 for d in others):
        return _F32
    return np.result_type(*[d for d in others if d != _F16])


def result_type(*operands: Any) -> np.dtype:
    """The numpy dtype PyTorch's promotion gives for tensors (``._data`` arrays) and scalars.

    Dimensioned tensors decide first; 0-d tensors and then Python scalars only matter when they
    are of a higher category (bool < int < float), which is how a Python float keeps a float32
    tensor float32 and turns an int64 tensor into the default float dtype.
    """
    dims, zero_dims, scalars = [], [], []
    for op in operands:
        arr = getattr(op, "_data", None)
        if arr is None:
            scalars.append(op)
        elif arr.ndim:
            dims.append(arr.dtype)
        else:
            zero_dims.append(arr.dtype)
    result = None
    for group in (dims, zero_dims):
        if not group:
            continue
        result = _combine(result, promote_types(*group))
    for value in scalars:
        cat = _category_of_scalar(value)
        if result is None or cat > _CATEGORY[result.kind]:
            scalar = (np.dtype(np.bool_), np.dtype(np.int64), _default_float.np)
            result = _combine(result, default_complex().np if cat == 3 else scalar[cat])
    return result


def _combine(result: np.dtype | None, lower: np.dtype) -> np.dtype:
    """``result`` unless ``lower`` is of a higher category; complex over a float keeps the float's
    precision (a float64 tensor times 1j is complex128)."""
    if result is None:
        return lower
    if _CATEGORY[lower.kind] <= _CATEGORY[result.kind]:
        return result
    if lower.kind == "c" and result.kind in "fV":
        return _complex_of(result)
    return lower
