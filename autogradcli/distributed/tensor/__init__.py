"""``torch.distributed.tensor``: DTensor with its placements, and (``.parallel``) tensor
parallelism of ``nn.Linear`` layers on a 1-D DeviceMesh."""

from ..device_mesh import DeviceMesh, init_device_mesh
from .dtensor import DTensor, distribute_tensor
from .placement_types import Placement, Replicate, Shard

__all__ = [
    "DTensor",
    "DeviceMesh",
    "Placement",
    "Replicate",
    "Shard",
    "distribute_tensor",
    "init_device_mesh",
]
