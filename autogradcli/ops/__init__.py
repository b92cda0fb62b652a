"""The built-in differentiable operations, each an autograd Function, and the Tensor methods
that call them."""

from ..autograd.gradient_ops import sum_to
from . import methods
from .arithmetic import add, div, maximum, minimum, mul, pow, sub
from .clamp_where import clamp, where
from .comparison import eq, floor_divide, ge, gt, le, logical_not, lt, ne, remainder
from .conversion import clone
from .indexing import argwhere, nonzero
from .linalg import bmm, matmul, mm
from .reduction import mean, sum
from .shape import (
    broadcast_to,
    expand,
    flatten,
    permute,
    reshape,
    squeeze,
    t,
    transpose,
    unflatten,
    unsqueeze,
)
from .unary import (
    abs,
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
)

clip = clamp

__all__ = [
    "abs",
    "add",
    "argwhere",
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

from . import (  # noqa: E402
    activation,
    activation_piecewise,
    axes,
    binary_math,
    closeness,
    complex_numbers,
    discrete_reduction,
    elementary,
    fused,
    gather_scatter,
    join,
    logexp,
    masking,
    minmax,
    predicates,
    promotion,
    reorder,
    sampling,
    scan,
    sorting,
    sparse_layout,
    statistics,
    volumetric,
)
from .activation import *  # noqa: E402
from .activation_piecewise import *  # noqa: E402
from .axes import *  # noqa: E402
from .binary_math import *  # noqa: E402
from .closeness import *  # noqa: E402
from .complex_numbers import *  # noqa: E402
from .discrete_reduction import *  # noqa: E402
from .elementary import *  # noqa: E402
from .fused import *  # noqa: E402
from .gather_scatter import *  # noqa: E402
from .join import *  # noqa: E402
from .logexp import *  # noqa: E402
from .masking import *  # noqa: E402
from .minmax import *  # noqa: E402
from .predicates import *  # noqa: E402
from .promotion import *  # noqa: E402
from .reorder import *  # noqa: E402
from .sampling import *  # noqa: E402
from .scan import *  # noqa: E402
from .sorting import *  # noqa: E402
from .sparse_layout import *  # noqa: E402
from .statistics import *  # noqa: E402
from .volumetric import *  # noqa: E402

for _module in (
    activation,
    activation_piecewise,
    axes,
    binary_math,
    closeness,
    complex_numbers,
    discrete_reduction,
    elementary,
    fused,
    gather_scatter,
    join,
    logexp,
    masking,
    minmax,
    promotion,
    predicates,
    reorder,
    sampling,
    scan,
    sorting,
    sparse_layout,
    statistics,
    volumetric,
):
    __all__ += _module.__all__

from .numpy_keywords import add_numpy_keywords  # noqa: E402

add_numpy_keywords(globals())

from .lazy_methods import LAZY  # noqa: E402  (names autogradcli loads on first use)
