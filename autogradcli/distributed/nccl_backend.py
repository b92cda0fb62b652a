"""The NCCL backend: collectives on GPU arrays through ``cupy.cuda.nccl``.

The communicator is created from a unique id made on rank 0 and handed to the others over MPI
(the bootstrap backend); with one process no MPI is needed. Each collective is enqueued on the
current CUDA stream and waited for by polling that stream with the process group's deadline;
past it the communicator is aborted and every rank ends (MPI abort), with a message naming the
collective. A rank uses GPU ``local_rank % device_count`` (its index among the ranks on its
node; the global rank where no local rank is given).

cupy is reached through the backend seam (``backend.cuda_module()``), so tests run this code on
the strict cupy stand-in with a fake communicator.
"""

from __future__ import annotations

import sys
from typing import Any

from .backend_base import Backend, Pending, check_avg_dtype
from .deadline import timeout_message, wait_until
from .reduce_op import ReduceOp


def _nccl_module(cuda: Any) -> Any:
    try:
        nccl = cuda.nccl
    except AttributeError:
        nccl = None
    if nccl is None or not getattr(nccl, "available", True):
        raise RuntimeError(
            "the 'nccl' backend needs cupy built with NCCL (cupy.cuda.nccl); install "
            "'autogradcli[cuda]' with a cupy wheel that ships NCCL, or use backend='mpi'"
        )
    return nccl


class NCCLBackend(Backend):
    """Collectives over NCCL; ``bootstrap`` (an MPIBackend, or None for one process) shares the id."""

    name = "nccl"

    def __init__(
        self,
        rank: int,
        size: int,
        timeout: float,
        bootstrap: Any = None,
        xp: Any = None,
        local_rank: int | None = None,
    ) -> None:
        from ..backend import cuda_module

        self.xp = xp if xp is not None else cuda_module()
        self.cuda = self.xp.cuda
        self.nccl = _nccl_module(self.cuda)
        self.rank, self.size, self.timeout = rank, size, timeout
        self.bootstrap = bootstrap
        count = self.cuda.runtime.getDeviceCount()
        self.device = self.cuda.Device((rank if local_rank is None else local_rank) % count)
        if hasattr(self.device, "use"):
            self.device.use()
        uid = self.nccl.get_unique_id() if rank == 0 else None
        if size > 1:
            if bootstrap is None:
                raise RuntimeError("the 'nccl' backend with several ranks needs MPI to start")
            uid = bootstrap.bcast_object(uid, 0)
        self.comm = self.nccl.NcclCommunicator(size, uid, rank)
        n = self.nccl
        self._types = {
            "float32": n.NCCL_FLOAT32,
            "float64": n.NCCL_FLOAT64,
            "float16": n.NCCL_FLOAT16,
            "int32": n.NCCL_INT32,
            "int64": n.NCCL_INT64,
            "int8": n.NCCL_INT8,
            "uint8": n.NCCL_UINT8,
            "bool": n.NCCL_UINT8,
        }

    # ------------------------------------------------------------------ helpers
    def _dtype(self, arr: Any, name: str) -> Any:
        t = self._types.get(str(arr.dtype))
        if t is None:
            raise TypeError(f"{name}: NCCL has no type for {arr.dtype}")
        return t

    def _op(self, op: ReduceOp, arr: Any) -> Any:
        n = self.nccl
        if arr.dtype.kind == "b":  # bytes 0/1: "any" is MAX, "all" is MIN
            return n.NCCL_MAX if op in (ReduceOp.SUM, ReduceOp.MAX) else n.NCCL_MIN
        return {
            ReduceOp.SUM: n.NCCL_SUM,
            ReduceOp.AVG: n.NCCL_SUM,
            ReduceOp.PRODUCT: n.NCCL_PROD,
            ReduceOp.MIN: n.NCCL_MIN,
            ReduceOp.MAX: n.NCCL_MAX,
        }[op]

    def _check_device(self, arr: Any, name: str) -> None:
        from ..backend import is_cpu_array

        if is_cpu_array(arr):
            raise RuntimeError(
                f"{name}: the 'nccl' backend needs CUDA tensors, got a CPU tensor (move it with "
                ".cuda(), or use backend='mpi' for CPU tensors)"
            )

    def _pending(self, stream: Any, name: str, finish: Any = None) -> Pending:
        def done() -> bool:
            return bool(stream.done)

        def wait() -> None:
            wait_until(done, self.timeout, lambda: self._abort(name))
            if finish is not None:
                finish()

        return Pending(wait, done)

    def _abort(self, name: str) -> None:
        sys.stderr.write(timeout_message(self.rank, name, self.timeout) + "\n")
        sys.stderr.flush()
        self.comm.abort()
        if self.bootstrap is not None:
            self.bootstrap.abort(1)
        raise RuntimeError(timeout_message(self.rank, name, self.timeout))

    # ------------------------------------------------------------------ collectives
    def all_reduce(self, arr: Any, op: ReduceOp, name: str = "all_reduce") -> Pending:
        self._check_device(arr, name)
        if op == ReduceOp.AVG:
            check_avg_dtype(arr, name)
        stream = self.cuda.get_current_stream()
        ptr = arr.data.ptr
        self.comm.allReduce(
            ptr, ptr, arr.size, self._dtype(arr, name), self._op(op, arr), stream.ptr
        )
        finish = None
        if op == ReduceOp.AVG:
            size = self.size

            def finish() -> None:
                arr[...] /= size

        return self._pending(stream, name, finish)

    def broadcast(self, arr: Any, src: int, name: str = "broadcast") -> Pending:
        self._check_device(arr, name)
        stream = self.cuda.get_current_stream()
        self.comm.bcast(arr.data.ptr, arr.size, self._dtype(arr, name), src, stream.ptr)
        return self._pending(stream, name)

    def all_gather(self, out: Any, arr: Any, name: str = "all_gather") -> Pending:
        self._check_device(arr, name)
        self._check_device(out, name)
        stream = self.cuda.get_current_stream()
        self.comm.allGather(
            arr.data.ptr, out.data.ptr, arr.size, self._dtype(arr, name), stream.ptr
        )
        return self._pending(stream, name)

    def reduce_scatter(
        self, out: Any, arr: Any, op: ReduceOp, name: str = "reduce_scatter"
    ) -> Pending:
        self._check_device(arr, name)
        self._check_device(out, name)
        if op == ReduceOp.AVG:
            check_avg_dtype(arr, name)
        stream = self.cuda.get_current_stream()
        self.comm.reduceScatter(
            arr.data.ptr,
            out.data.ptr,
            out.size,
            self._dtype(arr, name),
            self._op(op, arr),
            stream.ptr,
        )
        finish = None
        if op == ReduceOp.AVG:
            size = self.size

            def finish() -> None:
                out[...] /= size

        return self._pending(stream, name, finish)

    def barrier(self, name: str = "barrier") -> Pending:
        """An all-reduce of one byte on the device, as PyTorch's NCCL barrier does."""
        one = self.xp.zeros(1, dtype="uint8")
        return self.all_reduce(one, ReduceOp.SUM, name)

    def close(self) -> None:
        destroy = getattr(self.comm, "destroy", None)
        if destroy is not None:
            destroy()


__all__ = ["NCCLBackend"]
