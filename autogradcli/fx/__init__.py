"""``torch.fx``: symbolic tracing of a Module's ``forward`` into a Graph of Nodes, graph
surgery, and a GraphModule that runs code generated from the edited graph."""

from . import (
    _symbolic_trace,
    graph,
    graph_module,
    interpreter,
    node,
    passes,
    proxy,
    subgraph_rewriter,
)
from .graph import Graph
from .graph_module import GraphModule
from .interpreter import Interpreter
from .node import Node, map_arg
from .proxy import Proxy, TraceError
from .subgraph_rewriter import replace_pattern
from .tracer import Tracer, symbolic_trace
from .transformer import Transformer
from .wrap import wrap

__all__ = [
    "Graph",
    "GraphModule",
    "Interpreter",
    "Node",
    "Proxy",
    "TraceError",
    "Tracer",
    "Transformer",
    "graph",
    "graph_module",
    "interpreter",
    "map_arg",
    "node",
    "passes",
    "proxy",
    "replace_pattern",
    "subgraph_rewriter",
    "symbolic_trace",
    "wrap",
]
