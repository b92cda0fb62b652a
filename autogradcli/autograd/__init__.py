"""Automatic differentiation: PyTorch's ``torch.autograd`` API on our engine."""

from .engine import backward, grad
from .function import Function, FunctionCtx, InplaceFunction, once_differentiable
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .variable import Variable

__all__ = [
    "Function",
    "FunctionCtx",
    "GradcheckError",
    "InplaceFunction",
    "Variable",
    "backward",
    "enable_grad",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "is_grad_enabled",
    "no_grad",
    "once_differentiable",
    "set_grad_enabled",
]
