"""DistributedDataParallel's gradient reducer: buckets, readiness, all-reduce during backward.

Parameters are packed in reverse registration order (roughly the order backward produces their
gradients) into buckets of about ``bucket_cap_mb`` (the first one capped at 1 MB, as in PyTorch,
so communication starts early). A hook on each parameter copies its gradient (what ``.grad``
will hold once accumulated) into its bucket's flat buffer; when a bucket is full its averaging
all-reduce starts (non-blocking on MPI), in bucket order on every rank. When the last parameter
reports, every all-reduce is waited for and each ``.grad`` gets the average; the last parameter's
average is the value its hook returns, so the engine accumulates exactly that.
"""

from __future__ import annotations

from typing import Any

from ...autograd.node import AccumulateGrad
from ...backend import array_module
from ...distributed.backend_base import Backend, Pending
from ...distributed.reduce_op import ReduceOp
from ...tensor.tensor import Tensor, wrap

FIRST_BUCKET_BYTES = 1024 * 1024


class Bucket:
    """Parameters of one dtype and device whose gradients travel in one flat buffer."""

    def __init__(self, index: int, params: list[tuple[int, Any]]) -> None:
        self.index = index
        self.params = params  # (parameter index, parameter)
        first = params[0][1]._data
        xp = array_module(first)
        self.offsets: dict[int, tuple[int, int]] = {}
        n = 0
        for i, p in params:
            self.offsets[i] = (n, p._data.size)
            n += p._data.size
        self.flat = xp.zeros(n, dtype=first.dtype)
        self.waiting = 0
        self.pending: Pending | None = None


def assign_buckets(params: list[Any], cap_bytes: int) -> list[list[int]]:
    """Indices of ``params`` grouped into buckets: reverse order, one dtype and device per
    bucket, the first capped at ``min(1 MB, cap)``, the others at ``cap``."""
    buckets: list[list[int]] = []
    open_: dict[tuple[str, str], list[int]] = {}
    sizes: dict[tuple[str, str], int] = {}
    for i in reversed(range(len(params))):
        arr = params[i]._data
        key = (str(arr.dtype), type(arr).__name__)
        cur = open_.setdefault(key, [])
        cur.append(i)
        sizes[key] = sizes.get(key, 0) + int(arr.nbytes)
        limit = min(FIRST_BUCKET_BYTES, cap_bytes) if not buckets else cap_bytes
        if sizes[key] >= limit:
            buckets.append(cur)
            open_[key], sizes[key] = [], 0
    buckets.extend(b for b in open_.values() if b)
    return buckets


def reached_leaves(outputs: Any) -> set[int]:
    """ids of the leaf tensors whose gradients backward from ``outputs`` would reach."""
    stack: list[Any] = []

    def collect(obj: Any) -> None:
        if isinstance(obj, Tensor):
            if obj._grad_fn is not None:
                stack.append(obj._grad_fn)
            elif obj._requires_grad:
                stack.append(obj)
        elif isinstance(obj, (list, tuple)):
            for o in obj:
                collect(o)
        elif isinstance(obj, dict):
            for o in obj.values():
                collect(o)

    collect(outputs)
    seen: set[int] = set()
    leaves: set[int] = set()
    while stack:
        node = stack.pop()
        if isinstance(node, Tensor):
            leaves.add(id(node))
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        if type(node) is AccumulateGrad:
            var = node._ref()
            if var is not None:
                leaves.add(id(var))
            continue
        for e in node._next:
            if e is not None:
                stack.append(e[0])
    return leaves


