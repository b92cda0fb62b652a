"""``torch.fx.Tracer`` and ``symbolic_trace``: run ``forward`` on Proxies and record a Graph."""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from types import ModuleType
from typing import Any

from ..nn import Module, Sequential
from ..nn.parameter import Parameter
from ..tensor.tensor import Tensor
from .graph import Graph
from .graph_module import GraphModule
from .node import Argument
from .patching import Patcher
from .proxy import TracerBase

__all__ = ["Tracer", "symbolic_trace"]

_UNRECORDED = (
    "autogradcli.fx: a traced value (Proxy) reached code that does not record it. Call "
    "autogradcli's functions through their namespace (autogradcli.f, autogradcli.nn.functional.f) "
    "or make the callee a leaf (autogradcli.fx.wrap, Tracer.is_leaf_module)."
)


class Tracer(TracerBase):
    """Builds a Graph by running a module's ``forward`` on Proxies; subclass and override
    ``is_leaf_module`` to choose which submodules stay single call_module nodes."""

    def __init__(
        self,
        autowrap_modules: tuple[ModuleType, ...] = (math,),
        autowrap_functions: tuple[Callable[..., Any], ...] = (),
        param_shapes_constant: bool = False,
    ) -> None:
        self._autowrap_modules = tuple(autowrap_modules)
        self._autowrap_functions = tuple(autowrap_functions)
        self.param_shapes_constant = param_shapes_constant
        self.root: Module = Module()
        self.graph = Graph()
        self._module_paths: dict[int, str] | None = None
        self._tensor_constants = 0

    def is_leaf_module(self, m: Module, module_qualified_name: str) -> bool:
        """Whether ``m`` is recorded as one call_module node rather than traced through:
        autogradcli's own layers (but Sequential) are, as torch's are in torch.fx."""
        module = type(m).__module__
        return module.startswith("autogradcli.nn") and not isinstance(m, Sequential)

    def path_of_module(self, mod: Module) -> str:
        """The qualified name of ``mod`` inside the traced root."""
        if self._module_paths is None:
            self._module_paths = {id(m): name for name, m in self.root.named_modules()}
        path = self._module_paths.get(id(mod))
        if path is None:
            raise NameError("module is not installed as a submodule")
        return path

    def call_module(
        self,
        m: Module,
        forward: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Any:
        """A submodule call: a call_module node for a leaf, otherwise traced through."""
        name = self.path_of_module(m)
        if not self.is_leaf_module(m, name):
            return forward(*args, **kwargs)
        return self.create_proxy("call_module", name, args, kwargs)

    def getattr(self, attr: str, attr_val: Any, parameter_proxy_cache: dict[str, Any]) -> Any:
        """A module attribute read while tracing: a parameter becomes a get_attr Proxy."""
        if not isinstance(attr_val, Parameter):
            return attr_val
        for name, p in self.root.named_parameters():
            if p is attr_val:
                if name not in parameter_proxy_cache:
                    parameter_proxy_cache[name] = self.create_proxy("get_attr", name, (), {})
                return parameter_proxy_cache[name]
        return attr_val

    def create_arg(self, a: Any) -> Argument:
        """As TracerBase's; a tensor of the root becomes a get_attr node, any other tensor a
        new ``_tensor_constantN`` buffer of it."""
        if isinstance(a, Tensor):
            pairs = (
                self.root.named_parameters()
                if isinstance(a, Parameter)
                else self.root.named_buffers()
            )
            for name, t in pairs:
                if t is a:
                    return self.create_node("get_attr", name, (), {})
            for name, t in vars(self.root).items():
                if t is a and name.startswith("_tensor_constant"):
                    return self.create_node("get_attr", name, (), {})
            name = f"_tensor_constant{self._tensor_constants}"
            self._tensor_constants += 1
            object.__setattr__(self.root, name, a)
            return self.create_node("get_attr", name, (), {})
        if isinstance(a, Module):
            for name, m in self.root.named_modules():
                if m is a:
                    return self.create_node("get_attr", name, (), {})
            raise NameError("module is not installed as a submodule")
        return super().create_arg(a)

    def trace(
        self, root: Module | Callable[..., Any], concrete_args: dict[str, Any] | None = None
    ) -> Graph:
        """Trace ``root`` (a Module's ``forward``, or a function) into a Graph."""
        if isinstance(root, Module):
            self.root = root
            fn = type(root).forward
        else:
            self.root = Module()
            fn = root
        self.graph = Graph(tracer_cls=type(self))
        self._module_paths = None
        args = self._placeholders(fn, isinstance(root, Module), concrete_args or {})
        patcher = Patcher()
        cache: dict[str, Any] = {}
        tracer = self
        orig_call, orig_getattr = Module.__call__, Module.__getattr__

        def module_call(mod: Module, *a: Any, **k: Any) -> Any:
            def forward(*fa: Any, **fk: Any) -> Any:
                return orig_call(mod, *fa, **fk)

            patcher.patch_globals(getattr(type(mod).forward, "__globals__", {}))
            return tracer.call_module(mod, forward, a, k)

        def module_getattr(mod: Module, attr: str) -> Any:
            return tracer.getattr(attr, orig_getattr(mod, attr), cache)

        try:
            patcher.patch_namespaces(self._autowrap_functions, self._autowrap_modules)
            patcher.patch_globals(getattr(fn, "__globals__", {}))
            patcher.set_attr(Module, "__call__", module_call)
            patcher.set_attr(Module, "__getattr__", module_getattr)
            result = fn(*args)
            returns = getattr(fn, "__annotations__", {}).get("return")
            self.create_node("output", "output", (self.create_arg(result),), {}, type_expr=returns)
        except (TypeError, RuntimeError, AttributeError) as exc:
            if "Proxy" in str(exc):
                exc.add_note(_UNRECORDED)
            raise
        finally:
            patcher.restore()
        return self.graph

    def _placeholders(
        self, fn: Callable[..., Any], is_method: bool, concrete: dict[str, Any]
    ) -> list[Any]:
        params = list(inspect.signature(fn).parameters.values())
        args: list[Any] = []
        if is_method:
            args.append(self.root)
            params = params[1:]
        for p in params:
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise NotImplementedError(
                    f"symbolic_trace: forward's *{p.name} / **{p.name} are not supported; "
                    "name the inputs"
                )
            if p.name in concrete:
                self.graph.placeholder(p.name, default_value=concrete[p.name])
                args.append(concrete[p.name])
                continue
            annotation = None if p.annotation is p.empty else p.annotation
            proxy = self.create_proxy("placeholder", p.name, (), {}, type_expr=annotation)
            if p.default is not p.empty:
                proxy.node.args = (p.default,)
            args.append(proxy)
        return args


def symbolic_trace(
    root: Module | Callable[..., Any], concrete_args: dict[str, Any] | None = None
) -> GraphModule:
    """Trace ``root`` into a GraphModule whose generated ``forward`` does the same thing."""
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = type(root).__name__ if isinstance(root, Module) else root.__name__
    return GraphModule(tracer.root, graph, name)
