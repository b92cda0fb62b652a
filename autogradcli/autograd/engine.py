"""The backward engine: iterative, deterministic, each node run once with its gradients summed.

Two passes, as in Chainer and PyTorch: discovery counts each node's incoming edges, then nodes
run from a heap keyed by creation order (latest first), each as soon as every consumer of its
outputs has contributed. No recursion, so graphs of any depth work.

``run_backward`` is the one loop; with ``capture`` (``grad()``, ``backward(inputs=...)``) it runs
only the nodes that lead to the captured tensors and returns their gradients instead of
accumulating. What happens at a node beyond the common path is in engine_steps.py. PyTorch's
entry points ``backward()`` and ``grad()`` are at the end.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Any

from ..backend import array_module
from ..tensor.tensor import Tensor, wrap
from .anomaly_mode import check_nan, warn_forward_trace
from .engine_steps import (
    _accumulate,
    _add_to_grad,
    _all_none,
    _check_count,
    _materialize,
    _maybe_shared,
    _special,
    _validate,
    run_post_hooks,
)
from .grad_mode import STATE
from .gradient_ops import add_grads
from .node import AccumulateGrad, edge_to

__all__ = ["backward", "grad", "run_backward"]


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

    Without ``capture``, every reachable node runs and the leaves accumulate into ``.grad``.
    With it, only the nodes from which a tensor of ``capture`` can be reached run, nothing is
    accumulated, and the gradients reaching those tensors are returned, in ``capture``'s order.
    """
    root_edges = []
    root_nodes = []
    deps: dict[Any, int] = {}  # how many edges reach each node that will run
    for t in roots:
        e = edge_to(t)
        root_edges.append(e)
        if e[0] not in deps:
            deps[e[0]] = 0
            root_nodes.append(e[0])
    targets: dict[tuple[Any, int], int] = {}  # (node, output_nr) -> index in capture
    needed: set[Any] = set()  # with capture: the nodes that run (pruning)
    pruning = capture is not None
    if pruning:
        for i, t in enumerate(capture):
            e = edge_to(t)
            targets[(e[0], e[1])] = i
        needed = _needed_nodes(root_nodes, {node for node, _ in targets})

    # discovery: count the edges into each node (``deps``)
    stack = list(root_nodes)
    pop, push, get_dep = stack.pop, stack.append, deps.get
    while stack:
        node = pop()
        if pruning and node not in needed:
            continue
        for e in node._next:
            if e is not None:
                child = e[0]
                if pruning and child not in needed:
                    continue
                count = get_dep(child)
                if count is None:
                    deps[child] = 1
                    push(child)
                else:
                    deps[child] = count + 1

    # gradients received so far: a single-output node's one Tensor, a multi-output node's list
    buffers: dict[Any, Any] = {}
    for e, g in zip(root_edges, root_grads):
        _add_root_grad(buffers, e, g, create_graph)
    captured: list[Any] = [None] * len(targets)
    # node -> the gradient sum this loop allocated for it: further gradients are added into that
    # array in place (a tensor feeding many consumers costs one new array, not one per consumer)
    owned: dict[Any, Tensor] = {}
    # gradients that may be referenced elsewhere: a leaf copies rather than adopts them. The
    # tensors are kept (id -> tensor) so that a freed one's id, reused, is not mistaken for it.
    shared = {}
    for g in root_grads:
        shared[id(g)] = g
    ready = []
    for n in root_nodes:
        if deps[n] == 0:
            ready.append((n._key, n))
    if len(ready) > 1:
        heapq.heapify(ready)
    heappush, heappop = heapq.heappush, heapq.heappop
    pop_buffer, get_buffer = buffers.pop, buffers.get
    prev_mode = STATE.enabled
    anomaly, nan_check = STATE.anomaly, STATE.anomaly and STATE.check_nan
    STATE.enabled = create_graph
    node = None
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
            g = pop_buffer(node, None)
            if owned:
                owned.pop(node, None)
            if type(g) is list:  # a multi-output node's gradients
                grads = g
                g = None
            elif node._n_outputs > 1:  # ... none of which arrived
                grads = [None] * node._n_outputs
            else:
                grads = None  # a single-output node: ``g`` is its gradient (or None)
            if node._special or targets:
                if grads is None:
                    grads = [g]
                if node._special:
                    _special(node, grads, create_graph)
                if targets:
                    for nr, gi in enumerate(grads):
                        idx = targets.get((node, nr))
                        if idx is not None:
                            captured[idx] = gi
                if node._n_outputs == 1:
                    g = grads[0]
                    grads = None
            if type(node) is AccumulateGrad:
                var = node._ref()
                if not pruning and g is not None and var is not None:
                    _accumulate(var, g, create_graph, shared)
                continue
            edges = node._next
            if (g is None if grads is None else _all_none(grads)) or (
                pruning and not any(e is not None and e[0] in needed for e in edges)
            ):
                outs = (None,) * len(edges)  # nothing flows on: the children only lose a dependency
            else:
                fc = node._forward_cls  # BackwardNode._call_backward inlined
                if grads is None:
                    outs = fc.backward(node, g) if fc is not None else node._call_backward([g])
                else:
                    if node.materialize_grads:
                        _materialize(node, grads)
                    outs = (
                        fc.backward(node, *grads) if fc is not None else node._call_backward(grads)
                    )
                if type(outs) is not tuple:
                    outs = (outs,)
                if len(outs) != len(edges):
                    _check_count(node, outs)
                if node._post_hooks is not None:
                    outs = run_post_hooks(node, outs, (g,) if grads is None else grads)
                if nan_check:
                    check_nan(node, outs)
                if not keep_graph and node._saved is not None:
                    node._saved = None
                    node._freed = True
            for e, gi in zip(edges, outs):
                if e is None:
                    continue
                child = e[0]
                if pruning and child not in needed:
                    continue
                if gi is not None:
                    if type(gi) is not Tensor:
                        gi = _validate(node, edges, e, gi)
                    else:
                        arr = gi._data
                        dt = arr.dtype
                        if arr.shape != e[2] or (dt is not e[3] and dt != e[3]):
                            gi = _validate(node, edges, e, gi)
                    prev = get_buffer(child)
                    if prev is None:
                        if child._n_outputs == 1:
                            buffers[child] = gi
                            if type(child) is AccumulateGrad and _maybe_shared(
                                gi, (g,) if grads is None else grads, outs, node
                            ):
                                shared[id(gi)] = gi
                        else:
                            buf = buffers[child] = [None] * child._n_outputs
                            buf[e[1]] = gi
                    elif type(prev) is list:
                        p = prev[e[1]]
                        prev[e[1]] = gi if p is None else add_grads(p, gi, create_graph)
                    elif create_graph:
                        buffers[child] = add_grads(prev, gi, True)
                    elif owned.get(child) is prev:
                        prev._data += gi._data
                    else:
                        prev = buffers[child] = owned[child] = wrap(prev._data + gi._data)
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
    except Exception:
        if anomaly and node is not None:
            warn_forward_trace(node)
        raise
    finally:
        STATE.enabled = prev_mode
    return captured if capture is not None else None


