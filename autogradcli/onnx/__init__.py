"""ONNX export (``torch.onnx``'s common path): ``export(model, args, f, ...)`` traces one forward
pass through the engine's own op recording and writes the graph with the ``onnx`` package
(``pip install 'autogradcli[onnx]'``), imported only when an export runs."""

from .errors import OnnxExporterError, UnsupportedOperatorError
from .exporter import TrainingMode, export
from .graph import GraphContext, Value
from .registry import converter, register_converter
from .trace import is_in_onnx_export

__all__ = [
    "GraphContext",
    "OnnxExporterError",
    "TrainingMode",
    "UnsupportedOperatorError",
    "Value",
    "converter",
    "export",
    "is_in_onnx_export",
    "register_converter",
]
