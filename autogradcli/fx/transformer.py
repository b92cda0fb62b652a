"""``torch.fx.Transformer``: an Interpreter that runs on Proxies and so builds a new graph;
override its per-op methods to rewrite a GraphModule node by node."""

from __future__ import annotations

import inspect
from typing import Any

from .graph import Graph
from .graph_module import GraphModule
from .interpreter import Interpreter
from .node import Argument, Target, map_aggregate
from .proxy import Proxy
from .tracer import Tracer

__all__ = ["Transformer"]


class _AppendTo(Tracer):
    """Records into a given graph; every submodule call stays one call_module node."""

    def __init__(self, graph: Graph) -> None:
        super().__init__()
        self.graph = graph

    def is_leaf_module(self, m: Any, module_qualified_name: str) -> bool:
        return True


class Transformer(Interpreter):
    """``Transformer(gm).transform()``: a new GraphModule from ``gm``'s graph as the per-op
    methods (``call_function``, ``call_module``...) rebuild it."""

    def __init__(self, module: GraphModule) -> None:
        super().__init__(module)
        self.new_graph = Graph()
        self.tracer = _AppendTo(self.new_graph)
        self.tracer.root = module

    def placeholder(
        self, target: Target, args: tuple[Argument, ...], kwargs: dict[str, Any]
    ) -> Proxy:
        """A placeholder of the new graph (keeping its default)."""
        default = args[0] if args else inspect.Signature.empty
        return Proxy(self.new_graph.placeholder(target, default_value=default), self.tracer)

    def get_attr(self, target: Target, args: tuple[Argument, ...], kwargs: dict[str, Any]) -> Proxy:
        """A get_attr node of the new graph."""
        return self.tracer.create_proxy("get_attr", target, args, kwargs)

    def call_module(
        self, target: Target, args: tuple[Argument, ...], kwargs: dict[str, Any]
    ) -> Any:
        """A call_module node of the new graph."""
        submod = self.fetch_attr(target)
        return self.tracer.call_module(submod, submod.forward, args, kwargs)

    def call_function(
        self, target: Target, args: tuple[Argument, ...], kwargs: dict[str, Any]
    ) -> Proxy:
        """A call_function node of the new graph."""
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def transform(self) -> GraphModule:
        """Run the rewrite; the new GraphModule (sharing the module's submodules)."""
        result = self.run()
        if result is not None:
            self.new_graph.output(
                map_aggregate(result, lambda a: a.node if isinstance(a, Proxy) else a)
            )
        return GraphModule(self.module, self.new_graph)
