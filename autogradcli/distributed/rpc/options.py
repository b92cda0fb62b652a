"""RPC's plain records: ``WorkerInfo``, ``TensorPipeRpcBackendOptions``, ``BackendType``."""

from __future__ import annotations

import enum
from typing import Any, NamedTuple

DEFAULT_RPC_TIMEOUT_SEC = 60.0
DEFAULT_INIT_METHOD = "env://"
DEFAULT_NUM_WORKER_THREADS = 16


class WorkerInfo(NamedTuple):
    """A worker's ``name`` and ``id`` (its rank)."""

    name: str
    id: int

    def __repr__(self) -> str:
        return f"WorkerInfo(id={self.id}, name={self.name})"


class BackendType(enum.Enum):
    """The RPC backends: TENSORPIPE, served here by TCP sockets."""

    TENSORPIPE = "TENSORPIPE"


class TensorPipeRpcBackendOptions:
    """Options of ``init_rpc``: worker threads serving requests, the default timeout (s) and the
    rendezvous (``env://`` reads MASTER_ADDR/MASTER_PORT; ``tcp://host:port``)."""

    def __init__(
        self,
        *,
        num_worker_threads: int = DEFAULT_NUM_WORKER_THREADS,
        rpc_timeout: float = DEFAULT_RPC_TIMEOUT_SEC,
        init_method: str = DEFAULT_INIT_METHOD,
        device_maps: dict[str, Any] | None = None,
        devices: list[Any] | None = None,
        _transports: Any = None,
        _channels: Any = None,
    ) -> None:
        if num_worker_threads < 1:
            raise ValueError(f"num_worker_threads must be at least 1, got {num_worker_threads}")
        self.num_worker_threads = num_worker_threads
        self.rpc_timeout = rpc_timeout
        self.init_method = init_method
        self.device_maps = dict(device_maps or {})
        self.devices = list(devices or [])

    def set_device_map(self, to: str, device_map: dict[Any, Any]) -> None:
        """Kept for compatibility: tensors always travel through host memory here."""
        self.device_maps[to] = dict(device_map)
