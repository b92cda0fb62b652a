"""``DistributedTrainer``: the Trainer on one rank of a data-parallel run.

It changes the loop only through the Trainer's seams: the loaders are replaced by this rank's
shares of the same global batches (``distributed.shard_loader``); ``forward`` runs the model
through ``DistributedDataParallel`` (gradients averaged during backward); ``sums_class``
reduces the epoch's loss and metric sums over ranks before they become metrics, so every rank
computes the same numbers (and the same early-stopping and scheduler decisions); a last
callback makes a stop request on one rank a stop on all.

Where an epoch's last global batch does not split evenly, a rank's gradient is weighted by its
share (``W * n_r / n``) before averaging, so the step equals the one-process step on the whole
batch; the reported loss is not changed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autograd.function import Function
from ..tensor.tensor import Tensor
from .callbacks import Callback
from .distributed import DistributedContext, reduce_vector, shard_loader
from .metrics import EpochSums, batch_size
from .trainer import Trainer

__all__ = ["DistributedTrainer", "ReducedEpochSums"]

_SCALAR_KEYS = ("correct", "n_acc", "top5_hit", "top5_n", "rows", "nll_sum", "nll_n")
_LIST_KEYS = ("tp", "fp", "fn", "abs", "sq", "y", "y2")
_INT_KEYS = {"top5_hit", "top5_n", "rows", "tp", "fp", "fn"}
_FLOAT_KEYS = {"nll_sum"}  # scalar sums that are not counts


class ReducedEpochSums(EpochSums):
    """EpochSums whose ``metrics`` are those of the sums over every rank (sums first, then
    divided); the rank's own sums are left as they are (a checkpoint keeps them)."""

    def metrics(self, prefix: str) -> dict[str, Any]:
        from .. import distributed as dist

        if not dist.is_initialized() or dist.get_world_size() == 1:
            return super().metrics(prefix)
        return EpochSums.metrics(self.reduced(), prefix)

    def reduced(self) -> EpochSums:
        """A copy holding the sums over every rank (a collective: call it on every rank)."""
        self.settle()
        lengths = np.array([len(self.sums.get(k, ())) for k in _LIST_KEYS], dtype=np.float64)
        lengths = reduce_vector(lengths, "max").astype(int)
        parts = [np.array([self.loss_sum, self.n], dtype=np.float64)]
        parts.append(np.array([self.sums.get(k, 0) for k in _SCALAR_KEYS], dtype=np.float64))
        for key, size in zip(_LIST_KEYS, lengths):
            mine = np.asarray(self.sums.get(key, ()), dtype=np.float64)
            parts.append(np.concatenate([mine, np.zeros(size - mine.size)]))
        total: list[float] = reduce_vector(np.concatenate(parts)).tolist()
        out = EpochSums(self.task, self.loss_fn, self.names)
        out.loss_sum = total[0]
        out.n = round(total[1])
        at = 2
        for key in _SCALAR_KEYS:
            if key in self.sums or total[at]:
                out.sums[key] = total[at] if key in _FLOAT_KEYS else round(total[at])
            at += 1
        for key, size in zip(_LIST_KEYS, lengths.tolist()):
            if size:
                values = total[at : at + size]
                out.sums[key] = [round(v) for v in values] if key in _INT_KEYS else values
            at += size
        if not out.sums.get("rows"):
            out.sums.pop("rows", None)
        return out


class _ScaleGrad(Function):
    """Identity forward; backward multiplies the gradient by ``weight``."""

    @staticmethod
    def forward(ctx: Any, x: Any, weight: float) -> Any:
        ctx.weight = weight
        return x.clone()

    @staticmethod
    def backward(ctx: Any, grad: Any) -> Any:
        return grad * ctx.weight, None


class _StopTogether(Callback):
    """A stop requested on one rank (a user callback) stops every rank after the epoch."""

    order = 10_000  # after every other callback's on_epoch_end

    def on_epoch_end(self, trainer: Any) -> None:
        stop = reduce_vector(np.array([1.0 if trainer.should_stop else 0.0]), "max")
        if stop[0] and not trainer.should_stop:
            trainer.request_stop("another rank asked to stop")


class DistributedTrainer(Trainer):
    """A Trainer for rank ``context.rank`` of ``context.world_size`` (same arguments as
    ``Trainer`` plus ``context``); only rank 0 should be given ``run`` and reporters."""

    sums_class = ReducedEpochSums

    def __init__(
        self,
        model: Any,
        loss_fn: Any,
        optimizer: Any,
        train_loader: Any,
        val_loader: Any = None,
        *,
        context: DistributedContext,
        **kwargs: Any,
    ) -> None:
        self.context = context
        rank, world = context.rank, context.world_size
        train = shard_loader(train_loader, rank, world)
        val = shard_loader(val_loader, rank, world, skip_empty=True) if val_loader else None
        callbacks = [*kwargs.pop("callbacks", ()), _StopTogether()]
        super().__init__(model, loss_fn, optimizer, train, val, callbacks=callbacks, **kwargs)
        self.ddp = context.wrap_model(model)

    def forward(self, x: Any) -> Any:
        out = self.ddp(x)
        weight = self._share_weight(x)
        if weight != 1.0 and isinstance(out, Tensor):
            out = _ScaleGrad.apply(out, weight)
        return out

    def _share_weight(self, x: Any) -> float:
        """``W * n_r / n`` for this rank's ``n_r`` of the global batch's ``n`` samples."""
        global_n = self.train_loader.batch_sampler.global_size(self.batch_in_epoch)
        local = batch_size(x)
        world = self.context.world_size
        return 1.0 if local * world == global_n else world * local / global_n

    def load_checkpoint(self, path: str) -> None:
        """Every rank loads the checkpoint; the running sums of an unfinished epoch (rank 0's
        when it was saved) stay on rank 0 alone, so the reduction counts them once."""
        super().load_checkpoint(path)
        if not self.context.is_main and self.batch_in_epoch:
            before = self.epoch_sums.state_dict()
            self.epoch_sums.reset()
            self.epoch_sums.load_state_dict(
                {**self.epoch_sums.state_dict(), "lr": before["lr"], "time": before["time"]}
            )
