"""Complex tensors: ``view_as_real``/``view_as_complex``, ``real``/``imag``, ``conj``, ``angle``,
``complex``/``polar``. Gradients follow PyTorch's convention (conjugate Wirtinger): for a real loss
L of z = x + iy, z.grad = dL/dx + i dL/dy."""

from __future__ import annotations

import builtins
from typing import Any

from ..autograd.fixed_arity import binary_apply, unary_apply
from ..autograd.function import Function
from ..autograd.gradient_ops import ToCopy
from ..tensor import dtype as dtypes
from ..tensor.tensor import Tensor, wrap, wrap_view
from ._util import array_module, scalar_type_name

__all__ = [
    "angle",
    "complex",
    "conj",
    "conj_physical",
    "imag",
    "is_complex",
    "polar",
    "real",
    "resolve_conj",
    "resolve_neg",
    "sgn",
    "view_as_complex",
    "view_as_real",
]

_COMPLEX_OF = {"float16": "complex64", "float32": "complex64", "float64": "complex128"}


def is_complex(input: Tensor) -> bool:
    """Whether ``input`` holds complex numbers (complex64 or complex128)."""
    return input._data.dtype.kind == "c"


def refuse_complex(x: Any, message: str, error: type = NotImplementedError) -> None:
    """Raise ``error(message)`` when ``x`` is a complex tensor: the guard of ops that have no
    complex meaning (ordering, clamping), as PyTorch refuses them."""
    if isinstance(x, Tensor) and x._data.dtype.kind == "c":
        raise error(message.format(dtype=scalar_type_name(x._data.dtype)))


def real_view(arr: Any) -> Any:
    """``arr`` itself, or the (..., 2) float view of a complex ``arr`` sharing its memory (how an
    optimizer updates a complex parameter as pairs of reals, as PyTorch's do)."""
    if arr is None or arr.dtype.kind != "c":
        return arr
    xp = array_module(arr)
    half = arr.itemsize // 2
    return xp.lib.stride_tricks.as_strided(
        arr.real, shape=arr.shape + (2,), strides=arr.strides + (half,)
    )


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
        from .unary import where

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
imag = unary_apply(Imag)
for _fn, _name in ((view_as_real, "view_as_real"), (view_as_complex, "view_as_complex")):
    _fn.__name__ = _fn.__qualname__ = _name
imag.__name__ = imag.__qualname__ = "imag"


def complex(real: Tensor, imag: Tensor, *, out: Tensor | None = None) -> Tensor:
    """A complex tensor from its real and imaginary parts (float tensors of one dtype)."""
    if out is not None:
        from ._out import write_out

        return write_out("complex", lambda: _complex(real, imag), out, real, imag)
    return _complex(real, imag)


def polar(abs: Tensor, angle: Tensor) -> Tensor:
    """``abs * (cos(angle) + i sin(angle))``; differentiable in both."""
    return _polar(abs, angle)


def real(input: Tensor) -> Tensor:
    """The real part (a view); a real tensor itself."""
    return _real(input) if is_complex(input) else input


def conj(input: Tensor) -> Tensor:
    """The complex conjugate; a real tensor itself."""
    return _conj(input) if is_complex(input) else input


def conj_physical(input: Tensor) -> Tensor:
    """The complex conjugate, computed (``conj`` is already computed here)."""
    return conj(input)


def resolve_conj(input: Tensor) -> Tensor:
    """``input``: conjugation is never lazy here."""
    return input


resolve_neg = resolve_conj


def angle(input: Tensor) -> Tensor:
    """The argument of each element, in radians (float result)."""
    return _angle(input)


def sgn(input: Tensor) -> Tensor:
    """``z / |z|`` (0 at 0) for complex tensors; ``sign`` for real ones."""
    if not is_complex(input):
        return input.sign()
    from .unary import where

    mag = input.abs()
    return where(mag == 0, 0.0, input / where(mag == 0, 1.0, mag))


def conj_grad(t: Any) -> Any:
    """``t``'s conjugate when it is a complex tensor or number (the factor a product's gradient
    takes), else ``t``."""
    if isinstance(t, Tensor):
        return _conj(t) if t._data.dtype.kind == "c" else t
    return t.conjugate() if isinstance(t, builtins.complex) else t


def _holomorphic(cls: Any) -> None:
    """Give ``cls`` (an op whose backward multiplies by its complex derivative f'(z)) PyTorch's
    complex gradient g * conj(f'(z)), as conj(backward(conj(g))); real gradients are untouched."""
    plain = cls.backward

    def backward(ctx: Any, *grads: Any) -> Any:
        g = grads[0]
        if g is None or g._data.dtype.kind != "c":
            return plain(ctx, *grads)
        out = plain(ctx, *[conj_grad(g) for g in grads])
        return tuple(conj_grad(o) for o in out) if isinstance(out, tuple) else conj_grad(out)

    cls.backward = staticmethod(backward)


def _set_part(getter: Any) -> Any:
    def setter(self: Tensor, value: Any) -> None:
        getter(self).copy_(value)

    return setter


TENSOR_METHODS: dict[str, Any] = {
    "is_complex": is_complex,
    "conj": conj,
    "conj_physical": conj_physical,
    "resolve_conj": resolve_conj,
    "resolve_neg": resolve_neg,
    "is_conj": lambda self: False,
    "is_neg": lambda self: False,
    "angle": angle,
    "sgn": sgn,
    "__complex__": lambda self: builtins.complex(self.item()),
    "mH": property(lambda self: conj(self.mT)),  # the conjugate transpose of the last two dims
    "adjoint": lambda self: conj(self.mT),
    "H": property(lambda self: conj(self.t())),
    "cfloat": lambda self: self.to(dtypes.complex64),
    "cdouble": lambda self: self.to(dtypes.complex128),
    "real": property(real, _set_part(real)),
    "imag": property(imag, _set_part(imag)),
}


def _register_holomorphic() -> None:
    from . import logexp, unary

    for cls in (unary.Exp, unary.Log, unary.Sqrt, unary.Rsqrt, unary.Sin, unary.Cos, unary.Tanh):
        _holomorphic(cls)
    for cls in (unary.Sigmoid, logexp.Log1p, logexp.Expm1):
        _holomorphic(cls)


_register_holomorphic()
