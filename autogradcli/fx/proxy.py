"""``torch.fx.Proxy``: the stand-in value that flows through ``forward`` while tracing; every
operation on it appends a Node to the tracer's graph."""

from __future__ import annotations

import dis
import inspect
import operator
from collections.abc import Iterator
from typing import Any

from ..tensor.tensor import Tensor
from .graph import Graph
from .node import Argument, Node, Target

__all__ = ["Attribute", "GraphAppendingTracer", "Proxy", "TraceError", "TracerBase"]


class TraceError(ValueError):
    """A traced value was used where its runtime value is needed (control flow, iteration)."""


class TracerBase:
    """What Proxies need of a tracer: a graph to append to and argument conversion."""

    graph: Graph

    def create_node(
        self,
        kind: str,
        target: Target,
        args: tuple[Argument, ...],
        kwargs: dict[str, Argument],
        name: str | None = None,
        type_expr: Any = None,
    ) -> Node:
        """Append a node to the graph."""
        return self.graph.create_node(kind, target, args, kwargs, name, type_expr)

    def proxy(self, node: Node) -> Proxy:
        """The Proxy for ``node``."""
        return Proxy(node, self)

    def create_proxy(
        self,
        kind: str,
        target: Target,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        name: str | None = None,
        type_expr: Any = None,
        proxy_factory_fn: Any = None,
    ) -> Proxy:
        """Record ``target(*args, **kwargs)`` as a node of kind ``kind``; its Proxy."""
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        return proxy_factory_fn(node) if proxy_factory_fn else self.proxy(node)

    def create_arg(self, a: Any) -> Argument:
        """A value as a node argument: Proxies become their Nodes, containers are walked."""
        if isinstance(a, Proxy):
            return a.node
        if isinstance(a, tuple):
            items = tuple(self.create_arg(x) for x in a)
            return type(a)(*items) if hasattr(a, "_fields") else items
        if isinstance(a, list):
            return [self.create_arg(x) for x in a]
        if isinstance(a, dict):
            out = {}
            for k, v in a.items():
                if not isinstance(k, str):
                    raise NotImplementedError(f"Keys must be str: got {k!r} of type {type(k)}")
                out[k] = self.create_arg(v)
            return out
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        return a

    def to_bool(self, obj: Proxy) -> bool:
        """A Proxy used as a condition: an error, as its value is unknown while tracing."""
        raise TraceError("symbolically traced variables cannot be used as inputs to control flow")

    def iter(self, obj: Proxy) -> Iterator[Any]:
        """A Proxy iterated: an error, as its length is unknown while tracing."""
        raise TraceError(
            "Proxy object cannot be iterated. This can be attempted when the Proxy is used in a "
            "loop or as a *args or **kwargs function argument. See the torch.fx docs on "
            "pytorch.org for a more detailed explanation of what types of control flow can be "
            "traced, and check out the Proxy docstring for help troubleshooting Proxy iteration "
            "errors"
        )

    def keys(self, obj: Proxy) -> Any:
        """``**proxy``: recorded as a ``keys`` method call."""
        return Attribute(obj, "keys")()


class GraphAppendingTracer(TracerBase):
    """A tracer that only appends to an existing ``graph`` (build Proxies over its nodes)."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.root: Any = None
        self.scope = None
        self.module_stack: dict[str, Any] = {}
        self.node_name_to_scope: dict[str, Any] = {}
        from .patching import hold_patches

        hold_patches(self)


class Proxy:
    """Stands for the value of ``node`` while tracing: operators, methods and attribute reads
    on it are recorded in ``tracer``'s graph."""

    def __init__(self, node: Node, tracer: TracerBase | None = None) -> None:
        if tracer is None:
            tracer = GraphAppendingTracer(node.graph)
        self.tracer = tracer
        self.node = node

    def __repr__(self) -> str:
        return f"Proxy({self.node.name})"

    def __getattr__(self, k: str) -> Attribute:
        if k.startswith("__") and k.endswith("__"):
            raise AttributeError(k)
        return Attribute(self, k)

    def __call__(self, *args: Any, **kwargs: Any) -> Proxy:
        return self.tracer.create_proxy("call_method", "__call__", (self, *args), kwargs)

    def __iter__(self) -> Iterator[Any]:
        frame = inspect.currentframe()
        caller = frame.f_back if frame else None
        if caller is not None:
            for inst in dis.get_instructions(caller.f_code):
                if inst.offset == caller.f_lasti:
                    if inst.opname == "UNPACK_SEQUENCE":
                        return (self[i] for i in range(inst.argval))
                    break
        return self.tracer.iter(self)

    def __bool__(self) -> bool:
        return self.tracer.to_bool(self)

    def __len__(self) -> int:
        raise RuntimeError(
            "'len' is not supported in symbolic tracing by default. If you want this call to be "
            "recorded, please call autogradcli.fx.wrap('len') at module scope"
        )

    def keys(self) -> Any:
        """``**proxy``."""
        return self.tracer.keys(self)

    __hash__ = object.__hash__


class Attribute(Proxy):
    """``proxy.name``: a method call when called, otherwise a ``getattr`` node made on use."""

    def __init__(self, root: Proxy, attr: str) -> None:
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node: Node | None = None

    @property
    def node(self) -> Node:  # type: ignore[override]
        """The ``getattr`` node, recorded the first time it is needed."""
        if self._node is None:
            self._node = self.tracer.create_proxy(
                "call_function", getattr, (self.root, self.attr), {}
            ).node
        return self._node

    def __call__(self, *args: Any, **kwargs: Any) -> Proxy:
        return self.tracer.create_proxy("call_method", self.attr, (self.root, *args), kwargs)


# ``tensor <op> proxy``: torch records the Tensor method its operator calls
_TENSOR_METHOD = {"truediv": "div", "mod": "remainder", "floordiv": "__floordiv__",
                  "and_": "__and__", "or_": "__or__", "xor": "__xor__",
                  "lshift": "__lshift__", "rshift": "__rshift__"}  # fmt: skip


def _binary(name: str, reflected: bool) -> Any:
    fn = getattr(operator, name)

    def method(self: Proxy, other: Any) -> Proxy:
        if reflected and isinstance(other, Tensor):
            method_name = _TENSOR_METHOD.get(name, name)
            return self.tracer.create_proxy("call_method", method_name, (other, self), {})
        args = (other, self) if reflected else (self, other)
        return self.tracer.create_proxy("call_function", fn, args, {})

    return method


def _unary(name: str) -> Any:
    fn = getattr(operator, name)

    def method(self: Proxy) -> Proxy:
        return self.tracer.create_proxy("call_function", fn, (self,), {})

    return method


_REFLECTABLE = ("add", "sub", "mul", "floordiv", "truediv", "mod", "pow", "lshift", "rshift",
                "and_", "or_", "xor", "matmul")  # fmt: skip
for _name in (*_REFLECTABLE, "eq", "ne", "lt", "gt", "le", "ge", "getitem"):
    _dunder = _name.rstrip("_")
    setattr(Proxy, f"__{_dunder}__", _binary(_name, False))
for _name in _REFLECTABLE:
    setattr(Proxy, f"__r{_name.rstrip('_')}__", _binary(_name, True))
for _name in ("neg", "pos", "invert", "abs"):
    setattr(Proxy, f"__{_name}__", _unary(_name))
