"""``backward()`` and ``grad()``: PyTorch's entry points to the engine.

They check the outputs and their gradients (an implicit all-ones gradient for a scalar output),
then call ``run_backward``: ``backward`` accumulates into the leaves' ``.grad`` (or, with
``inputs``, into those tensors' only), ``grad`` returns the gradients and touches no ``.grad``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..backend import array_module
from ..tensor.tensor import Tensor, _make, wrap
from .engine import run_backward


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