def _add_root_grad(
    buffers: dict[Any, Any], edge: tuple[Any, ...], g: Tensor, create_graph: bool
) -> None:
    """Put root gradient ``g`` into the buffer of the node ``edge`` leads to (summing repeats)."""
    node, nr = edge[0], edge[1]
    if node._n_outputs == 1:
        prev = buffers.get(node)
        buffers[node] = g if prev is None else add_grads(prev, g, create_graph)
        return
    buf = buffers.setdefault(node, [None] * node._n_outputs)
    buf[nr] = g if buf[nr] is None else add_grads(buf[nr], g, create_graph)


def _make_root_grads(tensors: Sequence[Tensor], grad_tensors: Sequence[Any]) -> list[Tensor]:
    """The gradient each output starts from: given, a number times ones, or ones for a scalar."""
    grads = []
    for i, (t, g) in enumerate(zip(tensors, grad_tensors)):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"expected Tensors as outputs to differentiate, got {type(t).__name__} at position {i}"
            )
        if not t._requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
        if g is None:
            if t._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            arr = t._data  # ones_like(t), without the factory's argument handling
            if arr.dtype.kind == "c":
                raise RuntimeError(
                    f"grad can be implicitly created only for real scalar outputs but got {t.dtype}"
                )
            xp = array_module(arr)
            # a 0-d one straight from asarray (one C call; ones() is Python over empty + copyto)
            g = wrap(xp.asarray(1, arr.dtype) if arr.ndim == 0 else xp.ones(arr.shape, arr.dtype))
        elif not isinstance(g, Tensor):
            from ..tensor.factory import ones_like

            g = wrap(t._data.dtype.type(g) * ones_like(t)._data)
        elif g._data.shape != t._data.shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] "
                f"has a shape of {t.shape}."
            )
        grads.append(g)
    return grads


def _as_tuple(x: Any) -> tuple[Any, ...]:
    """None, a Tensor or a sequence of them, as a tuple."""
    if x is None:
        return ()
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def backward(
    tensors: Any,
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Any = None,
) -> None:
    """Compute gradients of ``tensors`` and accumulate them into the leaves' ``.grad``."""
    tensors = _as_tuple(tensors)
    grad_tensors = _as_tuple(grad_tensors) or (None,) * len(tensors)
    if len(grad_tensors) != len(tensors):
        raise RuntimeError(
            f"grad_tensors has {len(grad_tensors)} entries but there are {len(tensors)} tensors"
        )
    root_grads = _make_root_grads(tensors, grad_tensors)
    keep = create_graph if retain_graph is None else retain_graph
    inputs = _as_tuple(inputs)
    if not inputs:
        run_backward(tensors, root_grads, keep, create_graph)
        return
    grads = run_backward(tensors, root_grads, keep, create_graph, capture=inputs)
    for t, g in zip(inputs, grads or ()):
        if g is not None:
            _add_to_grad(t, g, create_graph)


def grad(
    outputs: Any,
    inputs: Any,
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool | None = None,
    materialize_grads: bool = False,
) -> tuple[Tensor | None, ...]:
    """The gradients of ``outputs`` with respect to ``inputs``, without touching any ``.grad``."""
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    if allow_unused is None:
        allow_unused = materialize_grads
    for t in inputs:
        if not isinstance(t, Tensor):
            raise TypeError(f"grad(): inputs must be Tensors, got {type(t).__name__}")
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    grad_outputs = _as_tuple(grad_outputs) or (None,) * len(outputs)
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(
            f"grad requires one grad_output per output: got {len(grad_outputs)} for {len(outputs)} outputs"
        )
    root_grads = _make_root_grads(outputs, grad_outputs)
    keep = create_graph if retain_graph is None else retain_graph
    captured = run_backward(outputs, root_grads, keep, create_graph, capture=inputs) or []
    result = []
    for i, (t, g) in enumerate(zip(inputs, captured)):
        if g is None:
            if not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in the "
                    "graph. Set allow_unused=True if this is the desired behavior."
                )
            if materialize_grads:
                from ..tensor.factory import zeros_like

                g = zeros_like(t)
        result.append(g)
    return tuple(result)
