"""Data-parallel communication with ``torch.distributed``'s API, on MPI (CPU) and NCCL (CUDA).

Start ranks with the MPI launcher (``mpiexec -n 2 python train.py``); ``init_process_group("mpi")``
reads the ranks from it. mpi4py (and cupy, for NCCL) are imported only when a group starts.
"""

from .backend_base import Backend
from .collectives import (
    Work,
    all_gather,
    all_gather_into_tensor,
    all_reduce,
    barrier,
    broadcast,
    reduce_scatter,
    reduce_scatter_tensor,
)
from .deadline import DistTimeoutError
from .process_group import (
    default_pg_timeout,
    destroy_process_group,
    get_backend,
    get_rank,
    get_world_size,
    init_process_group,
    is_available,
    is_initialized,
    is_mpi_available,
    is_nccl_available,
)
from .reduce_op import ReduceOp

__all__ = [
    "Backend",
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
    "get_rank",
    "get_world_size",
    "init_process_group",
    "is_available",
    "is_initialized",
    "is_mpi_available",
    "is_nccl_available",
    "reduce_scatter",
    "reduce_scatter_tensor",
]
