"""Elementwise unary ops: each a Function with its derivative beside it (``clamp`` and ``where``
are in clamp_where.py)."""

from __future__ import annotations

from typing import Any

from ..autograd.fixed_arity import binary_apply, unary_apply
from ..autograd.function import Function
from ..backend import kernels
from ..backend.kernels import sigmoid_backward, tanh_backward
from ..tensor.tensor import Tensor, wrap
from ._util import array_module
from .clamp_where import _NO_COMPLEX_CLAMP
from .relu_array import relu_array


def _float_operand(x: Tensor) -> tuple[Any, Any]:
    """``x``'s array module and array; integer inputs of float-valued functions (exp, sin...)
    become the default float dtype."""
    arr = x._data
    xp = array_module(arr)
    if arr.dtype.kind in "fcV":
        return xp, arr
    from ..tensor.dtype import get_default_dtype

    return xp, arr.astype(get_default_dtype().np)


class Neg(Function):
    _backward_name = "NegBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Any:
        return -x._data

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        return -g


class Exp(Function):
    _backward_name = "ExpBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Any:
        xp, arr = _float_operand(x)
        out = wrap(xp.exp(arr))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        (out,) = ctx.saved_tensors
        return g * out


class Log(Function):
    _backward_name = "LogBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Any:
        ctx.save_for_backward(x)
        xp, arr = _float_operand(x)
        return xp.log(arr)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        (x,) = ctx.saved_tensors
        return g / x


class Sqrt(Function):
    _backward_name = "SqrtBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Any:
        xp, arr = _float_operand(x)
        out = wrap(xp.sqrt(arr))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        (out,) = ctx.saved_tensors
        return g / (2.0 * out)


class Rsqrt(Function):
    _backward_name = "RsqrtBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Any:
        xp, arr = _float_operand(x)
        out = wrap(1.0 / xp.sqrt(arr))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        (out,) = ctx.saved_tensors
        return g * -0.5 * out * out * out


class Sin(Function):
    _backward_name = "SinBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Any:
        ctx.save_for_backward(x)
        xp, arr = _float_operand(x)
        return xp.sin(arr)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        (x,) = ctx.saved_tensors
        return _SinBackward(g, x)


class SinBackward(Function):
    """g * cos(x) in one op (sin's backward, itself differentiable for grad-of-grad)."""

    _backward_name = "SinBackwardBackward0"

    @staticmethod
    def forward(ctx: Any, g: Tensor, x: Tensor) -> Any:
        if True in ctx.needs_input_grad:
            ctx.save_for_backward(g, x)
        return g._data * array_module(x._data).cos(x._data)

    @staticmethod
    def backward(ctx: Any, gg: Tensor) -> tuple[Any, Any]:
        g, x = ctx.saved_tensors
        ng, nx = ctx.needs_input_grad
        return (_SinBackward(gg, x) if ng else None, -gg * g * x.sin() if nx else None)


_SinBackward = binary_apply(SinBackward)


class Cos(Function):
    _backward_name = "CosBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Any:
        ctx.save_for_backward(x)
        xp, arr = _float_operand(x)
        return xp.cos(arr)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        (x,) = ctx.saved_tensors
        return _CosBackward(g, x)


class CosBackward(Function):
    """-g * sin(x) in one op (cos's backward, itself differentiable for grad-of-grad)."""

    _backward_name = "CosBackwardBackward0"

    @staticmethod
    def forward(ctx: Any, g: Tensor, x: Tensor) -> Any:
        if True in ctx.needs_input_grad:
            ctx.save_for_backward(g, x)
        return -(g._data * array_module(x._data).sin(x._data))

    @staticmethod
    def backward(ctx: Any, gg: Tensor) -> tuple[Any, Any]:
        g, x = ctx.saved_tensors
        ng, nx = ctx.needs_input_grad
        return (_CosBackward(gg, x) if ng else None, -gg * g * x.cos() if nx else None)


_CosBackward = binary_apply(CosBackward)


class Tanh(Function):
    _backward_name = "TanhBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Any:
        xp, arr = _float_operand(x)
        out = wrap(xp.tanh(arr))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        (out,) = ctx.saved_tensors
        return _TanhBackward(g, out)


class TanhBackward(Function):
    """g * (1 - y**2) in one op (tanh's backward, itself differentiable for grad-of-grad)."""

    _backward_name = "TanhBackwardBackward0"

    @staticmethod
    def forward(ctx: Any, g: Tensor, y: Tensor) -> Any:
        if True in ctx.needs_input_grad:
            ctx.save_for_backward(g, y)
        return tanh_backward(g._data, y._data)

    @staticmethod
    def backward(ctx: Any, gg: Tensor) -> tuple[Any, Any]:
        g, y = ctx.saved_tensors
        ng, ny = ctx.needs_input_grad
        return (_TanhBackward(gg, y) if ng else None, gg * g * y * -2.0 if ny else None)


