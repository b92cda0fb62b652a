"""The export's errors, as ``torch.onnx.errors`` names them."""

from __future__ import annotations

import inspect

__all__ = ["OnnxExporterError", "UnsupportedOperatorError", "where_defined"]


class OnnxExporterError(RuntimeError):
    """An export failed: the model holds something the ONNX graph cannot express."""


class UnsupportedOperatorError(OnnxExporterError):
    """An op (a built-in Function or a user's ``autograd.Function``) has no ONNX form."""


def where_defined(obj: object) -> str:
    """``file:line`` of a class or function's definition, or its qualified name if unknown."""
    try:
        path = inspect.getsourcefile(obj)  # type: ignore[arg-type]
        line = inspect.getsourcelines(obj)[1]  # type: ignore[arg-type]
    except (OSError, TypeError):
        return getattr(obj, "__module__", "?")
    return f"{path}:{line}"
