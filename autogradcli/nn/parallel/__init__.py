"""``torch.nn.parallel``: data parallelism across processes, and ``DataParallel`` on one device."""

from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]
