"""The Python source of a Graph's ``forward``, as torch.fx generates it: one line per node, each
value set to None after its last use."""

from __future__ import annotations

import builtins
import math
import operator
import sys
import typing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..backend import Device
from .names import Namespace, qualified_name
from .node import Argument, Node

if TYPE_CHECKING:
    from .graph import Graph

__all__ = ["BINARY_SYMBOLS", "UNARY_SYMBOLS", "PythonCode", "generate_code", "last_uses"]

BINARY_SYMBOLS = {
    "add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%",
    "pow": "**", "matmul": "@", "lshift": "<<", "rshift": ">>", "and_": "&", "or_": "|",
    "xor": "^", "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
}  # fmt: skip
UNARY_SYMBOLS = {"neg": "-", "pos": "+", "invert": "~"}


@dataclass
class PythonCode:
    """The generated source and the globals it runs with."""

    src: str
    globals: dict[str, Any]


def attribute_path(base: str, target: str) -> str:
    """``self.a.b``, with ``getattr(self.seq, "0")`` for parts that are not identifiers."""
    expr = base
    for part in target.split("."):
        expr = f"{expr}.{part}" if part.isidentifier() else f'getattr({expr}, "{part}")'
    return expr


class _Emitter:
    def __init__(self, graph: Graph) -> None:
        self.globals: dict[str, Any] = {
            "autogradcli": sys.modules["autogradcli"],  # loaded: fx is one of its namespaces
            "inf": math.inf,
            "nan": math.nan,
            "device": Device,
            "NoneType": type(None),
        }
        self.wrap_lines: list[str] = []
        self.names = Namespace()
        for node in graph.nodes:
            self.names.create_name(node.name, node)

    def function_name(self, node: Node) -> str:
        fn = node.target
        qual = node._qualname or qualified_name(fn)
        wrapped = bool(node.meta.get("is_wrapped"))
        if qual.startswith("builtins.") and getattr(builtins, fn.__name__, None) is fn:
            if wrapped:
                self._wrap_line(fn.__name__)
            return fn.__name__
        if qual.startswith("autogradcli.") and self._resolves(qual, fn):
            return qual
        if qual.startswith("operator."):
            qual = "_" + qual  # operator's functions live in _operator
        name = self.names.create_name(qual.replace(".", "_"), fn)
        self.globals[name] = fn
        if wrapped:
            self._wrap_line(name)
        return name

    def _wrap_line(self, name: str) -> None:
        line = f'autogradcli.fx._symbolic_trace.wrap("{name}")'
        if line not in self.wrap_lines:
            self.wrap_lines.append(line)

    def _resolves(self, path: str, fn: Any) -> bool:
        head, *rest = path.split(".")
        obj = self.globals.get(head)
        for part in rest:
            obj = getattr(obj, part, None)
        return getattr(obj, "__fx_original__", obj) is fn

    def arg(self, a: Argument) -> str:
        if isinstance(a, Node):
            return a.name
        if isinstance(a, tuple) and not hasattr(a, "_fields"):
            inner = ", ".join(self.arg(x) for x in a)
            return f"({inner},)" if len(a) == 1 else f"({inner})"
        if isinstance(a, list):
            return "[" + ", ".join(self.arg(x) for x in a) + "]"
        if isinstance(a, dict):
            return "{" + ", ".join(f"{k!r}: {self.arg(v)}" for k, v in a.items()) + "}"
        if isinstance(a, slice):
            return f"slice({self.arg(a.start)}, {self.arg(a.stop)}, {self.arg(a.step)})"
        if isinstance(a, float) and not math.isfinite(a):
            return "-inf" if a < 0 else ("inf" if a > 0 else "nan")
        return repr(a)

    def annotation(self, t: Any, sep: str) -> str:
        """``sep`` + the annotation ``t`` as code (its names made globals), or "" for none."""
        if t is None:
            return ""
        if isinstance(t, str):
            name = self.names.create_name("_" + t, ("annotation", t))
            self.globals[name] = t
            return sep + name
        if isinstance(t, type):
            if t.__module__ == "builtins":
                return sep + t.__qualname__
            path = f"{t.__module__}.{t.__qualname__}"
            if path.startswith("autogradcli.") and self._resolves(path, t):
                return sep + path
            name = self.names.create_name(path.replace(".", "_"), t)
            self.globals[name] = t
            return sep + name
        origin, args = getattr(t, "__origin__", None), getattr(t, "__args__", ())
        if origin is None:
            return ""
        name = self.names.create_name(
            f"typing_{getattr(origin, '_name', None) or origin.__name__}", origin
        )
        self.globals[name] = getattr(typing, getattr(origin, "_name", "") or "", origin)
        inner = ",".join(self.annotation(a, "") or "typing.Any" for a in args)
        return f"{sep}{name}[{inner}]"

    def call_args(self, args: tuple[Argument, ...], kwargs: dict[str, Argument]) -> str:
        parts = [self.arg(a) for a in args] + [f"{k} = {self.arg(v)}" for k, v in kwargs.items()]
        return ", ".join(parts)

    def expression(self, node: Node) -> str:
        op, target, args, kwargs = node.op, node.target, node.args, node.kwargs
        if op == "get_attr":
            return attribute_path("self", target)
        if op == "call_module":
            return f"{attribute_path('self', target)}({self.call_args(args, kwargs)})"
        if op == "call_method":
            return f"{self.arg(args[0])}.{target}({self.call_args(args[1:], kwargs)})"
        name = getattr(target, "__name__", "")
        if getattr(operator, name, None) is target and not kwargs:
            if name in BINARY_SYMBOLS and len(args) == 2:
                return f"{self.arg(args[0])} {BINARY_SYMBOLS[name]} {self.arg(args[1])}"
            if name in UNARY_SYMBOLS and len(args) == 1:
                return f"{UNARY_SYMBOLS[name]}{self.arg(args[0])}"
            if name == "getitem" and len(args) == 2:
                return f"{self.arg(args[0])}[{self.arg(args[1])}]"
        attr = args[1] if target is getattr and len(args) == 2 and not kwargs else None
        if isinstance(attr, str) and attr.isidentifier():
            return f"{self.arg(args[0])}.{args[1]}"
        return f"{self.function_name(node)}({self.call_args(args, kwargs)})"


