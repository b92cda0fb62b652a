"""Second derivatives of a Function whose first-order backward runs on arrays: under
``create_graph`` its backward recomputes the same result from differentiable ops (its "composed
form") and returns their gradients, built with a graph (the recurrent layers, the blocked
transposed convolution)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..tensor.tensor import Tensor

__all__ = ["composed_gradients"]


def composed_gradients(
    ctx: Any,
    inputs: Sequence[Tensor | None],
    outputs: Sequence[Tensor],
    grads: Sequence[Tensor | None],
    n_args: int,
) -> tuple[Any, ...]:
    """One gradient per forward argument (``n_args``; ``inputs`` are its first ones, None where
    absent): ``outputs``, the composed form recomputed from ``inputs``, differentiated against
    ``grads`` with a graph; None where ``ctx.needs_input_grad`` says no or nothing reached."""
    from .engine import grad

    wanted = [i for i, t in enumerate(inputs) if t is not None and ctx.needs_input_grad[i]]
    pairs = [(o, g) for o, g in zip(outputs, grads) if g is not None and o.requires_grad]
    got = grad(
        [o for o, _ in pairs],
        [inputs[i] for i in wanted],
        [g for _, g in pairs],
        create_graph=True,
        allow_unused=True,
    )
    result: list[Any] = [None] * n_args
    for i, g in zip(wanted, got):
        result[i] = g
    return tuple(result)
