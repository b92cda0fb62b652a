"""The built-in differentiable operations, each an autograd Function, and the Tensor methods
that call them."""

from . import methods
from .arithmetic import add, div, maximum, minimum, mul, pow, sub
from .comparison import eq, floor_divide, ge, gt, le, logical_not, lt, ne, remainder
from .conversion import clone
from .indexing import nonzero
from .linalg import bmm, matmul, mm
from .reduction import mean, sum
from .shape import (
    broadcast_to,
    expand,
    flatten,
    permute,
    reshape,
    squeeze,
    sum_to,
    t,
    transpose,
    unflatten,
    unsqueeze,
)
from .unary import (
    abs,
    clamp,
    cos,
    exp,
    log,
    neg,
    relu,
    rsqrt,
    sigmoid,
    sign,
    sin,
    sqrt,
    tanh,
    trunc,
    where,
)

clip = clamp

__all__ = [
    "abs",
    "add",
    "bmm",
    "broadcast_to",
    "clamp",
    "clip",
    "clone",
    "cos",
    "div",
    "eq",
    "exp",
    "expand",
    "flatten",
    "floor_divide",
    "ge",
    "gt",
    "le",
    "log",
    "logical_not",
    "lt",
    "matmul",
    "maximum",
    "mean",
    "minimum",
    "mm",
    "mul",
    "ne",
    "neg",
    "nonzero",
    "permute",
    "pow",
    "relu",
    "remainder",
    "reshape",
    "rsqrt",
    "sigmoid",
    "sign",
    "sin",
    "sqrt",
    "squeeze",
    "sub",
    "sum",
    "sum_to",
    "t",
    "tanh",
    "transpose",
    "trunc",
    "unflatten",
    "unsqueeze",
    "where",
]

from . import activation, closeness, einstein, fused, indexing_extra, join, reduction_extra, sorting  # noqa: E402
from .activation import *  # noqa: E402
from .closeness import *  # noqa: E402
from .einstein import *  # noqa: E402
from .fused import *  # noqa: E402
from .indexing_extra import *  # noqa: E402
from .join import *  # noqa: E402
from .reduction_extra import *  # noqa: E402
from .sorting import *  # noqa: E402

__all__ += activation.__all__ + indexing_extra.__all__ + join.__all__ + reduction_extra.__all__
__all__ += closeness.__all__ + einstein.__all__ + fused.__all__ + sorting.__all__
