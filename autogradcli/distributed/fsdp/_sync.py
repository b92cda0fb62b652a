"""The gradient averaging both FSDP front ends share: DDP's reducer over a module's parameters.

Every rank keeps the full parameters (no sharding on this engine), so FSDP's math is DDP's:
rank 0's parameters and buffers are copied to every rank at construction, and each backward
after a gradient-synchronising forward leaves every ``.grad`` holding the average over ranks.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from ...autograd.grad_mode import is_grad_enabled, no_grad
from ...backend import array_module
from ...nn.module import Module
from ...nn.parallel.distributed import _check_same_model, broadcast_coalesced
from ...nn.parallel.reducer import Reducer
from ...tensor.tensor import wrap

_NOTED: set[str] = set()


def note_once(key: str, message: str, stacklevel: int = 2) -> None:
    """A ``UserWarning`` the first time ``key`` comes up in this process (``stacklevel`` as
    seen from the caller of ``note_once``)."""
    if key not in _NOTED:
        _NOTED.add(key)
        warnings.warn(message, UserWarning, stacklevel=stacklevel + 1)


class GradSync:
    """Broadcast at construction, then average gradients over ``pg`` after each backward."""

    def __init__(self, module: Module, pg: Any, ignored: set[int]) -> None:
        named = [
            (n, p) for n, p in module.named_parameters() if p.requires_grad and id(p) not in ignored
        ]
        params = [p for _, p in named]
        self.pg = pg
        self.require_sync = True
        self.units: list[list[int]] = []
        _check_same_model(params, pg)
        if pg.size > 1:
            with no_grad():
                state = [*params, *(b for b in module.buffers() if b is not None)]
                broadcast_coalesced(state, pg, 0, "broadcast of rank 0's parameters and buffers")
        # unused parameters are allowed, as FSDP allows them
        self.reducer = (
            Reducer(params, [n for n, _ in named], pg, 25 * 1024 * 1024, True) if params else None
        )

    def zero_unused_in_units(self, units: list[list[Any]]) -> None:
        """FSDP's flat parameters: a parameter unused by a forward still gets a zero gradient
        when another parameter of its unit was used (PyTorch's FSDP does the same)."""
        if self.reducer is None:
            return
        index = {id(p): i for i, p in enumerate(self.reducer.params)}
        self.units = [[index[id(p)] for p in unit if id(p) in index] for unit in units]

    def _zero_unused(self) -> None:
        reducer = self.reducer
        used = reducer.used
        for unit in self.units:
            if any(int(used[i]) for i in unit):
                for i in unit:
                    p = reducer.params[i]
                    if not int(used[i]) and p._grad is None:
                        p._grad = wrap(array_module(p._data).zeros_like(p._data))

    def run(self, call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``call(*args, **kwargs)``, arming the reducer when a synchronised backward may follow."""
        reducer = self.reducer
        sync = reducer is not None and is_grad_enabled() and self.require_sync
        if sync:
            reducer.prepare_check()
        out = call(*args, **kwargs)
        if sync:
            reducer.prepare(out)
            if self.units and reducer.used is not None:
                self._zero_unused()
        elif reducer is not None:
            reducer.cancel()
        return out


def ignored_ids(ignored_modules: Any, ignored_states: Any) -> set[int]:
    """Ids of the ignored modules, their parameters, and any ignored parameters given directly."""
    out: set[int] = set()
    for item in [*(ignored_modules or ()), *(ignored_states or ())]:
        out.add(id(item))
        if isinstance(item, Module):
            out.update(id(m) for m in item.modules())
            out.update(id(p) for p in item.parameters())
    return out


__all__ = ["GradSync", "ignored_ids", "note_once"]
