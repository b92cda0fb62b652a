"""``torch.fx.GraphModule``: a Module holding a Graph, the submodules and tensors it reads,
and a ``forward`` generated from it (``.code``)."""

from __future__ import annotations

import copy
import itertools
import linecache
from typing import Any

from ..nn import Module
from ..nn.parameter import Parameter
from ..tensor.tensor import Tensor
from .codegen import PythonCode
from .graph import Graph

__all__ = ["GraphModule"]

_SOURCE_IDS = itertools.count()


def _copy_attr(from_module: Module, to_module: Module, target: str) -> None:
    """Make ``to_module.<target>`` the object at ``from_module.<target>``, creating empty
    Modules for the missing parents."""
    *prefix, field = target.split(".")
    for item in prefix:
        f = getattr(from_module, item)
        t = getattr(to_module, item, None)
        if f is t:
            return
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        from_module, to_module = f, t
    value = getattr(from_module, field)
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        to_module.register_buffer(field, value)
    else:
        setattr(to_module, field, value)


def _assign_attr(value: Any, to_module: Module, target: str) -> None:
    *prefix, field = target.split(".")
    for item in prefix:
        t = getattr(to_module, item, None)
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        to_module = t
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        to_module.register_buffer(field, value)
    else:
        setattr(to_module, field, value)


class GraphModule(Module):
    """A Module built from ``root`` (a Module, or a dict of attributes) and ``graph``: calling
    it runs the code generated from the graph."""

    def __new__(cls, *args: Any, **kwargs: Any) -> GraphModule:
        # each instance gets its own class, so its generated forward is a class attribute
        base = next(c for c in cls.__mro__ if "_fx_impl" not in c.__dict__)

        class GraphModuleImpl(base):  # type: ignore[misc, valid-type]
            _fx_impl = True

        return super().__new__(GraphModuleImpl)

    def __init__(
        self, root: Module | dict[str, Any], graph: Graph, class_name: str = "GraphModule"
    ) -> None:
        super().__init__()
        type(self).__name__ = class_name
        if isinstance(root, Module):
            self.training = root.training
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if node.target not in root:
                        raise RuntimeError(f"Node {node} referenced target {node.target} but that target was not provided in ``root``!")  # fmt: skip
                    _assign_attr(root[node.target], self, node.target)
        else:
            raise RuntimeError("Unsupported type " + str(root) + " passed for root!")
        self.graph = graph

    @property
    def graph(self) -> Graph:
        """The graph; setting it regenerates ``forward``."""
        return self.__dict__["_graph"]

    @graph.setter
    def graph(self, g: Graph) -> None:
        self.__dict__["_graph"] = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self) -> str:
        """The Python source of the generated ``forward``."""
        return self.__dict__["_code"]

    def recompile(self) -> PythonCode:
        """Regenerate ``forward`` from ``self.graph`` (after editing the graph)."""
        python_code = self.graph.python_code(root_module="self")
        src = python_code.src
        filename = f"<eval_with_key>.{next(_SOURCE_IDS)}"
        linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
        namespace = dict(python_code.globals)
        exec(compile(src, filename, "exec"), namespace)
        self.__dict__["_code"] = src
        type(self).forward = namespace["forward"]
        return python_code

    def __deepcopy__(self, memo: dict[int, Any]) -> GraphModule:
        res = type(self).__new__(type(self))
        memo[id(self)] = res
        state = {k: v for k, v in self.__dict__.items() if k not in ("_graph", "_code")}
        res.__dict__.update(copy.deepcopy(state, memo))
        type(res).__name__ = "GraphModule"  # as torch's copies are named
        res.graph = copy.deepcopy(self.graph, memo)
        return res

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise TypeError(
            f"cannot pickle {type(self).__name__}: a GraphModule's forward is generated code, and "
            "autogradcli never loads code from a file; save gm.state_dict() and trace the model "
            "again when loading"
        )

    def add_submodule(self, target: str, m: Module) -> bool:
        """Install ``m`` at the dotted ``target``, creating empty parents; False if a parent
        on the path is not a Module."""
        *prefix, field = target.split(".")
        mod: Module = self
        for item in prefix:
            sub = getattr(mod, item, None)
            if sub is None:
                sub = Module()
                mod.add_module(item, sub)
            if not isinstance(sub, Module):
                return False
            mod = sub
        mod.add_module(field, m)
        return True

    def delete_submodule(self, target: str) -> bool:
        """Remove the submodule at ``target``; False if there is none."""
        *prefix, field = target.split(".")
        mod: Any = self
        for item in prefix:
            mod = getattr(mod, item, None)
            if not isinstance(mod, Module):
                return False
        if field not in mod._modules:
            return False
        delattr(mod, field)
        return True

    def delete_all_unused_submodules(self) -> None:
        """Remove every submodule no call_module or get_attr node uses."""
        used: set[str] = set()
        for node in self.graph.nodes:
            if node.op in ("call_module", "get_attr"):
                parts = node.target.split(".")
                used.update(".".join(parts[: i + 1]) for i in range(len(parts)))
                if node.op == "call_module":
                    sub = self.get_submodule(node.target)
                    used.update(f"{node.target}.{n}" for n, _ in sub.named_modules() if n)
        for name, _ in list(self.named_modules()):
            if name and name not in used:
                self.delete_submodule(name)

    def print_readable(self, print_output: bool = True) -> str:
        """The generated code as a class, printed (and returned)."""
        lines = self.code.rstrip().split("\n")
        body = lines[next(i for i, ln in enumerate(lines) if ln.startswith("def forward")) :]
        inner = [body[0], "    # No stacktrace found for following nodes", *body[1:]]
        text = f"class {type(self).__name__}(autogradcli.nn.Module):\n"
        text += "".join(f"    {ln}\n" for ln in inner)
        if print_output:
            print(text)
        return text

    def __str__(self) -> str:
        return (
            super().__repr__()
            + "\n"
            + self.code
            + "\n# To see more debug info, please use `graph_module.print_readable()`"
        )
