"""``torch.fx.Graph``: the ordered list of Nodes a trace records, with editing and printing."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from typing import Any

from .codegen import PythonCode, generate_code
from .names import Namespace, snake_case
from .node import Argument, Node, Target, map_arg

__all__ = ["Graph"]


class _NodeList:
    """A live view of a graph's nodes; iterating survives erasing the current node."""

    def __init__(self, graph: Graph, reverse: bool = False) -> None:
        self._graph, self._reverse = graph, reverse

    def __len__(self) -> int:
        return self._graph._len

    def __iter__(self) -> Iterator[Node]:
        root = self._graph._root
        step = "_prev" if self._reverse else "_next"
        cur = getattr(root, step)
        while cur is not root:
            if not cur._erased:
                yield cur
            cur = getattr(cur, step)

    def __reversed__(self) -> Iterator[Node]:
        return iter(_NodeList(self._graph, not self._reverse))


class _InsertPoint:
    """Sets where new nodes go at once; as a context manager, restores the old point on exit."""

    def __init__(self, graph: Graph, insert: Callable[[Node], None]) -> None:
        self._graph, self._saved = graph, graph._insert
        graph._insert = insert

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        self._graph._insert = self._saved


class Graph:
    """A sequence of Nodes: placeholders (the inputs), operations, and one output."""

    def __init__(self, owning_module: Any = None, tracer_cls: Any = None) -> None:
        self._root = Node(self, "", "root", "", (), {})
        self._namespace = Namespace()
        self._len = 0
        self._insert: Callable[[Node], None] = self._root.prepend
        self.owning_module = owning_module
        self._tracer_cls = tracer_cls

    @property
    def nodes(self) -> _NodeList:
        """The nodes in order (``reversed(graph.nodes)`` works too)."""
        return _NodeList(self)

    def find_nodes(self, *, op: str, target: Target = None) -> list[Node]:
        """The nodes with ``op`` (and ``target``, when given)."""
        return [n for n in self.nodes if n.op == op and (target is None or n.target == target)]

    # building ----------------------------------------------------------------------------------
    def create_node(
        self,
        op: str,
        target: Target,
        args: tuple[Argument, ...] | None = None,
        kwargs: dict[str, Argument] | None = None,
        name: str | None = None,
        type_expr: Any = None,
    ) -> Node:
        """A new node at the insertion point (the end, unless ``inserting_before/after``)."""
        target = getattr(target, "__fx_original__", target)  # a function patched while tracing
        candidate = name if name is not None else self._target_to_str(target)
        node = Node(
            self, self._namespace.create_name(candidate), op, target, args or (), kwargs or {},
            type_expr,
        )  # fmt: skip
        self._insert(node)
        self._len += 1
        return node

    @staticmethod
    def _target_to_str(target: Target) -> str:
        text = target if isinstance(target, str) else getattr(target, "__name__", "node")
        if text.startswith("__") and text.endswith("__") and len(text) > 4:
            text = text[2:-2]
        return snake_case(text)

    def placeholder(
        self, name: str, type_expr: Any = None, default_value: Any = inspect.Signature.empty
    ) -> Node:
        """An input of the generated ``forward`` (with a default when given)."""
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args, type_expr=type_expr)

    def get_attr(self, qualified_name: str, type_expr: Any = None) -> Node:
        """Read the attribute (parameter, buffer, submodule) ``qualified_name`` of the module."""
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(
        self, module_name: str, args: Any = None, kwargs: Any = None, type_expr: Any = None
    ) -> Node:
        """Call the submodule at ``module_name``."""
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(
        self, method_name: str, args: Any = None, kwargs: Any = None, type_expr: Any = None
    ) -> Node:
        """Call ``args[0].method_name(*args[1:], **kwargs)``."""
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(
        self, the_function: Callable[..., Any], args: Any = None, kwargs: Any = None,
        type_expr: Any = None,
    ) -> Node:  # fmt: skip
        """Call a free function (``autogradcli.relu``, ``operator.add``...)."""
        return self.create_node("call_function", the_function, args, kwargs, type_expr=type_expr)

    def output(self, result: Argument, type_expr: Any = None) -> Node:
        """The value ``forward`` returns."""
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    def node_copy(
        self, node: Node, arg_transform: Callable[[Node], Argument] = lambda x: x
    ) -> Node:
        """A copy of ``node`` (from any graph) with its Node arguments mapped by ``arg_transform``."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        new = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        new.meta = dict(node.meta)
        new._qualname = node._qualname
        return new

    def graph_copy(self, g: Graph, val_map: dict[Node, Node]) -> Argument:
        """Copy ``g``'s nodes but its output into this graph; the value its output returned."""
        for node in g.nodes:
            if node.op == "output":
                return map_arg(node.args[0], lambda n: val_map[n])
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __deepcopy__(self, memo: dict[int, Any]) -> Graph:
        copied = Graph(tracer_cls=self._tracer_cls)
        memo[id(self)] = copied
        val_map: dict[Node, Node] = {}
        for node in self.nodes:
            val_map[node] = copied.node_copy(node, lambda n: val_map[n])
        return copied

    def inserting_before(self, n: Node | None = None) -> _InsertPoint:
        """New nodes go before ``n`` (the start of the graph when None)."""
        if n is None:
            return self.inserting_after(self._root)
        return _InsertPoint(self, n.prepend)

    def inserting_after(self, n: Node | None = None) -> _InsertPoint:
        """New nodes go after ``n`` (the end of the graph when None)."""
        if n is None:
            return self.inserting_before(self._root)
        return _InsertPoint(self, n.append)

    # editing -----------------------------------------------------------------------------------
    def erase_node(self, to_erase: Node) -> None:
        """Remove a node that no other node uses."""
        if to_erase.users:
            raise RuntimeError(
                f"Tried to erase Node {to_erase} but it still had {len(to_erase.users)} users "
                f"in the graph: {to_erase.users}!"
            )
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        if to_erase._erased:
            return
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        to_erase._update_args_kwargs((), {})

    def eliminate_dead_code(self) -> bool:
        """Erase nodes whose values nothing uses (in-place methods kept); whether any was."""
        changed = False
        for node in reversed(self.nodes):
            if node.users or node.op in ("placeholder", "output"):
                continue
            if node.op == "call_method" and node.target.endswith("_"):
                continue
            self.erase_node(node)
            changed = True
        return changed

    def lint(self) -> None:
        """Check the graph: every input defined earlier in it, unique names, one output last,
        and (with an owning module) every module and attribute target present."""
        seen: set[Node] = set()
        names: set[str] = set()
        for node in self.nodes:
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
            for inp in node.all_input_nodes:
                if inp.graph is not self or inp._erased:
                    raise RuntimeError(f"Argument '{inp}' of Node '{node}' was used before it has been defined! Please check that Nodes in the graph are topologically ordered\n{self}")  # fmt: skip
                if inp not in seen:
                    raise RuntimeError(f"Argument '{inp}' of Node '{node}' was used before it has been defined! Please check that Nodes in the graph are topologically ordered\n{self}")  # fmt: skip
            if node.name in names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            seen.add(node)
            names.add(node.name)
            if self.owning_module is not None and node.op in ("call_module", "get_attr"):
                obj = self.owning_module
                for i, part in enumerate(node.target.split(".")):
                    if not hasattr(obj, part):
                        where = ".".join(node.target.split(".")[:i])
                        raise RuntimeError(f"Node {node} target {node.target} references nonexistent attribute {part} of {where or 'root'}")  # fmt: skip
                    obj = getattr(obj, part)

    # printing ----------------------------------------------------------------------------------
    def python_code(self, root_module: str = "self") -> PythonCode:
        """The source of ``forward`` and the globals it needs."""
        return generate_code(self, root_module)

    def __str__(self) -> str:
        lines = [line for n in self.nodes if (line := n.format_node())]
        return "graph():\n" + "\n".join("    " + line for line in lines)

    def print_tabular(self) -> None:
        """Print the nodes as a table: opcode, name, target, args, kwargs."""
        rows = [["opcode", "name", "target", "args", "kwargs"]]
        for n in self.nodes:
            rows.append(
                [
                    n.op,
                    n.name,
                    n.target if isinstance(n.target, str) else str(n.target),
                    str(n.args),
                    str(n.kwargs),
                ]
            )
        widths = [max(len(r[i]) for r in rows) for i in range(5)]
        rows.insert(1, ["-" * w for w in widths])
        for r in rows:
            print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
