"""The backward engine: iterative, deterministic, each node run once with its gradients summed.

Two passes, as in Chainer and PyTorch: discovery counts each node's incoming edges, then nodes
run from a heap keyed by creation order (latest first), each as soon as every consumer of its
outputs has contributed. No recursion, so graphs of any depth work.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Any

from ..backend import array_module
from ..tensor.tensor import Tensor, _make, wrap
from .function import AccumulateGrad, edge_to
from .grad_mode import STATE


def _sum_to_shape(g: Tensor, shape: tuple[int, ...]) -> Tensor:
    from ..ops.shape import sum_to

    return sum_to(g, shape)


def _cast(g: Tensor, dtype: Any) -> Tensor:
    if STATE.enabled:
        return g.to(dtype)
    return wrap(g._data.astype(dtype))


def _broadcastable(src: tuple[int, ...], dst: tuple[int, ...]) -> bool:
    if len(src) < len(dst):
        return False
    return all(d in (1, s) for s, d in zip(src[len(src) - len(dst) :], dst))


def _validate(node: Any, index: int, g: Any, edge: tuple[Any, ...]) -> Tensor:
    """Bring gradient ``g`` for input ``index`` to the input's shape and dtype, or say what is wrong."""
    if not isinstance(g, Tensor):
        raise TypeError(
            f"{node.name()}: backward returned a {type(g).__name__} as the gradient for input "
            f"{index}; expected a Tensor or None"
        )
    shape, dtype = edge[2], edge[3]
    if g._data.shape != shape:
        if _broadcastable(g._data.shape, shape):
            g = _sum_to_shape(g, shape)
        else:
            raise RuntimeError(
                f"{node.name()}: backward returned a gradient of shape {tuple(g._data.shape)} for "
                f"input {index}, which has shape {tuple(shape)} (the gradient must have the "
                "input's shape, or a shape that broadcasts to it)"
            )
    if g._data.dtype != dtype:
        g = _cast(g, dtype)
    return g


def _check_count(node: Any, grads: tuple[Any, ...]) -> None:
    n_in = len(node._next)
    if len(grads) < n_in or any(g is not None for g in grads[n_in:]):
        raise RuntimeError(
            f"function {node.name()} returned an incorrect number of gradients (expected "
            f"{n_in}, got {len(grads)})"
        )


def _materialize(node: Any, grads: list[Any]) -> None:
    for i, g in enumerate(grads):
        if g is None and node._out_meta is not None and node._out_meta[i] is not None:
            shape, dtype, xp = node._out_meta[i]  # as function._apply records it
            grads[i] = _make(xp.zeros(shape, dtype))


def _run_hooks(node: Any, grads: list[Any]) -> None:
    for nr, hooks in node._tensor_hooks.items():
        for hook in list(hooks.values()):
            if grads[nr] is None:
                break
            res = hook(grads[nr])
            if res is not None:
                grads[nr] = res