class Reducer:
    """Averages the gradients of ``params`` across the ranks of ``pg`` during backward."""

    def __init__(
        self, params: list[Any], names: list[str], pg: Backend, cap_bytes: int, find_unused: bool
    ) -> None:
        self.params = params
        self.names = names
        self.pg = pg
        self.find_unused = find_unused
        self.buckets = [
            Bucket(k, [(i, params[i]) for i in idx])
            for k, idx in enumerate(assign_buckets(params, cap_bytes))
        ]
        self.bucket_of = {i: b for b in self.buckets for i, _ in b.params}
        self.expecting = False  # between a forward that syncs and the end of its backward
        self.started = False  # some gradient of this iteration has arrived
        self.ready: list[bool] = [False] * len(params)
        self.used = None
        self.next_launch = 0
        for i, p in enumerate(params):
            p.register_hook(self._hook_for(i))

    # ------------------------------------------------------------------ per iteration
    def prepare_check(self) -> None:
        """Refuse a new iteration while the previous backward left gradients unreduced."""
        if self.started:
            missing = [self.names[i] for i, r in enumerate(self.ready) if not r]
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting a "
                "new one. This error indicates that your module has parameters that were not "
                "used in producing loss. You can enable unused parameter detection by passing "
                "the keyword argument `find_unused_parameters=True` to "
                "`torch.nn.parallel.DistributedDataParallel`, and by making sure all `forward` "
                "function outputs participate in calculating loss. Parameters that did not "
                f"receive a gradient in the prior iteration: {', '.join(missing)}"
            )

    def prepare(self, outputs: Any) -> None:
        """Expect every parameter's gradient (or, finding unused ones, those ``outputs`` reach)."""
        self.prepare_check()
        self.expecting = True
        self.ready = [False] * len(self.params)
        self.next_launch = 0
        for b in self.buckets:
            b.waiting = len(b.params)
            b.pending = None
        self.used = None
        if self.find_unused:
            reached = reached_leaves(outputs)
            xp = array_module(self.buckets[0].flat)
            self.used = xp.zeros(len(self.params), dtype="int32")
            for i, p in enumerate(self.params):
                if id(p) in reached:
                    self.used[i] = 1
            for i, p in enumerate(self.params):
                if id(p) not in reached:  # ready now: its current gradient (or zeros) goes in
                    g = p._grad._data if p._grad is not None else None
                    self._mark_ready(i, g)

    def cancel(self) -> None:
        """Forget the expected backward (``no_sync``, or a forward with no backward)."""
        if not self.started:
            self.expecting = False

    # ------------------------------------------------------------------ hooks
    def _hook_for(self, i: int) -> Any:
        def hook(grad: Tensor) -> Tensor | None:
            if not self.expecting or self.ready[i]:
                return None
            self.started = True
            p = self.params[i]
            local = grad._data if p._grad is None else p._grad._data + grad._data
            return self._mark_ready(i, local, from_hook=True)

        return hook

    def _mark_ready(self, i: int, local: Any, from_hook: bool = False) -> Tensor | None:
        b = self.bucket_of[i]
        off, n = b.offsets[i]
        if local is None:
            b.flat[off : off + n] = 0
        else:
            b.flat[off : off + n] = local.reshape(-1)
        self.ready[i] = True
        b.waiting -= 1
        for k in range(self.next_launch):  # MPI progresses requests only inside MPI calls
            pending = self.buckets[k].pending
            if pending is not None:
                pending.is_completed()
        while self.next_launch < len(self.buckets) and self.buckets[self.next_launch].waiting == 0:
            nb = self.buckets[self.next_launch]
            nb.pending = self.pg.all_reduce(
                nb.flat, ReduceOp.AVG, f"DistributedDataParallel all_reduce (bucket {nb.index})"
            )
            self.next_launch += 1
        if self.next_launch == len(self.buckets):
            return self._finalize(i if from_hook else -1)
        return None

    def _finalize(self, current: int) -> Tensor | None:
        """Wait for every bucket, write the averages into ``.grad``; the current parameter's
        average is returned for the engine to accumulate."""
        globally_used = None
        if self.used is not None:
            name = "DistributedDataParallel unused-parameter map"
            self.pg.all_reduce(self.used, ReduceOp.MAX, name).wait()
            globally_used = self.used
        for b in self.buckets:
            if b.pending is not None:
                b.pending.wait()
        result = None
        for b in self.buckets:
            for i, p in b.params:
                if globally_used is not None and not int(globally_used[i]):
                    continue  # no rank used it: its .grad stays as it was
                off, n = b.offsets[i]
                avg = b.flat[off : off + n].reshape(p._data.shape)
                if i == current:
                    p._grad = None  # the engine now adopts (a copy of) the returned average
                    result = wrap(avg.copy())
                elif p._grad is None:
                    p._grad = wrap(avg.copy())
                else:
                    p._grad._data[...] = avg
                    p._grad._bump_version()
        self.expecting = self.started = False
        return result
