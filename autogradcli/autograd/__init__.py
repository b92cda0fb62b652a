"""Automatic differentiation: PyTorch's ``torch.autograd`` API on our engine."""

from .engine import backward, grad
from .function import Function, FunctionCtx, InplaceFunction, once_differentiable
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .gradcheck import GradcheckError, gradcheck, gradgradcheck


def Variable(data, requires_grad=False, volatile=False):
    """The pre-0.4 wrapper: now simply a tensor (so old code keeps working)."""
    from ..tensor.factory import as_tensor

    t = as_tensor(data).detach()
    if requires_grad:
        t.requires_grad_(True)
    return t


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
