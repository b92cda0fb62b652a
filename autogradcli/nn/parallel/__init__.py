"""``torch.nn.parallel``: data parallelism across processes."""

from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
