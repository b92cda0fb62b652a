"""``torch.fx.Node``: one operation of a Graph, with its arguments and the nodes that use it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .graph import Graph

__all__ = ["Argument", "Node", "Target", "map_aggregate", "map_arg"]

Argument = Any
Target = Any
OPCODES = (
    "placeholder",
    "call_method",
    "call_module",
    "call_function",
    "get_attr",
    "output",
    "root",
)


def map_aggregate(a: Argument, fn: Callable[[Argument], Argument]) -> Argument:
    """``fn`` applied to every leaf of ``a``, keeping tuples, lists, dicts and slices."""
    if isinstance(a, tuple):
        mapped = tuple(map_aggregate(elem, fn) for elem in a)
        return type(a)(*mapped) if hasattr(a, "_fields") else mapped
    if isinstance(a, list):
        return [map_aggregate(elem, fn) for elem in a]
    if isinstance(a, dict):
        return {k: map_aggregate(v, fn) for k, v in a.items()}
    if isinstance(a, slice):
        return slice(*(map_aggregate(p, fn) for p in (a.start, a.stop, a.step)))
    return fn(a)


def map_arg(a: Argument, fn: Callable[[Node], Argument]) -> Argument:
    """``fn`` applied to every Node inside ``a``."""
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def type_repr(t: Any) -> str:
    """An annotation as the graph prints it: ``autogradcli.Tensor``, ``int``, ``typing.X``."""
    if isinstance(t, type):
        return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"
    return repr(t)


def _format_arg(arg: Argument) -> str:
    if isinstance(arg, Node):
        return "%" + arg.name
    if isinstance(arg, tuple):
        inner = ", ".join(_format_arg(a) for a in arg)
        return f"({inner},)" if len(arg) == 1 else f"({inner})"
    if isinstance(arg, list):
        return "[" + ", ".join(_format_arg(a) for a in arg) + "]"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k}: {_format_arg(v)}" for k, v in arg.items()) + "}"
    return str(arg)


class Node:
    """An operation (``op``: placeholder, get_attr, call_function, call_module, call_method or
    output) on ``target`` with ``args``/``kwargs``; ``users`` are the nodes that read it."""

    def __init__(
        self,
        graph: Graph,
        name: str,
        op: str,
        target: Target,
        args: tuple[Argument, ...],
        kwargs: dict[str, Argument],
        return_type: Any = None,
    ) -> None:
        if op not in OPCODES:
            raise ValueError(f"Unknown node op {op!r}; expected one of {OPCODES}")
        if op in ("call_method", "call_module", "get_attr") and not isinstance(target, str):
            raise ValueError(
                f"Node [graph = {graph}, name = '{name}'] target {target} has type "
                f"{type(target)} but a str is expected for {op}"
            )
        if op == "call_function" and not callable(target):
            raise ValueError(
                f"Node [graph = {graph}, name = '{name}'] target {target} has type "
                f"{type(target)} but a Callable is expected"
            )
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self.type = return_type
        self.users: dict[Node, None] = {}
        self.meta: dict[str, Any] = {}
        self._input_nodes: dict[Node, None] = {}
        self._args: tuple[Argument, ...] = ()
        self._kwargs: dict[str, Argument] = {}
        self._prev: Node = self
        self._next: Node = self
        self._erased = False
        self._qualname: str | None = None  # the public path a traced call went through
        self._update_args_kwargs(args, kwargs)

    # arguments -------------------------------------------------------------------------------
    @property
    def args(self) -> tuple[Argument, ...]:
        """The positional arguments (Nodes stand for other nodes' values)."""
        return self._args

    @args.setter
    def args(self, value: tuple[Argument, ...]) -> None:
        self._update_args_kwargs(value, self._kwargs)

    @property
    def kwargs(self) -> dict[str, Argument]:
        """The keyword arguments."""
        return self._kwargs

    @kwargs.setter
    def kwargs(self, value: dict[str, Argument]) -> None:
        self._update_args_kwargs(self._args, value)

    @property
    def all_input_nodes(self) -> list[Node]:
        """Every Node this one reads, in order of first appearance."""
        return list(self._input_nodes)

    def update_arg(self, idx: int, arg: Argument) -> None:
        """Set ``args[idx]``."""
        args = list(self._args)
        args[idx] = arg
        self.args = tuple(args)

    def update_kwarg(self, key: str, arg: Argument) -> None:
        """Set ``kwargs[key]``."""
        self.kwargs = {**self._kwargs, key: arg}

    def _update_args_kwargs(self, args: tuple[Argument, ...], kwargs: dict[str, Argument]) -> None:
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._input_nodes = {}
        seen = self._input_nodes

        def collect(n: Node) -> Node:
            seen.setdefault(n)
            return n

        self._args = map_arg(tuple(args), collect)
        self._kwargs = map_arg(dict(kwargs), collect)
        for n in self._input_nodes:
            n.users.setdefault(self)

    def replace_input_with(self, old_input: Node, new_input: Node) -> None:
        """Every use of ``old_input`` in this node's arguments becomes ``new_input``."""

        def swap(n: Node) -> Node:
            return new_input if n is old_input else n

        self._update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    def replace_all_uses_with(
        self,
        replace_with: Node,
        delete_user_cb: Callable[[Node], bool] = lambda user: True,
        *,
        propagate_meta: bool = False,
    ) -> list[Node]:
        """Make every user of this node read ``replace_with`` instead; the users changed."""
        if propagate_meta:
            for k, v in self.meta.items():
                replace_with.meta.setdefault(k, v)
        changed = [u for u in list(self.users) if delete_user_cb(u)]
        for user in changed:
            user.replace_input_with(self, replace_with)
        return changed

    # the list of nodes -----------------------------------------------------------------------
    @property
    def next(self) -> Node:
        """The node after this one in the graph."""
        return self._next

    @property
    def prev(self) -> Node:
        """The node before this one in the graph."""
        return self._prev

    def prepend(self, x: Node) -> None:
        """Move ``x`` to just before this node."""
        if x is self:
            return
        x._remove_from_list()
        p = self._prev
        p._next, x._prev, x._next, self._prev = x, p, self, x

    def append(self, x: Node) -> None:
        """Move ``x`` to just after this node."""
        self._next.prepend(x)

    def _remove_from_list(self) -> None:
        p, n = self._prev, self._next
        p._next, n._prev = n, p

    # printing --------------------------------------------------------------------------------
    def format_node(self) -> str | None:
        """The line of ``str(graph)`` for this node."""
        if self.op == "output":
            return f"return {self.args[0]}"
        typed = f"{type_repr(self.type)} " if self.type is not None else ""
        head = f"%{self.name} : {typed}[num_users={len(self.users)}] = {self.op}[target={self._pretty_target()}]"
        if self.op == "placeholder":
            return head + (f"(default={self.args[0]})" if self.args else "")
        if self.op == "get_attr":
            return head
        return f"{head}(args = {_format_arg(self.args)}, kwargs = {_format_arg(self.kwargs)})"

    def _pretty_target(self) -> str:
        if isinstance(self.target, str):
            return self.target
        from .names import qualified_name

        return self._qualname or qualified_name(self.target)

    def __repr__(self) -> str:
        return self.name
