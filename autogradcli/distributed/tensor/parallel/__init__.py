"""``torch.distributed.tensor.parallel``: Megatron-style tensor parallelism of nn.Linear."""

from .api import parallelize_module
from .style import ColwiseParallel, ParallelStyle, RowwiseParallel

__all__ = ["ColwiseParallel", "ParallelStyle", "RowwiseParallel", "parallelize_module"]
