"""Package attributes loaded on first use (PEP 562 ``__getattr__``/``__dir__``): ``import
autogradcli`` leaves out subsystems a training step never touches (data loading, serialization,
distributions, ...) while ``autogradcli.distributions.Normal`` and ``dir(autogradcli)`` work as
if they had been imported."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_attributes"]


def lazy_attributes(
    package: str, namespace: dict[str, Any], targets: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package`` (whose globals are ``namespace``).

    ``targets`` maps each lazy public name to ``".sub"`` (the submodule ``package.sub``) or
    ``".sub:attr"`` (its attribute ``attr``). The first access imports the submodule and stores
    the value in ``namespace``, so later accesses are plain global lookups.
    """

    def __getattr__(name: str) -> Any:
        target = targets.get(name)
        if target is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module_name, _, attribute = target.partition(":")
        module = importlib.import_module(module_name, package)
        value = getattr(module, attribute) if attribute else module
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *targets})

    return __getattr__, __dir__
