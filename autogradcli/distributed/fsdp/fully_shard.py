"""FSDP2's ``fully_shard``: the module itself becomes an ``FSDPModule`` (its class gains the
FSDP methods) instead of being wrapped, so names and state-dict keys stay the module's own.

As with ``FullyShardedDataParallel``, every rank keeps the full parameters and the outermost
``fully_shard``-ed module averages the gradients across ranks after backward.
"""

from __future__ import annotations

from typing import Any

from ...nn.module import Module
from ..process_group import _require
from ._sync import GradSync, ignored_ids, note_once
from .api import MixedPrecisionPolicy, OffloadPolicy


class FSDPModule:
    """Mixed into a module's class by ``fully_shard``: the FSDP2 methods."""

    _fsdp_sync: GradSync | None

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        sync = self.__dict__.get("_fsdp_sync")
        call = super().forward  # type: ignore[misc]
        return call(*args, **kwargs) if sync is None else sync.run(call, *args, **kwargs)

    def set_requires_gradient_sync(
        self, requires_gradient_sync: bool, *, recurse: bool = True
    ) -> None:
        """Whether the next backward averages gradients (False accumulates them locally)."""
        sync = self.__dict__.get("_fsdp_sync")
        if sync is not None:
            sync.require_sync = requires_gradient_sync

    def unshard(self, async_op: bool = False) -> None:
        """Gather the full parameters (they always are full here)."""
        return None

    def reshard(self) -> None:
        """Free the gathered parameters (nothing to free here)."""
        return None

    def set_reshard_after_forward(self, reshard_after_forward: bool, recurse: bool = True) -> None:
        """A scheduling hint; accepted."""

    def set_reshard_after_backward(
        self, reshard_after_backward: bool, *, recurse: bool = True
    ) -> None:
        """A scheduling hint; accepted."""

    def set_modules_to_forward_prefetch(self, modules: list[Any]) -> None:
        """A scheduling hint; accepted."""

    def set_modules_to_backward_prefetch(self, modules: list[Any]) -> None:
        """A scheduling hint; accepted."""


_CLASSES: dict[type, type] = {}


def fully_shard(
    module: Module,
    *,
    mesh: Any = None,
    reshard_after_forward: bool | int | None = None,
    shard_placement_fn: Any = None,
    mp_policy: MixedPrecisionPolicy = MixedPrecisionPolicy(),  # noqa: B008
    offload_policy: OffloadPolicy = OffloadPolicy(),  # noqa: B008
    ignored_params: set[Any] | None = None,
) -> Module:
    """Make ``module`` (in place, and returned) an ``FSDPModule`` averaging gradients across
    ranks; call it on the blocks first, then on the whole model, as PyTorch's examples do."""
    pg = _require()
    cls = type(module)
    if not isinstance(module, FSDPModule):
        new = _CLASSES.get(cls)
        if new is None:
            new = type(f"FSDP{cls.__name__}", (FSDPModule, cls), {})
            _CLASSES[cls] = new
        module.__class__ = new
    for m in module.modules():
        if m is not module and isinstance(m, FSDPModule):
            m.__dict__["_fsdp_sync"] = None
    note_once(
        "fully_shard",
        "fully_shard: autogradcli keeps the full parameters on every rank (no sharding); "
        "training is identical, without the memory saving",
    )
    if any(d is not None for d in (mp_policy.param_dtype, mp_policy.reduce_dtype)):
        note_once(
            "mp_policy",
            "fully_shard: MixedPrecisionPolicy is accepted; forward, backward and the gradient "
            "average run in the parameters' own dtype",
        )
    module.__dict__["_fsdp_sync"] = GradSync(module, pg, ignored_ids(None, ignored_params))
    return module


__all__ = ["FSDPModule", "fully_shard"]
