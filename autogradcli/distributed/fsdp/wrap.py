"""``torch.distributed.fsdp.wrap``: which submodules FSDP wraps in their own unit.

A policy is called as ``policy(module=m, recurse=..., nonwrapped_numel=n)``: with
``recurse=True`` it says whether to look inside ``m``; with ``recurse=False`` whether to wrap
``m`` (holding ``n`` parameters not already in a wrapped descendant). Bind the options with
``functools.partial``, as PyTorch's examples do.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ...nn.attention import MultiheadAttention
from ...nn.container import ModuleDict, ModuleList
from ...nn.module import Module


def _module_wrap_policy(
    module: Module, recurse: bool, nonwrapped_numel: int, module_classes: Iterable[type]
) -> bool:
    return True if recurse else isinstance(module, tuple(module_classes))


def transformer_auto_wrap_policy(
    module: Module, recurse: bool, nonwrapped_numel: int, transformer_layer_cls: Iterable[type]
) -> bool:
    """Wrap every instance of the given layer classes (one FSDP unit per transformer block)."""
    return _module_wrap_policy(module, recurse, nonwrapped_numel, transformer_layer_cls)


def lambda_auto_wrap_policy(
    module: Module, recurse: bool, nonwrapped_numel: int, lambda_fn: Callable[[Module], bool]
) -> bool:
    """Wrap every module for which ``lambda_fn(module)`` is true."""
    return True if recurse else bool(lambda_fn(module))


def size_based_auto_wrap_policy(
    module: Module,
    recurse: bool,
    nonwrapped_numel: int,
    min_num_params: int = int(1e8),
    force_leaf_modules: set[type] | None = None,
    exclude_wrap_modules: set[type] | None = None,
) -> bool:
    """Wrap a module once its not-yet-wrapped parameters number at least ``min_num_params``;
    never look inside ``force_leaf_modules`` nor wrap ``exclude_wrap_modules`` (PyTorch's
    defaults: MultiheadAttention; ModuleList and ModuleDict)."""
    leaves = tuple(
        size_based_auto_wrap_policy.FORCE_LEAF_MODULES
        if force_leaf_modules is None
        else force_leaf_modules
    )
    excluded = tuple(
        size_based_auto_wrap_policy.EXCLUDE_WRAP_MODULES
        if exclude_wrap_modules is None
        else exclude_wrap_modules
    )
    if recurse:
        return not isinstance(module, leaves)
    return nonwrapped_numel >= min_num_params and not isinstance(module, excluded)


size_based_auto_wrap_policy.EXCLUDE_WRAP_MODULES = {ModuleList, ModuleDict}  # type: ignore[attr-defined]
size_based_auto_wrap_policy.FORCE_LEAF_MODULES = {MultiheadAttention}  # type: ignore[attr-defined]


class ModuleWrapPolicy:
    """Wrap every module of the given classes (the class form of the transformer policy)."""

    def __init__(self, module_classes: Iterable[type]) -> None:
        self._module_classes = set(module_classes)
        self._module_classes_str = str(self._module_classes)

    def __call__(self, module: Module, recurse: bool, *args: Any, **kwargs: Any) -> bool:
        return _module_wrap_policy(module, recurse, -1, self._module_classes)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._module_classes_str})"


class CustomPolicy:
    """Wrap each module for which ``lambda_fn(module)`` is truthy (a dict of per-unit kwargs is
    accepted and ignored: every unit behaves alike here)."""

    def __init__(self, lambda_fn: Callable[[Module], bool | dict[str, Any]]) -> None:
        self._lambda_fn = lambda_fn

    def __call__(self, module: Module, recurse: bool, *args: Any, **kwargs: Any) -> bool:
        return True if recurse else bool(self._lambda_fn(module))


def recursive_wrap(
    module: Module,
    policy: Callable[..., bool],
    wrap: Callable[[Module], Module],
    ignored: set[int],
    only_wrap_children: bool = False,
) -> tuple[Module, int]:
    """Replace the submodules ``policy`` selects (post-order) by ``wrap(submodule)``; returns the
    module (wrapped or not) and how many parameters ended up in wrapped units."""
    numel = sum(p.numel() for p in module.parameters() if id(p) not in ignored)
    if not policy(module=module, recurse=True, nonwrapped_numel=numel):
        return module, 0
    wrapped_numel = 0
    for name, child in list(module.named_children()):
        if id(child) in ignored:
            continue
        new, n = recursive_wrap(child, policy, wrap, ignored)
        if new is not child:
            setattr(module, name, new)
        wrapped_numel += n
    if not only_wrap_children and policy(
        module=module, recurse=False, nonwrapped_numel=numel - wrapped_numel
    ):
        return wrap(module), numel
    return module, wrapped_numel


class _WrapContext:
    kwargs: dict[str, Any] | None = None


@contextlib.contextmanager
def enable_wrap(*, wrapper_cls: Any, **wrapper_kwargs: Any) -> Iterator[None]:
    """Inside the block, ``wrap(module)`` wraps with ``wrapper_cls(module, **wrapper_kwargs)``."""
    if _WrapContext.kwargs is not None:
        raise NotImplementedError(
            "You are already within an autowrap context and we currently do not supported nested autowrap."
        )
    _WrapContext.kwargs = {"wrapper_cls": wrapper_cls, **wrapper_kwargs}
    try:
        yield
    finally:
        _WrapContext.kwargs = None


def wrap(module: Module, **wrap_overrides: Any) -> Module:
    """``module`` wrapped as ``enable_wrap`` set up, or unchanged outside such a block."""
    if _WrapContext.kwargs is None:
        return module
    kwargs = {**_WrapContext.kwargs, **wrap_overrides}
    wrapper_cls = kwargs.pop("wrapper_cls")
    return wrapper_cls(module, **kwargs)


__all__ = [
    "CustomPolicy",
    "ModuleWrapPolicy",
    "enable_wrap",
    "lambda_auto_wrap_policy",
    "size_based_auto_wrap_policy",
    "transformer_auto_wrap_policy",
    "wrap",
]
