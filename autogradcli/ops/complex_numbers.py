"""Complex tensors: ``view_as_real``/``view_as_complex``, ``real``/``imag``, ``conj``, ``angle``,
``complex``/``polar``. Gradients follow PyTorch's convention (conjugate Wirtinger): for a real loss
L of z = x + iy, z.grad = dL/dx + i dL/dy. The Functions are in ``complex_functions``, imported
on first use."""

from __future__ import annotations

import builtins
from typing import Any

from ..autograd.record import on_first_complex
from ..tensor import dtype as dtypes
from ..tensor.tensor import Tensor
from ._util import array_module, scalar_type_name

__all__ = [
    "angle",
    "complex",
    "conj",
    "conj_physical",
    "imag",
    "is_complex",
    "is_floating_point",
    "polar",
    "real",
    "resolve_conj",
    "resolve_neg",
    "sgn",
    "view_as_complex",
    "view_as_real",
]


def is_complex(input: Tensor) -> bool:
    """Whether ``input`` holds complex numbers (complex64 or complex128)."""
    return input._data.dtype.kind == "c"


def is_floating_point(input: Tensor) -> bool:
    """Whether ``input`` has a floating-point dtype (complex ones are not)."""
    return input.is_floating_point()


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


def _fns() -> Any:
    from . import complex_functions

    return complex_functions


def view_as_real(input: Tensor) -> Tensor:
    """The (..., 2) real view of a complex tensor, sharing its memory."""
    return _fns().view_as_real(input)


def view_as_complex(input: Tensor) -> Tensor:
    """The complex view of a float tensor whose last dim (size 2, stride 1) holds (re, im)."""
    return _fns().view_as_complex(input)


def imag(input: Tensor) -> Tensor:
    """The imaginary part of a complex tensor (a view)."""
    return _fns().imag_part(input)


def complex(real: Tensor, imag: Tensor, *, out: Tensor | None = None) -> Tensor:
    """A complex tensor from its real and imaginary parts (float tensors of one dtype)."""
    if out is not None:
        from ._out import write_out

        return write_out("complex", lambda: _fns()._complex(real, imag), out, real, imag)
    return _fns()._complex(real, imag)


def polar(abs: Tensor, angle: Tensor) -> Tensor:
    """``abs * (cos(angle) + i sin(angle))``; differentiable in both."""
    return _fns()._polar(abs, angle)


def real(input: Tensor) -> Tensor:
    """The real part (a view); a real tensor itself."""
    return _fns()._real(input) if is_complex(input) else input


def conj(input: Tensor) -> Tensor:
    """The complex conjugate; a real tensor itself."""
    return _fns()._conj(input) if is_complex(input) else input


def conj_physical(input: Tensor) -> Tensor:
    """The complex conjugate, computed (``conj`` is already computed here)."""
    return conj(input)


def resolve_conj(input: Tensor) -> Tensor:
    """``input``: conjugation is never lazy here."""
    return input


resolve_neg = resolve_conj


def angle(input: Tensor) -> Tensor:
    """The argument of each element, in radians (float result)."""
    return _fns()._angle(input)


def sgn(input: Tensor) -> Tensor:
    """``z / |z|`` (0 at 0) for complex tensors; ``sign`` for real ones."""
    if not is_complex(input):
        return input.sign()
    from .clamp_where import where

    mag = input.abs()
    return where(mag == 0, 0.0, input / where(mag == 0, 1.0, mag))


def conj_grad(t: Any) -> Any:
    """``t``'s conjugate when it is a complex tensor or number (the factor a product's gradient
    takes), else ``t``."""
    if isinstance(t, Tensor):
        return _fns()._conj(t) if t._data.dtype.kind == "c" else t
    return t.conjugate() if isinstance(t, builtins.complex) else t


def _holomorphic(cls: Any) -> None:
    """Give ``cls`` (an op whose backward multiplies by its complex derivative f'(z)) PyTorch's
    complex gradient g * conj(f'(z)), as conj(backward(conj(g))); real gradients are untouched."""
    plain = cls.backward

    def backward(ctx: Any, g: Any) -> Any:  # one output, one gradient: no *args on the hot path
        if g is None or g._data.dtype.kind != "c":
            return plain(ctx, g)
        out = plain(ctx, conj_grad(g))
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


# on the first complex result: until then backward runs the real formulas as they are
on_first_complex(_register_holomorphic)
