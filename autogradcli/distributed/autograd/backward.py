"""Distributed backward: run the local graph from the roots, keep the gradients of this worker's
leaves in the context, and send the gradients of received tensors back to their senders, which
continue the backward pass from the tensors they sent (recursively, across workers)."""

from __future__ import annotations

from typing import Any

from ...autograd.engine import grad as autograd_grad
from ...autograd.node import AccumulateGrad
from ...tensor.factory import ones_like
from ...tensor.tensor import Tensor
from . import store as dist_ctx


def _leaves(roots: list[Tensor]) -> list[Tensor]:
    """The leaves that require grad from which ``roots`` were computed."""
    found: dict[int, Tensor] = {}
    seen: set[int] = set()
    stack: list[Any] = []
    for t in roots:
        if t.grad_fn is None:
            found[id(t)] = t
        else:
            stack.append(t.grad_fn)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, AccumulateGrad):
            leaf = node.variable
            if leaf is not None:
                found[id(leaf)] = leaf
            continue
        stack.extend(e[0] for e in node._next if e is not None)
    return list(found.values())


def local_backward(
    ctx: dist_ctx.DistAutogradContext, roots: list[Tensor], grads: list[Tensor]
) -> None:
    """Backward from ``roots`` with ``grads`` on this worker, then on the senders of what it used."""
    leaves = _leaves(roots)
    if not leaves:
        return
    found = autograd_grad(roots, leaves, grads, retain_graph=True, allow_unused=True)
    outgoing: dict[tuple[int, int], dict[int, Tensor]] = {}
    for leaf, g in zip(leaves, found):
        if g is None:
            continue
        edge = ctx.recvs.get(id(leaf))
        if edge is None:
            ctx.accumulate(leaf, g)
        else:
            peer, send_id, index = edge
            outgoing.setdefault((peer, send_id), {})[index] = g
    if not outgoing:
        return
    from ..rpc.api import rpc_async

    sent = [
        rpc_async(peer, _backward_from, args=(ctx.id, send_id, by_index))
        for (peer, send_id), by_index in outgoing.items()
    ]
    for fut in sent:
        fut.wait()


def _backward_from(context_id: int, send_id: int, by_index: dict[int, Tensor]) -> None:
    """On a sender: continue backward from the tensors it sent under ``send_id``."""
    ctx = dist_ctx.retrieve(context_id)
    sent = ctx.sends[send_id]
    roots, grads = [], []
    for index, g in sorted(by_index.items()):
        t = sent[index]
        if t.requires_grad:
            roots.append(t)
            grads.append(g.to(t.dtype) if g.dtype != t.dtype else g)
    prev = dist_ctx.set_current(None)  # the gradients travel outside any context
    try:
        local_backward(ctx, roots, grads)
    finally:
        dist_ctx.set_current(prev)


def seed(roots: list[Tensor]) -> list[Tensor]:
    """The gradient each root starts from: ones (torch's roots are scalars)."""
    out = []
    for r in roots:
        if not r.requires_grad:
            raise RuntimeError(
                "element 0 of tensors does not require grad and does not have a grad_fn"
            )
        out.append(ones_like(r))
    return out
