"""``torch.utils.data.distributed``: the path PyTorch programs import ``DistributedSampler`` from."""

from ...data.distributed import DistributedSampler

__all__ = ["DistributedSampler"]
