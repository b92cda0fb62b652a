"""``nn.parallel.DistributedDataParallel``: one model replica per rank, gradients averaged.

At construction rank 0's parameters and buffers are copied to every rank (so all replicas start
equal) and the parameters are packed into buckets (``reducer.py``). Each forward that may be
followed by a gradient-synchronising backward arms the reducer (and, with
``broadcast_buffers``, first copies rank 0's buffers, as PyTorch does); during backward each
bucket's average is computed as soon as its gradients are ready, and by the end of backward every
``.grad`` holds the average over ranks. ``no_sync()`` skips that, so gradients accumulate locally.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from ...autograd.grad_mode import is_grad_enabled, no_grad
from ...backend import array_module
from ...distributed.process_group import _require
from ...distributed.reduce_op import ReduceOp
from ..module import Module
from .reducer import Reducer


def broadcast_coalesced(tensors: list[Any], pg: Any, src: int = 0, what: str = "broadcast") -> None:
    """Copy rank ``src``'s tensors to every rank: one broadcast per dtype and device."""
    groups: dict[tuple[str, str], list[Any]] = {}
    for t in tensors:
        groups.setdefault((str(t._data.dtype), type(t._data).__name__), []).append(t)
    for group in groups.values():
        xp = array_module(group[0]._data)
        flat = xp.concatenate([t._data.reshape(-1) for t in group])
        pg.broadcast(flat, src, f"DistributedDataParallel {what}").wait()
        off = 0
        for t in group:
            n = t._data.size
            t._data[...] = flat[off : off + n].reshape(t._data.shape)
            t._bump_version()
            off += n


def _check_same_model(params: list[Any], pg: Any) -> None:
    """Every rank must wrap the same parameter shapes, or the buckets would not line up."""
    import numpy as np

    sig = np.array([len(params), sum(int(p._data.size) for p in params)], dtype=np.int64)
    hi, lo = sig.copy(), sig.copy()
    pg.all_reduce(hi, ReduceOp.MAX, "DistributedDataParallel parameter check").wait()
    pg.all_reduce(lo, ReduceOp.MIN, "DistributedDataParallel parameter check").wait()
    if not (hi == lo).all():
        raise RuntimeError(
            f"DistributedDataParallel: rank {pg.rank} has {sig[0]} parameters with {sig[1]} "
            f"elements, but the ranks range over {lo[0]}..{hi[0]} parameters and "
            f"{lo[1]}..{hi[1]} elements; every rank must wrap the same model"
        )


class DistributedDataParallel(Module):
    """Data parallelism across the ranks of the default process group (PyTorch's signature;
    ``device_ids``/``output_device``/``dim`` are accepted for compatibility: one device per rank)."""

    def __init__(
        self,
        module: Module,
        device_ids: Any = None,
        output_device: Any = None,
        dim: int = 0,
        broadcast_buffers: bool = True,
        init_sync: bool = True,
        process_group: Any = None,
        bucket_cap_mb: float | None = None,
        find_unused_parameters: bool = False,
        check_reduction: bool = False,
        gradient_as_bucket_view: bool = False,
        static_graph: bool = False,
        **unsupported: Any,
    ) -> None:
        super().__init__()
        if unsupported:
            raise TypeError(
                "DistributedDataParallel: unsupported argument(s) "
                f"{', '.join(sorted(unsupported))} (autogradcli implements the data-parallel core)"
            )
        pg = _require(process_group)
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        if not named:
            raise RuntimeError(
                "DistributedDataParallel is not needed when a module doesn't have any parameter "
                "that requires a gradient."
            )
        self.module = module
        self.device_ids = device_ids
        self.output_device = output_device
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = True
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        self._pg = pg
        params = [p for _, p in named]
        _check_same_model(params, pg)
        if init_sync and pg.size > 1:
            with no_grad():
                broadcast_coalesced(
                    [*module.parameters(), *(b for b in module.buffers() if b is not None)],
                    pg,
                    0,
                    "broadcast of rank 0's parameters and buffers",
                )
        self.reducer = Reducer(
            params, [n for n, _ in named], pg, self.bucket_bytes_cap, find_unused_parameters
        )

    @property
    def process_group(self) -> Any:
        return self._pg

    def _sync_buffers(self) -> None:
        buffers = [b for b in self.module.buffers() if b is not None]
        if buffers and self._pg.size > 1:
            with no_grad():
                broadcast_coalesced(buffers, self._pg, 0, "broadcast of rank 0's buffers")

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        sync = is_grad_enabled() and self.require_backward_grad_sync
        if sync:
            self.reducer.prepare_check()
        if self.broadcast_buffers and self.training:
            self._sync_buffers()
        out = self.module(*inputs, **kwargs)
        if sync:
            self.reducer.prepare(out)
        else:
            self.reducer.cancel()
        return out

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Backward inside the block accumulates gradients locally, without communicating."""
        prev = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = prev


__all__ = ["DistributedDataParallel", "broadcast_coalesced"]
