"""``torch.distributed._tensor``: the old name of ``distributed.tensor`` (older examples use it)."""

from ..tensor import DeviceMesh, DTensor, Replicate, Shard, distribute_tensor, init_device_mesh

__all__ = ["DTensor", "DeviceMesh", "Replicate", "Shard", "distribute_tensor", "init_device_mesh"]
