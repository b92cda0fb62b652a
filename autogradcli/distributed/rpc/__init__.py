"""``torch.distributed.rpc`` on TCP sockets: ``init_rpc``, ``rpc_sync``, ``rpc_async``,
``remote`` and ``RRef``, ``get_worker_info``, ``shutdown``. Functions run by reference on the
callee, as in torch: only connect workers that trust each other."""

from . import functions
from .api import (
    get_worker_info,
    init_rpc,
    is_initialized,
    remote,
    rpc_async,
    rpc_sync,
    shutdown,
)
from .options import BackendType, TensorPipeRpcBackendOptions, WorkerInfo
from .rref import RRef


def is_available() -> bool:
    """True: RPC is built in (TCP sockets, no extra package)."""
    return True


__all__ = [
    "BackendType",
    "RRef",
    "TensorPipeRpcBackendOptions",
    "WorkerInfo",
    "functions",
    "get_worker_info",
    "init_rpc",
    "is_available",
    "is_initialized",
    "remote",
    "rpc_async",
    "rpc_sync",
    "shutdown",
]
