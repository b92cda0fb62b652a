"""``torch.fx._symbolic_trace``'s public names, under the path the generated code names
(``autogradcli.fx._symbolic_trace.wrap(...)``) and some programs import from."""

from .proxy import Proxy as Proxy
from .tracer import Tracer as Tracer
from .tracer import symbolic_trace as symbolic_trace
from .wrap import wrap as wrap

__all__ = ["Proxy", "Tracer", "symbolic_trace", "wrap"]
