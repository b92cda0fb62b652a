"""The Functions behind ``ops/complex_numbers.py`` (view_as_real/view_as_complex, real/imag,
conj, angle, complex, polar), loaded on the first complex op so ``import autogradcli`` stays
small."""

from __future__ import annotations

from typing import Any

from ..autograd.fixed_arity import binary_apply, unary_apply
from ..autograd.function import Function
from ..autograd.gradient_ops import ToCopy
from ..tensor.tensor import Tensor, wrap, wrap_view
from ._util import array_module, scalar_type_name
from .complex_numbers import conj, imag, is_complex, real, real_view

_COMPLEX_OF = {"float16": "complex64", "float32": "complex64", "float64": "complex128"}


class ViewAsReal(Function):
    """The (..., 2) real view of a complex tensor (real and imaginary parts last)."""

    _backward_name = "ViewAsRealBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Any:
        if x._data.dtype.kind != "c":
            raise RuntimeError("view_as_real is only supported for complex tensors")
        return wrap_view(real_view(x._data), x)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        return _complex(g[..., 0], g[..., 1])


class ViewAsComplex(Function):
    """The complex view of a float tensor whose last dim (size 2, stride 1) holds (re, im)."""

    _backward_name = "ViewAsComplexBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Any:
        arr = x._data
        target = _COMPLEX_OF.get(arr.dtype.name)
        if target is None:
            raise RuntimeError(
                "view_as_complex is only supported for half, float and double tensors, but got "
                f"a tensor of scalar type: {scalar_type_name(arr.dtype)}"
            )
        if arr.ndim == 0 or arr.shape[-1] != 2:
            raise RuntimeError("Tensor must have a last dimension of size 2")
        if arr.strides[-1] != arr.itemsize:
            raise RuntimeError("Tensor must have a last dimension with stride 1")
        if any(s % (2 * arr.itemsize) for s, n in zip(arr.strides[:-1], arr.shape) if n > 1):
            raise RuntimeError(
                "Tensor must have a stride divisible by 2 for all but last dimension"
            )
        if _offset(arr) % (2 * arr.itemsize):
            raise RuntimeError("Tensor must have a storage_offset divisible by 2")
        if arr.dtype.name == "float16":  # numpy has no complex32: a float32 copy, then complex
            arr = arr.astype("float32")
        out = arr.view(target)[..., 0]
        return wrap_view(out, x) if arr is x._data else out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        return ViewAsReal.apply(g)


def _offset(arr: Any) -> int:
    """Bytes from the start of ``arr``'s base allocation to its first element."""
    base = arr
    while getattr(base, "base", None) is not None:
        base = base.base
    if hasattr(arr, "__array_interface__") and hasattr(base, "__array_interface__"):
        return arr.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    return int(arr.data.ptr - base.data.ptr)


class Real(Function):
    """The real part of a complex tensor, as a view."""

    _backward_name = "SelectBackward0"  # PyTorch selects it from the view_as_real view

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Any:
        ctx.dtype = x._data.dtype
        return wrap_view(x._data.real, x)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        return ToCopy.apply(g, ctx.dtype, None)


class Imag(Function):
    """The imaginary part of a complex tensor, as a view."""

    _backward_name = "SelectBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Any:
        if x._data.dtype.kind != "c":
            raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
        ctx.dtype = x._data.dtype
        return wrap_view(x._data.imag, x)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        return ToCopy.apply(g, ctx.dtype, None) * 1j


class Conj(Function):
    """The complex conjugate (a copy: PyTorch's lazy conjugate bit is not modelled)."""

    _backward_name = "ConjBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Any:
        return array_module(x._data).conj(x._data)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        return Conj.apply(g)


class Angle(Function):
    """The argument of each element (atan2(im, re)); 0 or pi for real inputs."""

    _backward_name = "AngleBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Any:
        arr = x._data
        xp = array_module(arr)
        ctx.save_for_backward(x)
        if arr.dtype.kind == "c":
            return xp.angle(arr)
        from .unary import _float_operand

        _, arr = _float_operand(x)
        pi = xp.asarray(xp.pi, arr.dtype)
        return xp.where(arr < 0, pi, xp.zeros((), arr.dtype)) + arr * 0  # + arr * 0: NaN stays

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        (x,) = ctx.saved_tensors
        if not is_complex(x):
            return g * 0.0
        from .clamp_where import where

        # d angle = (-y dx + x dy) / |z|^2, i.e. grad = g * i z / |z|^2 (0 at z == 0)
        abs_sq = x.real * x.real + x.imag * x.imag
        zero = abs_sq == 0
        return where(zero, 0.0, g * x / where(zero, 1.0, abs_sq) * 1j)


class Complex(Function):
    """``real + i imag`` from two float tensors of one dtype (broadcast)."""

    _backward_name = "ComplexBackward0"

    @staticmethod
    def forward(ctx: Any, re: Tensor, im: Tensor) -> Any:
        _check_parts(re, im)
        x, y = re._data, im._data
        xp = array_module(x)
        out = xp.empty(xp.broadcast_shapes(x.shape, y.shape), _COMPLEX_OF[x.dtype.name])
        out.real[...] = x  # the part views (as cupy has them) broadcast the operands
        out.imag[...] = y
        return out if x.dtype.name != "float16" else out.astype("complex64")

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, Any]:
        na, nb = ctx.needs_input_grad
        return (real(g) if na else None), (imag(g) if nb else None)


class Polar(Function):
    """``abs * (cos(angle) + i sin(angle))`` from two float tensors of one dtype (broadcast)."""

    _backward_name = "PolarBackward0"

    @staticmethod
    def forward(ctx: Any, r: Tensor, theta: Tensor) -> Any:
        _check_parts(r, theta)
        ctx.save_for_backward(r, theta)
        x, t = r._data, theta._data
        xp = array_module(x)
        return Complex.forward(ctx, wrap(x * xp.cos(t)), wrap(x * xp.sin(t)))

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, Any]:
        r, theta = ctx.saved_tensors
        from .unary import cos, sin

        # with e = exp(i angle): d abs = Re(g conj(e)), d angle = abs * Im(g conj(e))
        ge = g * conj(_complex(cos(theta), sin(theta)))
        na, nb = ctx.needs_input_grad
        return (real(ge) if na else None), (imag(ge) * r if nb else None)


def _check_parts(re: Any, im: Any) -> None:
    """PyTorch's checks on ``complex``/``polar`` operands: float tensors of one dtype."""
    for t in (re, im):
        if not isinstance(t, Tensor):
            raise TypeError(f"complex(): argument must be Tensor, not {type(t).__name__}")
    a, b = re._data.dtype, im._data.dtype
    if a.name not in _COMPLEX_OF or b.name not in _COMPLEX_OF:
        raise RuntimeError(
            "Expected both inputs to be Half, Float or Double tensors but got "
            f"{scalar_type_name(a)} and {scalar_type_name(b)}"
        )
    if a != b:
        raise RuntimeError(
            f"Expected object of scalar type {scalar_type_name(a)} but got scalar type "
            f"{scalar_type_name(b)} for second argument"
        )


_complex = binary_apply(Complex)
_polar = binary_apply(Polar)
_conj = unary_apply(Conj)
_real = unary_apply(Real)
_angle = unary_apply(Angle)
view_as_real = unary_apply(ViewAsReal)
view_as_complex = unary_apply(ViewAsComplex)
imag_part = unary_apply(Imag)