_TanhBackward = binary_apply(TanhBackward)


class Sigmoid(Function):
    _backward_name = "SigmoidBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Any:
        out = wrap(kernels.sigmoid(_float_operand(x)[1]))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        (out,) = ctx.saved_tensors
        return _SigmoidBackward(g, out)


class SigmoidBackward(Function):
    """g * y * (1 - y) in one op (sigmoid's backward, itself differentiable)."""

    _backward_name = "SigmoidBackwardBackward0"

    @staticmethod
    def forward(ctx: Any, g: Tensor, y: Tensor) -> Any:
        if True in ctx.needs_input_grad:
            ctx.save_for_backward(g, y)
        return sigmoid_backward(g._data, y._data)

    @staticmethod
    def backward(ctx: Any, gg: Tensor) -> tuple[Any, Any]:
        g, y = ctx.saved_tensors
        ng, ny = ctx.needs_input_grad
        return (
            _SigmoidBackward(gg, y) if ng else None,
            gg * g * (1.0 - 2.0 * y) if ny else None,
        )


_SigmoidBackward = binary_apply(SigmoidBackward)


class Relu(Function):
    _backward_name = "ReluBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Any:
        if x._data.dtype.kind == "c":
            raise NotImplementedError(_NO_COMPLEX_CLAMP)
        out = wrap(relu_array(x._data))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        (out,) = ctx.saved_tensors
        return ThresholdBackward.apply(g, out)


class ThresholdBackward(Function):
    """0 where y <= 0, else g (relu's backward, as torch's threshold_backward: NaN passes g;
    linear in g, so its own backward is itself)."""

    _backward_name = "ThresholdBackwardBackward0"

    @staticmethod
    def forward(ctx: Any, g: Tensor, y: Tensor) -> Any:
        if ctx.needs_input_grad[0]:
            ctx.save_for_backward(y)
        return g._data * ~(y._data <= 0)

    @staticmethod
    def backward(ctx: Any, gg: Tensor) -> tuple[Any, None]:
        if not ctx.needs_input_grad[0]:
            return None, None
        (y,) = ctx.saved_tensors
        return ThresholdBackward.apply(gg, y), None


class Abs(Function):
    _backward_name = "AbsBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Any:
        ctx.save_for_backward(x)
        return array_module(x._data).abs(x._data)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        (x,) = ctx.saved_tensors
        if x._data.dtype.kind == "c":  # d|z| = Re(conj(z/|z|) dz)
            from .complex_numbers import sgn

            return g * sgn(x)
        return g * x.sign()


class Sign(Function):
    _backward_name = "SignBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Any:
        if x._data.dtype.kind == "c":
            raise NotImplementedError(
                "Unlike NumPy, autogradcli.sign is not intended to support complex numbers. "
                "Please use autogradcli.sgn instead."
            )
        return array_module(x._data).sign(x._data)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        return g * 0.0


class Trunc(Function):
    _backward_name = "TruncBackward0"

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Any:
        return array_module(x._data).trunc(x._data)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        return g * 0.0


def _unary(cls: type[Function], name: str) -> Any:
    """``cls.apply`` as the one-argument function (and Tensor method) ``name``."""
    fn = unary_apply(cls)
    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = __name__
    return fn


neg = _unary(Neg, "neg")


exp = _unary(Exp, "exp")


log = _unary(Log, "log")


sqrt = _unary(Sqrt, "sqrt")


rsqrt = _unary(Rsqrt, "rsqrt")


sin = _unary(Sin, "sin")


cos = _unary(Cos, "cos")


tanh = _unary(Tanh, "tanh")


sigmoid = _unary(Sigmoid, "sigmoid")


relu = _unary(Relu, "relu")


abs = _unary(Abs, "abs")


sign = _unary(Sign, "sign")


trunc = _unary(Trunc, "trunc")


TENSOR_METHODS: dict[str, Any] = {
    "__neg__": neg,
    "__pos__": lambda self: self,
    "__abs__": abs,
    "neg": neg,
    "negative": neg,
    "exp": exp,
    "log": log,
    "sqrt": sqrt,
    "rsqrt": rsqrt,
    "sin": sin,
    "cos": cos,
    "tanh": tanh,
    "sigmoid": sigmoid,
    "relu": relu,
    "abs": abs,
    "sign": sign,
    "trunc": trunc,
}