def last_uses(graph: Graph) -> dict[Node, list[Node]]:
    """Each node -> the values whose last reader it is (freed after it runs)."""
    seen: set[Node] = set()
    freed: dict[Node, list[Node]] = {}
    for node in reversed(graph.nodes):
        for inp in node.all_input_nodes:
            if inp not in seen:
                seen.add(inp)
                freed.setdefault(node, []).append(inp)
    return freed


def generate_code(graph: Graph, root_module: str = "self") -> PythonCode:
    """The ``def forward(self, ...)`` source of ``graph`` and its globals."""
    emit = _Emitter(graph)
    freed = last_uses(graph)
    params: list[str] = []
    body: list[str] = []
    for node in graph.nodes:
        if node.op == "placeholder":
            target = node.target
            param = target + emit.annotation(node.type, " : ")
            if node.args and not target.startswith("*"):
                param = f"{param} = {emit.arg(node.args[0])}"
            params.append(param)
            if target.lstrip("*") != node.name:
                body.append(f"{node.name} = {target.lstrip('*')}")
            continue
        if node.op == "output":
            body.append(f"return {emit.arg(node.args[0])}")
            continue
        line = f"{node.name} = {emit.expression(node)}"
        dead = list(freed.get(node, []))
        if not node.users:
            dead.append(node)
        if dead:
            line += ";  " + " = ".join(n.name for n in dead) + " = None"
        body.append(line)
    if not body:
        body.append("pass")
    signature = ", ".join([root_module, *params])
    outputs = [n for n in graph.nodes if n.op == "output"]
    signature += ")" + (emit.annotation(outputs[0].type, " -> ") if outputs else "")
    head = "\n" + "\n".join(emit.wrap_lines) + "\n\n" if emit.wrap_lines else "\n\n\n"
    src = f"{head}def forward({signature}:\n" + "".join(f"    {b}\n" for b in body) + "    "
    return PythonCode(src, emit.globals)
