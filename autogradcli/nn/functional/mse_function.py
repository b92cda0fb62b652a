"""``MseLoss``: mean squared error as one recorded node, ``MseLossBackward0``, as PyTorch records it
(programs print ``loss.grad_fn`` and walk ``next_functions`` from it)."""

from __future__ import annotations

from typing import Any

from ...autograd.function import Function
from ...ops._util import array_module, binary_operands
from ...tensor.tensor import Tensor


class MseLoss(Function):
    """``(input - target)**2`` reduced by ``reduction`` ('mean', 'sum' or 'none'); input and
    target have the same shape. The backward is built from Tensor ops, so it has grad-of-grad."""

    _backward_name = "MseLossBackward0"

    @staticmethod
    def forward(ctx: Any, input: Tensor, target: Tensor, reduction: str) -> Any:
        x, t, _ = binary_operands(input, target)
        ctx.save_for_backward(input, target)
        ctx.reduction, ctx.numel = reduction, x.size
        d = x - t
        sq = d * d
        if reduction == "none":
            return sq
        xp = array_module(sq)
        return xp.asarray(sq.mean() if reduction == "mean" else sq.sum(), dtype=sq.dtype)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, Any, None]:
        input, target = ctx.saved_tensors
        scale = 2.0 / ctx.numel if ctx.reduction == "mean" else 2.0
        grad = (input - target) * g * scale
        ga = grad if ctx.needs_input_grad[0] else None
        gt = -grad if ctx.needs_input_grad[1] else None
        return ga, gt, None
