"""Distributed autograd contexts: per context id, the gradients accumulated on this worker and
both halves of every RPC edge that carried tensors requiring grad (sends and receives)."""

from __future__ import annotations

import itertools
import threading
from typing import Any

from ...tensor.tensor import Tensor

_contexts: dict[int, DistAutogradContext] = {}
_lock = threading.Lock()
_local = threading.local()
_ids = itertools.count(1)


class DistAutogradContext:
    """One context on this worker: ``grads`` (leaf -> gradient), ``sends`` and ``recvs``."""

    def __init__(self, context_id: int) -> None:
        self.id = context_id
        self.lock = threading.Lock()
        self.grads: dict[int, tuple[Tensor, Tensor]] = {}  # id(leaf) -> (leaf, gradient)
        self.sends: dict[int, list[Tensor]] = {}  # send id -> the tensors sent
        self.recvs: dict[int, tuple[int, int, int]] = {}  # id(leaf) -> (worker, send id, index)
        self.recv_leaves: list[Tensor] = []  # keeps the received leaves alive
        self.peers: set[int] = set()
        self._send_ids = itertools.count()

    def record_send(self, tensors: list[Tensor], peer: int) -> int:
        """Keep ``tensors`` sent to ``peer``; the id their gradients will come back under."""
        with self.lock:
            send_id = next(self._send_ids)
            self.sends[send_id] = tensors
            self.peers.add(peer)
        return send_id

    def record_recv(self, peer: int, send_id: int, leaves: list[Tensor]) -> None:
        """Note that ``leaves`` stand for tensors ``peer`` sent under ``send_id``."""
        with self.lock:
            self.peers.add(peer)
            for i, leaf in enumerate(leaves):
                self.recvs[id(leaf)] = (peer, send_id, i)
            self.recv_leaves.extend(leaves)

    def accumulate(self, leaf: Tensor, grad: Tensor) -> None:
        """Add ``grad`` to the context's gradient of ``leaf``."""
        with self.lock:
            old = self.grads.get(id(leaf))
            self.grads[id(leaf)] = (leaf, grad if old is None else old[1] + grad)


def new_context(worker_id: int) -> DistAutogradContext:
    """A fresh context whose id is unique across workers (the worker id in the high bits)."""
    ctx = DistAutogradContext((worker_id << 48) | next(_ids))
    with _lock:
        _contexts[ctx.id] = ctx
    return ctx


def get_or_create(context_id: int) -> DistAutogradContext:
    """The context ``context_id`` on this worker, made when an RPC first brings it here."""
    with _lock:
        ctx = _contexts.get(context_id)
        if ctx is None:
            ctx = _contexts[context_id] = DistAutogradContext(context_id)
        return ctx


def retrieve(context_id: int) -> DistAutogradContext:
    """The context ``context_id`` (RuntimeError, as torch, when there is none)."""
    ctx = _contexts.get(context_id)
    if ctx is None:
        raise RuntimeError(f"Could not find autograd context with id: {context_id}")
    return ctx


def release(context_id: int) -> DistAutogradContext | None:
    """Forget the context here; the released one, or None when it was not here."""
    with _lock:
        return _contexts.pop(context_id, None)


def current() -> DistAutogradContext | None:
    """The context this thread runs in (set by ``context()`` and by RPC handlers)."""
    return getattr(_local, "ctx", None)


def set_current(ctx: DistAutogradContext | None) -> Any:
    """Make ``ctx`` this thread's context; returns the previous one."""
    prev = getattr(_local, "ctx", None)
    _local.ctx = ctx
    return prev
