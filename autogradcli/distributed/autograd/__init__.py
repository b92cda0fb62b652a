"""``torch.distributed.autograd``: ``context()``, ``backward(context_id, roots)`` and
``get_gradients(context_id)`` across the workers an RPC forward pass went through."""

from __future__ import annotations

from typing import Any

from ...tensor.tensor import Tensor
from . import store as _context
from .backward import local_backward as _local_backward
from .backward import seed as _seed

__all__ = ["backward", "context", "get_gradients"]


class context:
    """``with context() as context_id:``: RPCs made inside record what backward needs."""

    def __enter__(self) -> int:
        from ..rpc.api import current_agent

        if _context.current() is not None:
            raise RuntimeError("Already have an autograd context id for this thread.")
        self._ctx = _context.new_context(current_agent().info.id)
        _context.set_current(self._ctx)
        return self._ctx.id

    def __exit__(self, *exc: object) -> None:
        _context.set_current(None)
        _release(self._ctx.id, -1)


def _release(context_id: int, sender: int) -> None:
    """Drop the context here and on every worker it exchanged tensors with."""
    from ..rpc.api import current_agent, is_initialized

    ctx = _context.release(context_id)
    if ctx is None or not is_initialized():
        return
    me = current_agent()
    for peer in ctx.peers - {sender, me.info.id}:
        me.call(peer, _release, (context_id, me.info.id), {})


def backward(context_id: int, roots: list[Tensor], retain_graph: bool = False) -> None:
    """Backward from ``roots`` (scalars) through this worker and every worker that the context's
    RPCs reached; gradients go to ``get_gradients``, never to ``.grad``."""
    ctx = _context.retrieve(context_id)
    roots = list(roots)
    prev = _context.set_current(None)
    try:
        _local_backward(ctx, roots, _seed(roots))
    finally:
        _context.set_current(prev)


def get_gradients(context_id: int) -> dict[Tensor, Any]:
    """This worker's gradients in the context: {leaf tensor: gradient}."""
    ctx = _context.retrieve(context_id)
    with ctx.lock:
        return {leaf: g for leaf, g in ctx.grads.values()}
