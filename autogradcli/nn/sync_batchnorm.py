"""``nn.SyncBatchNorm``: batch normalization whose statistics span every rank's batch.

In training, the per-channel sum and then the sum of squared deviations are all-reduced, so the
mean and (biased) variance are those of the concatenated global batch. The all-reduce is itself
an autograd Function (its backward all-reduces the incoming gradient, since every rank's output
depends on every rank's input), so the gradients, and gradients of gradients, follow from the
Tensor ops around it and equal BatchNorm's on the concatenated batch. Outside training, or
without a process group of more than one rank, it is BatchNorm.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autograd.function import Function
from ..autograd.grad_mode import no_grad
from ..distributed.reduce_op import ReduceOp
from ..tensor.tensor import Tensor
from .functional.normalization import _affine, _channel_shape, _update
from .module import Module
from .normalization import _BatchNorm

__all__ = ["SyncBatchNorm"]


class AllReduceSum(Function):
    """Sum of ``x`` over ranks, differentiable: the gradient is the sum of the ranks' gradients."""

    _backward_name = "AllReduceSumBackward"

    @staticmethod
    def forward(ctx: Any, x: Tensor, pg: Any, name: str) -> Any:
        ctx.pg, ctx.name = pg, name
        arr = x._data.copy()
        pg.all_reduce(arr, ReduceOp.SUM, f"{name} (forward)").wait()
        return arr

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor, None, None]:
        return AllReduceSum.apply(grad.contiguous(), ctx.pg, ctx.name), None, None


def _group(process_group: Any) -> Any:
    from ..distributed.process_group import STATE

    if process_group is not None:
        return process_group
    return STATE.backend


class SyncBatchNorm(_BatchNorm):
    """BatchNorm over (N, C, *) input with statistics synchronised across ranks in training."""

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        process_group: Any = None,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)
        self.process_group = process_group

    def _check_input_dim(self, input: Tensor) -> None:
        if input.ndim < 2:
            raise ValueError(f"expected at least 2D input (got {input.ndim}D input)")

    def forward(self, input: Tensor) -> Tensor:
        pg = _group(self.process_group)
        if not self.training or pg is None or pg.size == 1:
            return super().forward(input)
        self._check_input_dim(input)
        if input.shape[1] != self.num_features:
            raise ValueError(
                f"SyncBatchNorm: expected input with {self.num_features} channels, got shape "
                f"{tuple(input.shape)}"
            )
        factor = 0.0 if self.momentum is None else self.momentum
        if self.track_running_stats and self.num_batches_tracked is not None:
            with no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / float(self.num_batches_tracked.item())
        shape = _channel_shape(input)
        dims = (0,) + tuple(range(2, input.ndim))
        count = np.array([input.numel() // input.shape[1]], dtype=np.int64)
        pg.all_reduce(count, ReduceOp.SUM, "SyncBatchNorm count").wait()
        n = int(count[0])
        if n <= 1:
            raise ValueError(
                "Expected more than 1 value per channel when training, got input size "
                f"{input.shape} on this rank and {n} values per channel over all ranks"
            )
        mean = AllReduceSum.apply(input.sum(dims), pg, "SyncBatchNorm mean") / n
        centered = input - mean.reshape(shape)
        var = AllReduceSum.apply((centered * centered).sum(dims), pg, "SyncBatchNorm var") / n
        out = centered * (var.reshape(shape) + self.eps).rsqrt()
        if self.track_running_stats and self.running_mean is not None:
            with no_grad():
                _update(self.running_mean, mean.detach(), factor)
                _update(self.running_var, var.detach() * (n / (n - 1)), factor)
        return _affine(out, self.weight, self.bias, shape)

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any = None) -> Module:
        """``module`` with every BatchNorm*D replaced by a SyncBatchNorm sharing its parameters
        and statistics (a BatchNorm given directly is returned converted)."""
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            out = SyncBatchNorm(
                module.num_features,
                module.eps,
                module.momentum,
                module.affine,
                module.track_running_stats,
                process_group,
            )
            if module.affine:
                with no_grad():
                    out.weight = module.weight
                    out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
        for name, child in module.named_children():
            setattr(out, name, cls.convert_sync_batchnorm(child, process_group))
        return out
