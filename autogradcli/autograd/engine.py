"""The backward engine: iterative, deterministic, each node run once with its gradients summed.

Two passes, as in Chainer and PyTorch: discovery counts each node's incoming edges, then nodes
run from a heap keyed by creation order (latest first), each as soon as every consumer of its
outputs has contributed. No recursion, so graphs of any depth work.

``run_backward`` is the engine; ``_run_plain`` is its loop for the common call (``.backward()``
with no ``inputs``: nothing captured, nothing pruned). What happens at a node beyond the common
path is in engine_steps.py; the user-facing ``backward()`` and ``grad()`` are in backward_api.py.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Any

from ..tensor.tensor import Tensor, wrap
from .engine_steps import (
    _accumulate,
    _all_none,
    _check_count,
    _materialize,
    _maybe_shared,
    _special,
    _validate,
)
from .grad_mode import STATE
from .node import AccumulateGrad, edge_to


def _needed_nodes(roots: list[Any], targets: set[Any]) -> set[Any]:
    """Nodes from which some target node can be reached (iterative post-order)."""
    needed: set[Any] = set()
    done: set[Any] = set()
    stack = [(r, False) for r in roots]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            done.add(node)
            if node in targets or any(e is not None and e[0] in needed for e in node._next):
                needed.add(node)
            continue
        if node in done:
            continue
        stack.append((node, True))
        stack.extend((e[0], False) for e in node._next if e is not None and e[0] not in done)
    return needed


def run_backward(
    roots: Sequence[Tensor],
    root_grads: Sequence[Tensor],
    keep_graph: bool,
    create_graph: bool,
    capture: Sequence[Tensor] | None = None,
) -> list[Tensor | None] | None:
    """Propagate ``root_grads`` from ``roots``.

    Without ``capture``, every reachable node runs and the leaves accumulate into ``.grad``
    (``_run_plain``). With it, only the nodes leading to a tensor of ``capture`` run, nothing is
    accumulated, and the gradients reaching those tensors are returned, in ``capture``'s order.
    """
    root_edges = [edge_to(t) for t in roots]
    root_nodes = []
    for e in root_edges:
        if e[0] not in root_nodes:
            root_nodes.append(e[0])

    if capture is None:
        _run_plain(root_nodes, root_edges, root_grads, keep_graph, create_graph)
        return None

    # capture: only the nodes from which a captured tensor's node can be reached run
    targets: dict[tuple[Any, int], int] = {}  # (node, output_nr) -> index in capture
    for i, t in enumerate(capture):
        e = edge_to(t)
        targets[(e[0], e[1])] = i
    needed = _needed_nodes(root_nodes, {node for node, _ in targets})

    deps: dict[Any, int] = {n: 0 for n in root_nodes}
    stack = list(root_nodes)
    while stack:
        node = stack.pop()
        if node not in needed:
            continue
        for e in node._next:
            if e is None:
                continue
            child = e[0]
            if child not in needed:
                continue
            count = deps.get(child)
            if count is None:
                deps[child] = 1
                stack.append(child)
            else:
                deps[child] = count + 1

    buffers: dict[Any, list[Any]] = {}
    for e, g in zip(root_edges, root_grads):
        buf = buffers.setdefault(e[0], [None] * e[0]._n_outputs)
        buf[e[1]] = g if buf[e[1]] is None else buf[e[1]] + g
    captured: list[Any] = [None] * len(capture)

    ready = [(n._key, n) for n in root_nodes if deps[n] == 0]
    heapq.heapify(ready)
    heappush, heappop = heapq.heappush, heapq.heappop
    pop_buffer, get_buffer = buffers.pop, buffers.get
    prev_mode = STATE.enabled
    STATE.enabled = create_graph
    try:
        while ready:
            node = heappop(ready)[1]
            grads = pop_buffer(node, None)
            if grads is None:
                grads = [None] * node._n_outputs
            if node._special:
                _special(node, grads, create_graph)
            if targets:
                for nr, g in enumerate(grads):
                    idx = targets.get((node, nr))
                    if idx is not None:
                        captured[idx] = g
            if type(node) is AccumulateGrad:  # nothing is accumulated while capturing
                continue
            edges = node._next
            if (grads[0] is None and _all_none(grads)) or (
                not any(e is not None and e[0] in needed for e in edges)
            ):
                for e in edges:  # nothing flows on: the children only lose a dependency
                    if e is not None and e[0] in needed:
                        child = e[0]
                        count = deps[child] - 1
                        deps[child] = count
                        if count == 0:
                            heappush(ready, (child._key, child))
                continue
            if node._n_outputs > 1 and node.materialize_grads:
                _materialize(node, grads)
            fc = node._forward_cls  # BackwardNode._call_backward inlined
            outs = fc.backward(node, *grads) if fc is not None else node._call_backward(grads)
            if type(outs) is not tuple:
                outs = (outs,)
            if len(outs) != len(edges):
                _check_count(node, outs)
            if not keep_graph and node._saved is not None:
                node._saved = None
                node._freed = True
            i = -1
            for e, g in zip(edges, outs):
                i += 1
                if e is None:
                    continue
                child = e[0]
                if child not in needed:
                    continue
                if g is not None:
                    if type(g) is not Tensor:
                        g = _validate(node, i, g, e)
                    else:
                        arr = g._data
                        dt = arr.dtype
                        if arr.shape != e[2] or (dt is not e[3] and dt != e[3]):
                            g = _validate(node, i, g, e)
                    buf = get_buffer(child)
                    if buf is None:
                        buf = buffers[child] = [None] * child._n_outputs
                    prev = buf[e[1]]
                    if prev is None:
                        buf[e[1]] = g
                    elif create_graph:
                        buf[e[1]] = prev + g
                    else:
                        buf[e[1]] = wrap(prev._data + g._data)
                count = deps[child] - 1
                deps[child] = count
                if count == 0:
                    heappush(ready, (child._key, child))
    finally:
        STATE.enabled = prev_mode
    return captured


def _run_plain(
    root_nodes: list[Any],
    root_edges: list[Any],
    root_grads: Sequence[Tensor],
    keep_graph: bool,
    create_graph: bool,
) -> None:
    """run_backward without capture targets or pruning: every reachable node runs and leaves
    accumulate. The same steps as the general loop, with its capture checks left out."""
    deps: dict[Any, int] = {n: 0 for n in root_nodes}
    stack = list(root_nodes)
    pop, push, get_dep = stack.pop, stack.append, deps.get
    while stack:
        for e in pop()._next:
            if e is not None:
                child = e[0]
                count = get_dep(child)
                if count is None:
                    deps[child] = 1
                    push(child)
                else:
                    deps[child] = count + 1

    buffers: dict[Any, list[Any]] = {}
    for e, g in zip(root_edges, root_grads):
        buf = buffers.setdefault(e[0], [None] * e[0]._n_outputs)
        buf[e[1]] = g if buf[e[1]] is None else buf[e[1]] + g
    # gradients that may be referenced elsewhere: a leaf copies rather than adopts them. The
    # tensors are kept (id -> tensor) so that a freed one's id, reused, is not mistaken for it.
    shared = {id(g): g for g in root_grads}

    ready = [(n._key, n) for n in root_nodes if deps[n] == 0]
    heapq.heapify(ready)
    heappush, heappop = heapq.heappush, heapq.heappop
    pop_buffer, get_buffer = buffers.pop, buffers.get
    prev_mode = STATE.enabled
    STATE.enabled = create_graph
    try:
        # ``nxt``: the one ready node when the heap would hold nothing else (a chain's usual
        # case), run next without going through the heap; the order is the heap's
        nxt = None
        while True:
            if nxt is not None:
                node = nxt
                nxt = None
            elif ready:
                node = heappop(ready)[1]
            else:
                break
            grads = pop_buffer(node, None)
            if grads is None:
                grads = [None] * node._n_outputs
            if node._special:
                _special(node, grads, create_graph)
            if type(node) is AccumulateGrad:
                var = node._ref()
                if grads[0] is not None and var is not None:
                    _accumulate(var, grads[0], create_graph, shared)
                continue
            edges = node._next
            if grads[0] is None and _all_none(grads):
                for e in edges:  # nothing flows on: the children only lose a dependency
                    if e is not None:
                        child = e[0]
                        count = deps[child] - 1
                        deps[child] = count
                        if count == 0:
                            if nxt is None and not ready:
                                nxt = child
                            else:
                                if nxt is not None:
                                    heappush(ready, (nxt._key, nxt))
                                    nxt = None
                                heappush(ready, (child._key, child))
                continue
            if node._n_outputs > 1 and node.materialize_grads:
                _materialize(node, grads)
            fc = node._forward_cls  # BackwardNode._call_backward inlined
            outs = fc.backward(node, *grads) if fc is not None else node._call_backward(grads)
            if type(outs) is not tuple:
                outs = (outs,)
            if len(outs) != len(edges):
                _check_count(node, outs)
            if not keep_graph and node._saved is not None:
                node._saved = None
                node._freed = True
            for i, e in enumerate(edges):
                if e is None:
                    continue
                child = e[0]
                g = outs[i]
                if g is not None:
                    if type(g) is not Tensor:
                        g = _validate(node, i, g, e)
                    else:
                        arr = g._data
                        dt = arr.dtype
                        if arr.shape != e[2] or (dt is not e[3] and dt != e[3]):
                            g = _validate(node, i, g, e)
                    buf = get_buffer(child)
                    if buf is None:
                        buf = buffers[child] = [None] * child._n_outputs
                    prev = buf[e[1]]
                    if prev is None:
                        buf[e[1]] = g
                        if type(child) is AccumulateGrad and _maybe_shared(g, grads, outs, node):
                            shared[id(g)] = g
                    elif create_graph:
                        buf[e[1]] = prev + g
                    else:
                        buf[e[1]] = wrap(prev._data + g._data)
                count = deps[child] - 1
                deps[child] = count
                if count == 0:
                    if nxt is None and not ready:
                        nxt = child
                    else:
                        if nxt is not None:
                            heappush(ready, (nxt._key, nxt))
                            nxt = None
                        heappush(ready, (child._key, child))
    finally:
        STATE.enabled = prev_mode


# backward() and grad() have always been imported from here. Imported last: backward_api.py
# imports run_backward from this module, which is defined by now.
from .backward_api import backward, grad  # noqa: E402

__all__ = ["backward", "grad", "run_backward"]