def _retain(node: Any, grads: list[Any], create_graph: bool) -> None:
    for nr, ref in node._retained.items():
        t, g = ref(), grads[nr]
        if t is None or g is None:
            continue
        if t._grad is None:
            t._grad = g if create_graph else _make(g._data.copy())
        else:
            t._grad = t._grad + g if create_graph else wrap(t._grad._data + g._data)


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
    """Propagate ``root_grads`` from ``roots``; accumulate into leaves' ``.grad`` or capture
    the gradients of ``capture`` (then nothing is accumulated)."""
    root_edges = [edge_to(t) for t in roots]
    root_nodes = []
    for e in root_edges:
        if e[0] not in root_nodes:
            root_nodes.append(e[0])

    if capture is None:
        _run_plain(root_nodes, root_edges, root_grads, keep_graph, create_graph)
        return None

    targets: dict[tuple[Any, int], int] = {}
    needed = None
    if capture is not None:
        for i, t in enumerate(capture):
            e = edge_to(t)
            targets[(e[0], e[1])] = i
        needed = _needed_nodes(root_nodes, {node for node, _ in targets})

    deps: dict[Any, int] = {n: 0 for n in root_nodes}
    stack = list(root_nodes)
    while stack:
        node = stack.pop()
        if needed is not None and node not in needed:
            continue
        for e in node._next:
            if e is None:
                continue
            child = e[0]
            if needed is not None and child not in needed:
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
    # gradients that may be referenced elsewhere: a leaf copies rather than adopts them. The
    # tensors are kept (id -> tensor) so that a freed one's id, reused, is not mistaken for it.
    shared = {id(g): g for g in root_grads}
    captured: list[Any] = [None] * len(capture) if capture is not None else []

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
            if type(node) is AccumulateGrad:
                var = node._ref()
                if capture is None and grads[0] is not None and var is not None:
                    _accumulate(var, grads[0], create_graph, shared)
                continue
            edges = node._next
            if (grads[0] is None and _all_none(grads)) or (
                needed is not None and not any(e is not None and e[0] in needed for e in edges)
            ):
                for e in edges:  # nothing flows on: the children only lose a dependency
                    if e is not None and (needed is None or e[0] in needed):
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
                if needed is not None and child not in needed:
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
                        if type(child) is AccumulateGrad and _maybe_shared(g, grads, outs, node):
                            shared[id(g)] = g
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
    return captured if capture is not None else None


def _special(node: Any, grads: list[Any], create_graph: bool) -> None:
    """A node's tensor hooks, then its retained gradients."""
    if node._tensor_hooks:
        _run_hooks(node, grads)
    if node._retained:
        _retain(node, grads, create_graph)


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
    shared = {id(g): g for g in root_grads}  # as in run_backward

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


def _all_none(grads: list[Any]) -> bool:
    return all(g is None for g in grads)


def _maybe_shared(g: Tensor, grads: list[Any], outs: tuple[Any, ...], node: Any) -> bool:
    """Whether gradient ``g`` (bound for a leaf) may be referenced elsewhere, so that adopting
    its array as ``.grad`` would alias: it passed through unchanged, went to two edges, or is
    a tensor the node saved."""
    for x in grads:
        if g is x:
            return True
    n = 0
    for o in outs:
        if o is g:
            n += 1
    if n > 1:
        return True
    saved = node._saved
    if saved is not None:
        for s in saved:
            if g is s:
                return True
    return False


def _accumulate(var: Tensor, g: Tensor, create_graph: bool, shared: dict[int, Tensor]) -> None:
    """PyTorch's AccumulateGrad: leaf hooks, then ``.grad`` set (or summed) from ``g``."""
    if var._hooks:
        for hook in list(var._hooks.values()):
            res = hook(g)
            if res is not None:
                g = res
                shared[id(g)] = g
    if create_graph:
        var._grad = g if var._grad is None else var._grad + g
        return
    arr = g._data
    if var._grad is None:
        # adopt a fresh array; copy one that something else may still hold (or a view of one)
        if id(g) in shared or arr.base is not None:
            arr = arr.copy()
        shared[id(g)] = g
        var._grad = _make(arr)
    else:
        var._grad._data += arr
        var._grad._bump_version()


def _make_root_grads(tensors: Sequence[Tensor], grad_tensors: Sequence[Any]) -> list[Tensor]:
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
            g = _make(array_module(arr).ones(arr.shape, arr.dtype))
        elif not isinstance(g, Tensor):
            from ..tensor.factory import ones_like

            g = _make(t._data.dtype.type(g) * ones_like(t)._data)
        elif g._data.shape != t._data.shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] "
                f"has a shape of {t.shape}."
            )
        grads.append(g)
    return grads


def _as_tuple(x: Any) -> tuple[Any, ...]:
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
            if t._grad is None:
                t._grad = g if create_graph else _make(g._data.copy())
            else:
                t._grad = t._grad + g if create_graph else wrap(t._grad._data + g._data)


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
