"""``torch.fx.Interpreter``: run a GraphModule node by node (override a method per op kind)."""

from __future__ import annotations

from typing import Any

from ..nn import Module
from .codegen import last_uses
from .node import Argument, Node, Target, map_arg

__all__ = ["Interpreter"]


class Interpreter:
    """Executes ``module.graph`` one node at a time; ``env`` maps each node to its value."""

    def __init__(
        self, module: Module, garbage_collect_values: bool = True, graph: Any = None
    ) -> None:
        self.module = module
        self.graph = graph if graph is not None else module.graph
        self.garbage_collect_values = garbage_collect_values
        self.env: dict[Node, Any] = {}
        self._last_use = last_uses(self.graph)

    def run(self, *args: Any, initial_env: dict[Node, Any] | None = None) -> Any:
        """Run the graph on ``args``; the output's value."""
        self.env = dict(initial_env or {})
        self._args_iter = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue
            self.env[node] = self.run_node(node)
            if self.garbage_collect_values:
                for dead in self._last_use.get(node, []):
                    self.env.pop(dead, None)
            if node.op == "output":
                return self.env[node]
        return None

    def run_node(self, n: Node) -> Any:
        """The value of one node: dispatches to the method named like its op."""
        args = self.map_nodes_to_values(n.args, n)
        kwargs = self.map_nodes_to_values(n.kwargs, n)
        return getattr(self, n.op)(n.target, args, kwargs)

    def placeholder(
        self, target: Target, args: tuple[Argument, ...], kwargs: dict[str, Any]
    ) -> Any:
        """The next positional input (or the placeholder's default)."""
        try:
            return next(self._args_iter)
        except StopIteration as exc:
            if args:
                return args[0]
            raise RuntimeError(f"Expected positional argument for parameter {target}, but one was not passed in!") from exc  # fmt: skip

    def get_attr(self, target: Target, args: tuple[Argument, ...], kwargs: dict[str, Any]) -> Any:
        """The module's attribute at ``target``."""
        return self.fetch_attr(target)

    def call_function(
        self, target: Target, args: tuple[Argument, ...], kwargs: dict[str, Any]
    ) -> Any:
        """``target(*args, **kwargs)``."""
        return target(*args, **kwargs)

    def call_method(
        self, target: Target, args: tuple[Argument, ...], kwargs: dict[str, Any]
    ) -> Any:
        """``args[0].target(*args[1:], **kwargs)``."""
        self_obj, *rest = args
        return getattr(self_obj, target)(*rest, **kwargs)

    def call_module(
        self, target: Target, args: tuple[Argument, ...], kwargs: dict[str, Any]
    ) -> Any:
        """The submodule at ``target`` called on the arguments."""
        return self.fetch_attr(target)(*args, **kwargs)

    def output(self, target: Target, args: tuple[Argument, ...], kwargs: dict[str, Any]) -> Any:
        """The returned value."""
        return args[0]

    def fetch_attr(self, target: str) -> Any:
        """The attribute at the dotted ``target`` of the module."""
        obj: Any = self.module
        for i, part in enumerate(target.split(".")):
            if not hasattr(obj, part):
                raise RuntimeError(f"Node referenced nonexistent target {'.'.join(target.split('.')[:i + 1])}")  # fmt: skip
            obj = getattr(obj, part)
        return obj

    def map_nodes_to_values(self, args: Argument, n: Node) -> Argument:
        """``args`` with each Node replaced by its computed value."""

        def load(a: Node) -> Any:
            if a not in self.env:
                raise RuntimeError(f"Node {n} referenced nonexistent value {a}! Run Graph.lint() to diagnose such issues")  # fmt: skip
            return self.env[a]

        return map_arg(args, load)
