"""``torch.distributed.rpc``'s functions: ``init_rpc``, ``rpc_sync``, ``rpc_async``, ``remote``,
``get_worker_info`` and ``shutdown`` (a barrier of every worker)."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from typing import Any

from ...futures import Future
from .agent import RpcAgent
from .functions import async_execution
from .options import BackendType, TensorPipeRpcBackendOptions, WorkerInfo

_agent: RpcAgent | None = None
_barrier_lock = threading.Lock()
_barrier: list[Any] = [0, None]  # arrivals so far, the future they wait on (on rank 0)


def current_agent() -> RpcAgent:
    """This worker's agent (RuntimeError before ``init_rpc`` or after ``shutdown``)."""
    if _agent is None:
        raise RuntimeError(
            "RPC has not been initialized. Call torch.distributed.rpc.init_rpc first."
        )
    return _agent


def is_initialized() -> bool:
    """Whether this process has joined RPC (``init_rpc`` called, ``shutdown`` not yet)."""
    return _agent is not None


def init_rpc(
    name: str,
    backend: BackendType | None = None,
    rank: int = -1,
    world_size: int | None = None,
    rpc_backend_options: TensorPipeRpcBackendOptions | None = None,
) -> None:
    """Join the RPC group as ``name`` with ``rank`` of ``world_size`` (RANK/WORLD_SIZE when not
    given), meeting the others at MASTER_ADDR:MASTER_PORT (or the options' ``init_method``)."""
    global _agent
    if _agent is not None:
        raise RuntimeError("RPC is already initialized")
    if backend is not None and backend != BackendType.TENSORPIPE:
        raise ValueError(f"unsupported RPC backend {backend!r}: use BackendType.TENSORPIPE")
    if not isinstance(name, str) or not name:
        raise ValueError(f"the worker name must be a non-empty string, got {name!r}")
    if rank == -1:
        rank = _env_int("RANK", "rank")
    if world_size is None:
        world_size = _env_int("WORLD_SIZE", "world_size")
    if not 0 <= rank < world_size:
        raise ValueError(f"rank {rank} is out of range for world_size {world_size}")
    _agent = RpcAgent(name, rank, world_size, rpc_backend_options or TensorPipeRpcBackendOptions())
    _agent.start()


def _env_int(key: str, arg: str) -> int:
    if key not in os.environ:
        raise ValueError(f"init_rpc: pass {arg}= or set the environment variable {key}")
    return int(os.environ[key])


def get_worker_info(worker_name: str | None = None) -> WorkerInfo:
    """The WorkerInfo of ``worker_name`` (this worker's when None)."""
    agent = current_agent()
    return agent.info if worker_name is None else agent.worker(worker_name)


def _timeout(agent: RpcAgent, timeout: float) -> float | None:
    seconds = agent.options.rpc_timeout if timeout is None or timeout < 0 else timeout
    return None if seconds == 0 else seconds


def rpc_async(
    to: Any, func: Callable, args: Any = None, kwargs: Any = None, timeout: float = -1.0
) -> Future:
    """Run ``func(*args, **kwargs)`` on worker ``to`` (name, id or WorkerInfo); a Future."""
    agent = current_agent()
    return agent.call(
        agent.worker(to).id, func, tuple(args or ()), dict(kwargs or {}), _timeout(agent, timeout)
    )


def rpc_sync(
    to: Any, func: Callable, args: Any = None, kwargs: Any = None, timeout: float = -1.0
) -> Any:
    """Run ``func(*args, **kwargs)`` on worker ``to`` and return its result (its error raises
    here, with the remote traceback in the message)."""
    return rpc_async(to, func, args, kwargs, timeout).wait()


def remote(
    to: Any, func: Callable, args: Any = None, kwargs: Any = None, timeout: float = -1.0
) -> Any:
    """Run ``func`` on worker ``to``, keep the result there, and return an RRef to it."""
    from .rref import RRef

    agent = current_agent()
    owner = agent.worker(to)
    rref_id = agent.new_rref_id()
    args = (rref_id, func, tuple(args or ()), dict(kwargs or {}))
    agent.call(owner.id, _create_owned, args, {}, _timeout(agent, timeout))
    return RRef._existing(owner, rref_id)


def _create_owned(rref_id: Any, func: Callable, args: tuple, kwargs: dict) -> None:
    slot = current_agent().owned(rref_id)
    try:
        value = func(*args, **kwargs)
    except Exception as error:
        slot.set_exception(error)
        raise
    slot.set_result(value)


@async_execution
def _arrive(world_size: int) -> Future:
    with _barrier_lock:
        if _barrier[1] is None:
            _barrier[:] = [0, Future()]
        _barrier[0] += 1
        fut = _barrier[1]
        complete = _barrier[0] == world_size
        if complete:
            _barrier[:] = [0, None]
    if complete:
        fut.set_result(None)
    return fut


def shutdown(graceful: bool = True, timeout: float = 0) -> None:
    """Leave RPC. Graceful: wait for this worker's outstanding RPCs, then for every worker to
    reach shutdown, so no worker stops serving while another still needs it."""
    global _agent
    agent = current_agent()
    if graceful:
        for fut in agent.outstanding():
            with contextlib.suppress(Exception):  # its caller sees the error
                fut.wait()
        rpc_sync(0, _arrive, args=(len(agent.workers),), timeout=0)
    agent.stop(timeout or agent.options.rpc_timeout or 60.0)
    _agent = None
