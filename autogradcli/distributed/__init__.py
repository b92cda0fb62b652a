"""Data-parallel communication with ``torch.distributed``'s API, on MPI (CPU) and NCCL (CUDA).

Start ranks with the MPI launcher (``mpiexec -n 2 python train.py``); ``init_process_group("mpi")``
reads the ranks from it. mpi4py (and cupy, for NCCL) are imported only when a group starts.
"""

from .._utils.lazy import lazy_attributes

# each name is imported from its module on first use (see _utils/lazy.py)
_LAZY = {
    "Backend": ".backend_base:Backend",
    "DistTimeoutError": ".deadline:DistTimeoutError",
    "ReduceOp": ".reduce_op:ReduceOp",
    "Work": ".collectives:Work",
    "all_gather": ".collectives:all_gather",
    "all_gather_into_tensor": ".collectives:all_gather_into_tensor",
    "all_reduce": ".collectives:all_reduce",
    "barrier": ".collectives:barrier",
    "broadcast": ".collectives:broadcast",
    "default_pg_timeout": ".process_group:default_pg_timeout",
    "destroy_process_group": ".process_group:destroy_process_group",
    "get_backend": ".process_group:get_backend",
    "get_default_backend_for_device": ".process_group:get_default_backend_for_device",
    "get_rank": ".process_group:get_rank",
    "get_world_size": ".process_group:get_world_size",
    "init_process_group": ".process_group:init_process_group",
    "is_available": ".process_group:is_available",
    "is_initialized": ".process_group:is_initialized",
    "is_mpi_available": ".process_group:is_mpi_available",
    "is_nccl_available": ".process_group:is_nccl_available",
    "reduce_scatter": ".collectives:reduce_scatter",
    "reduce_scatter_tensor": ".collectives:reduce_scatter_tensor",
    "DeviceMesh": ".device_mesh:DeviceMesh",
    "init_device_mesh": ".device_mesh:init_device_mesh",
    "autograd": ".autograd",
    "device_mesh": ".device_mesh",
    "fsdp": ".fsdp",
    "optim": ".optim",
    "rpc": ".rpc",
    "tensor": ".tensor",
}
__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)

__all__ = [
    "Backend",
    "DeviceMesh",
    "DistTimeoutError",
    "ReduceOp",
    "Work",
    "all_gather",
    "all_gather_into_tensor",
    "all_reduce",
    "barrier",
    "broadcast",
    "default_pg_timeout",
    "destroy_process_group",
    "get_backend",
    "get_default_backend_for_device",
    "get_rank",
    "get_world_size",
    "init_device_mesh",
    "init_process_group",
    "is_available",
    "is_initialized",
    "is_mpi_available",
    "is_nccl_available",
    "reduce_scatter",
    "reduce_scatter_tensor",
]
