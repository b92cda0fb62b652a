"""What the backward engine does at one node, outside its loops' common path.

Tensor hooks and retained gradients (``_special``), zeros for the missing gradients of a
multi-output node (``_materialize``), checking what backward returned and bringing a gradient to
its input's shape and dtype (``_check_count``, ``_validate``), and accumulating into a leaf's
``.grad`` without aliasing an array something else still holds (``_maybe_shared``,
``_accumulate``).
"""

from __future__ import annotations

from typing import Any

from ..tensor.tensor import Tensor, wrap
from .gradient_ops import add_grads, cast_grad, sum_to


def _broadcastable(src: tuple[int, ...], dst: tuple[int, ...]) -> bool:
    if len(src) < len(dst):
        return False
    return all(d in (1, s) for s, d in zip(src[len(src) - len(dst) :], dst))


def _validate(node: Any, edges: tuple[Any, ...], edge: tuple[Any, ...], g: Any) -> Tensor:
    """Bring gradient ``g`` for the input of ``edge`` to its shape and dtype, or say what is wrong."""
    index = next(i for i, e in enumerate(edges) if e is edge)
    if not isinstance(g, Tensor):
        raise TypeError(
            f"{node.name()}: backward returned a {type(g).__name__} as the gradient for input "
            f"{index}; expected a Tensor or None"
        )
    shape, dtype = edge[2], edge[3]
    if g._data.shape != shape:
        if _broadcastable(g._data.shape, shape):
            g = sum_to(g, shape)
        else:
            raise RuntimeError(
                f"{node.name()}: backward returned a gradient of shape {tuple(g._data.shape)} for "
                f"input {index}, which has shape {tuple(shape)} (the gradient must have the "
                "input's shape, or a shape that broadcasts to it)"
            )
    if g._data.dtype != dtype:
        g = cast_grad(g, dtype)
    return g


def _check_count(node: Any, grads: tuple[Any, ...]) -> None:
    """Refuse a backward that returned more (non-None) or fewer gradients than inputs."""
    n_in = len(node._next)
    if len(grads) < n_in or any(g is not None for g in grads[n_in:]):
        raise RuntimeError(
            f"function {node.name()} returned an incorrect number of gradients (expected "
            f"{n_in}, got {len(grads)})"
        )


def _materialize(node: Any, grads: list[Any]) -> None:
    """Zeros for the outputs of a multi-output node that received no gradient."""
    for i, g in enumerate(grads):
        if g is None and node._out_meta is not None and node._out_meta[i] is not None:
            shape, dtype, xp = node._out_meta[i]  # as record._outputs records it
            grads[i] = wrap(xp.zeros(shape, dtype))


def _run_hooks(node: Any, grads: list[Any]) -> None:
    """Tensor hooks of the node's outputs, in registration order; a returned value replaces the grad."""
    for nr, hooks in node._tensor_hooks.items():
        for hook in list(hooks.values()):
            if grads[nr] is None:
                break
            res = hook(grads[nr])
            if res is not None:
                grads[nr] = res


def _add_to_grad(t: Tensor, g: Tensor, create_graph: bool) -> None:
    """``t.grad`` set to ``g`` (a copy, unless building a graph) or summed with it."""
    if t._grad is None:
        t._grad = g if create_graph else wrap(g._data.copy())
    else:
        t._grad = add_grads(t._grad, g, create_graph)


def _retain(node: Any, grads: list[Any], create_graph: bool) -> None:
    """``.grad`` of the non-leaf outputs that called ``retain_grad()``."""
    for nr, ref in node._retained.items():
        t, g = ref(), grads[nr]
        if t is not None and g is not None:
            _add_to_grad(t, g, create_graph)


def _special(node: Any, grads: list[Any], create_graph: bool) -> None:
    """A node's tensor hooks, then its retained gradients."""
    if node._tensor_hooks:
        _run_hooks(node, grads)
    if node._retained:
        _retain(node, grads, create_graph)


def run_post_hooks(node: Any, outs: tuple[Any, ...], grads: Any) -> tuple[Any, ...]:
    """The node's ``register_hook`` hooks, each seeing (and able to replace) its input gradients."""
    for hook in list(node._post_hooks.values()):
        res = hook(outs, tuple(grads))
        if res is not None:
            res = tuple(res) if isinstance(res, (tuple, list)) else (res,)
            if len(res) != len(outs):
                raise RuntimeError(
                    f"hook '{getattr(hook, '__name__', hook)}' has returned an incorrect number "
                    f"of values (got {len(res)}, but expected {len(outs)})"
                )
            outs = res
    return outs


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
        var._grad = g if var._grad is None else add_grads(var._grad, g, True)
        return
    arr = g._data
    if var._grad is None:
        # adopt a fresh array; copy one that something else may still hold (or a view of one)
        if id(g) in shared or arr.base is not None:
            arr = arr.copy()
        shared[id(g)] = g
        var._grad = wrap(arr)
    else:
        var._grad._data += arr
        var._grad._bump_version()
