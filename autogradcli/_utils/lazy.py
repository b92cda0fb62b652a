"""Package attributes loaded on first use (PEP 562 ``__getattr__``/``__dir__``): ``import
autogradcli`` leaves out subsystems a training step never touches (data loading, serialization,
distributions, ...) while ``autogradcli.distributions.Normal`` and ``dir(autogradcli)`` work as
if they had been imported."""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_attributes", "star_names"]


def lazy_attributes(
    namespace: dict[str, Any], targets: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of the module whose globals are ``namespace``.

    ``targets`` maps each lazy public name to ``".sub"`` (the module ``sub`` beside it: in a
    package, its submodule) or ``".sub:attr"`` (that module's attribute ``attr``). The first
    access imports the module and stores the value in ``namespace``, so later accesses are plain
    global lookups. In a package, any other public submodule is an attribute too, imported on
    access, as it was when everything was imported eagerly (``optim.lbfgs``, as ``torch.optim``
    has). A function named like the submodule that defines it (``autograd.gradcheck``) cannot be
    lazy: importing that submodule later would bind the module over the name.
    """
    module_name, package = namespace["__name__"], namespace["__package__"]
    is_package = "__path__" in namespace

    def __getattr__(name: str) -> Any:
        target = targets.get(name)
        if target is None and is_package and _is_submodule(module_name, name):
            target = "." + name
        if target is None:
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        relative, _, attribute = target.partition(":")
        module = importlib.import_module(relative, package)
        value = getattr(module, attribute) if attribute else module
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *targets})

    return __getattr__, __dir__


def _is_submodule(package: str, name: str) -> bool:
    """Whether ``package.name`` is a public module that can be imported (without importing it)."""
    if name.startswith("_") or not name.isidentifier():
        return False
    return importlib.util.find_spec(f"{package}.{name}") is not None


def star_names(namespace: dict[str, Any], targets: Mapping[str, str]) -> list[str]:
    """An ``__all__`` for a module with lazy attributes: what ``from module import *`` took when
    everything was imported eagerly (its public globals) and the lazy functions and classes
    (``".sub:attr"`` targets, loaded by that import); lazy submodules stay out, as before."""
    names = [name for name in namespace if not name.startswith("_")]
    lazy = [name for name, target in targets.items() if ":" in target and not name.startswith("_")]
    return names + [name for name in lazy if name not in namespace]
