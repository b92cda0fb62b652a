"""``torch.distributed.optim.DistributedOptimizer``: one local optimizer on each worker that owns
some of the parameters, stepped with that worker's gradients of a distributed autograd context."""

from __future__ import annotations

import threading
from typing import Any

from ..autograd import store as _context
from ..rpc import api

__all__ = ["DistributedOptimizer"]


class _LocalOptimizer:
    """The optimizer over one worker's parameters; steps are serialized on that worker."""

    _lock = threading.Lock()

    def __init__(self, optimizer_class: Any, rrefs: list[Any], args: tuple, kwargs: dict) -> None:
        self.params = [r.local_value() for r in rrefs]
        self.optim = optimizer_class(self.params, *args, **kwargs)

    def step(self, context_id: int) -> None:
        """One step with the context's gradients (``.grad`` is restored after)."""
        grads = _context.retrieve(context_id).grads
        with _LocalOptimizer._lock:
            saved = [p.grad for p in self.params]
            try:
                for p in self.params:
                    entry = grads.get(id(p))
                    p.grad = None if entry is None else entry[1]
                self.optim.step()
            finally:
                for p, g in zip(self.params, saved):
                    p.grad = g


def _local_step(optimizer_rref: Any, context_id: int) -> None:
    optimizer_rref.local_value().step(context_id)


class DistributedOptimizer:
    """``optimizer_class(params, *args, **kwargs)`` on each owner of ``params_rref``;
    ``step(context_id)`` steps them all with the context's gradients."""

    def __init__(
        self, optimizer_class: Any, params_rref: list[Any], *args: Any, **kwargs: Any
    ) -> None:
        by_owner: dict[int, list[Any]] = {}
        for rref in params_rref:
            by_owner.setdefault(rref.owner().id, []).append(rref)
        self.remote_optimizers = [
            api.remote(owner, _LocalOptimizer, args=(optimizer_class, rrefs, args, kwargs))
            for owner, rrefs in by_owner.items()
        ]

    def step(self, context_id: int) -> None:
        """One step of every worker's optimizer with its gradients in ``context_id``."""
        _context.retrieve(context_id)
        pending = [
            api.rpc_async(o.owner(), _local_step, args=(o, context_id))
            for o in self.remote_optimizers
        ]
        for fut in pending:
            fut.wait()
