"""Automatic differentiation: PyTorch's ``torch.autograd`` API on our engine."""

from .._utils.lazy import lazy_attributes
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .engine import backward, grad
from .function import Function, FunctionCtx, InplaceFunction, once_differentiable
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .gradcheck import gradcheck, gradgradcheck
from .variable import Variable

# its report types (dataclasses) load with the first check (see _utils/lazy.py)
_LAZY = {"GradcheckError": ".gradcheck_results:GradcheckError"}
__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)

__all__ = [
    "Function",
    "FunctionCtx",
    "GradcheckError",
    "InplaceFunction",
    "Variable",
    "backward",
    "detect_anomaly",
    "enable_grad",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "is_grad_enabled",
    "no_grad",
    "once_differentiable",
    "set_detect_anomaly",
    "set_grad_enabled",
]
