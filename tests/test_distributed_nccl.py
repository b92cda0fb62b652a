"""The NCCL backend on CI: the strict cupy stand-in with a fake ``cupy.cuda.nccl`` communicator.

Ranks are threads; the fake communicator reads and writes the device buffers at the pointers it
is given (as NCCL does), checks each call's datatype and count, and that it is enqueued on the
calling rank's current stream; the streams report "not done" for a few polls, so the backend's
deadline loop is exercised. A real-GPU check runs where cupy with NCCL sees a GPU.
"""

from __future__ import annotations

import ctypes
import threading
import types

import numpy as np
import pytest
from strict_xp import StrictArray, strict_cupy

import autogradcli as ag
import autogradcli.distributed as dist
from autogradcli.distributed.nccl_backend import NCCLBackend

TYPES = {
    "float32": 7,
    "float64": 8,
    "float16": 6,
    "int32": 2,
    "int64": 4,
    "int8": 0,
    "uint8": 1,
}
OPS = {"sum": 0, "prod": 1, "max": 2, "min": 3}


class FakeStream:
    def __init__(self, ptr: int) -> None:
        self.ptr = ptr
        self.polls_left = 0
        self.never = False

    @property
    def done(self) -> bool:
        if self.never:
            return False
        if self.polls_left > 0:
            self.polls_left -= 1
            return False
        return True


class World:
    """What the ranks' communicators share: the id, a barrier, and each call's buffers."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.barrier = threading.Barrier(size, timeout=20)
        self.calls: dict[int, tuple] = {}
        self.uid = None
        self.log: list[tuple] = []


def _view(ptr: int, count: int, dtype_code: int) -> np.ndarray:
    dtype = np.dtype({v: k for k, v in TYPES.items()}[dtype_code])
    buf = (ctypes.c_char * (count * dtype.itemsize)).from_address(ptr)
    return np.frombuffer(buf, dtype=dtype)


class FakeCommunicator:
    def __init__(self, world: World, ndev: int, uid: tuple, rank: int, cuda: types.SimpleNamespace):
        assert ndev == world.size and uid == world.uid, "every rank must use rank 0's id"
        self.world, self.rank, self.cuda = world, rank, cuda
        self.aborted = self.destroyed = False

    def _collective(self, kind: str, stream: int, compute) -> None:
        current = self.cuda.get_current_stream()
        assert stream == current.ptr, (
            f"{kind} enqueued on stream {stream}, current is {current.ptr}"
        )
        current.polls_left = 3
        w = self.world
        w.barrier.wait()
        result = compute()  # every rank reads every rank's input before anyone writes
        w.barrier.wait()
        result()
        w.barrier.wait()
        w.log.append((self.rank, kind))

    def _register(self, send: int, recv: int, count: int, dtype: int) -> None:
        self.world.calls[self.rank] = (send, recv, count, dtype)

    def allReduce(self, send, recv, count, dtype, op, stream):
        self._register(send, recv, count, dtype)
        reducer = {0: np.sum, 1: np.prod, 2: np.max, 3: np.min}[op]

        def compute():
            ins = [
                _view(s, count, dtype).copy()
                for s, _, _, _ in (self.world.calls[r] for r in range(self.world.size))
            ]
            out = reducer(np.stack(ins), axis=0).astype(ins[0].dtype)
            return lambda: _view(recv, count, dtype).__setitem__(slice(None), out)

        self._collective("allReduce", stream, compute)

    def bcast(self, buff, count, dtype, root, stream):
        self._register(buff, buff, count, dtype)

        def compute():
            src = _view(self.world.calls[root][0], count, dtype).copy()
            return lambda: _view(buff, count, dtype).__setitem__(slice(None), src)

        self._collective("bcast", stream, compute)

    def allGather(self, send, recv, count, dtype, stream):
        self._register(send, recv, count, dtype)

        def compute():
            ins = [
                _view(self.world.calls[r][0], count, dtype).copy() for r in range(self.world.size)
            ]
            return lambda: _view(recv, count * self.world.size, dtype).__setitem__(
                slice(None), np.concatenate(ins)
            )

        self._collective("allGather", stream, compute)

    def reduceScatter(self, send, recv, recvcount, dtype, op, stream):
        self._register(send, recv, recvcount, dtype)
        reducer = {0: np.sum, 1: np.prod, 2: np.max, 3: np.min}[op]
        n = self.world.size

        def compute():
            ins = [_view(self.world.calls[r][0], recvcount * n, dtype).copy() for r in range(n)]
            full = reducer(np.stack(ins), axis=0).astype(ins[0].dtype)
            mine = full[self.rank * recvcount : (self.rank + 1) * recvcount]
            return lambda: _view(recv, recvcount, dtype).__setitem__(slice(None), mine)

        self._collective("reduceScatter", stream, compute)

    def abort(self):
        self.aborted = True

    def destroy(self):
        self.destroyed = True


def fake_nccl_xp(world: World, stream_ptr: int) -> types.SimpleNamespace:
    """A cupy-like namespace for one rank: strict_cupy arrays, a fake cuda with its stream and NCCL."""
    stream = FakeStream(stream_ptr)
    cuda = types.SimpleNamespace()
    cuda.runtime = types.SimpleNamespace(getDeviceCount=lambda: 1)
    cuda.Device = lambda i: types.SimpleNamespace(id=i, use=lambda: None)
    cuda.get_current_stream = lambda: stream

    def uid():
        world.uid = tuple(range(128))
        return world.uid

    nccl = types.SimpleNamespace(
        get_unique_id=uid,
        NcclCommunicator=lambda n, u, r: FakeCommunicator(world, n, u, r, cuda),
        **{f"NCCL_{k.upper()}": v for k, v in TYPES.items()},
        **{f"NCCL_{k.upper()}": v for k, v in OPS.items()},
    )
    cuda.nccl = nccl
    xp = types.SimpleNamespace(cuda=cuda, zeros=strict_cupy.zeros)
    return xp


class Bootstrap:
    """The MPI side of the id exchange, between threads."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.aborted = None

    def bcast_object(self, obj, src):
        self.world.barrier.wait()
        return self.world.uid

    def abort(self, code):
        self.aborted = code


def run_ranks(size: int, body, timeout: float = 30.0):
    """Run ``body(rank, backend)`` on ``size`` threads; each rank's return value, errors re-raised."""
    world = World(size)
    results: list = [None] * size
    errors: list = []

    def main(rank: int) -> None:
        try:
            xp = fake_nccl_xp(world, stream_ptr=1000 + rank)
            pg = NCCLBackend(rank, size, timeout, bootstrap=Bootstrap(world), xp=xp)
            results[rank] = body(rank, pg)
        except BaseException as e:  # re-raised in the test's thread
            errors.append(e)
            world.barrier.abort()

    threads = [threading.Thread(target=main, args=(r,)) for r in range(size)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    if errors:
        raise errors[0]
    return results, world


def rank_data(rank: int, dtype: str, shape=(3, 4)) -> np.ndarray:
    g = np.random.default_rng(rank * 31 + len(dtype))
    if dtype == "bool":
        return g.random(shape) < 0.5
    if dtype.startswith("int"):
        return g.integers(-3, 4, size=shape).astype(dtype)
    return g.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("size", [2, 3])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_nccl_collectives_on_device_arrays(strict_cuda, size, dtype):
    ops = [dist.ReduceOp.SUM, dist.ReduceOp.PRODUCT, dist.ReduceOp.MIN, dist.ReduceOp.MAX]
    if dtype.startswith("float"):
        ops.append(dist.ReduceOp.AVG)

    def body(rank, pg):
        got = {}
        for op in ops:
            t = ag.tensor(rank_data(rank, dtype), device="cuda")
            assert type(t._data) is StrictArray
            dist.all_reduce(t, op=op, group=pg)
            got[("all_reduce", op)] = t.cpu().numpy()
        t = ag.tensor(rank_data(rank, dtype), device="cuda")
        dist.broadcast(t, src=size - 1, group=pg)
        got["broadcast"] = t.cpu().numpy()
        out = ag.zeros(size * 3, 4, dtype=dtype, device="cuda")
        dist.all_gather_into_tensor(out, ag.tensor(rank_data(rank, dtype), device="cuda"), group=pg)
        got["all_gather"] = out.cpu().numpy()
        out = ag.zeros(1, 4, dtype=dtype, device="cuda")
        big = ag.tensor(rank_data(rank, dtype, (size, 4)), device="cuda")
        dist.reduce_scatter_tensor(out, big, group=pg)
        got["reduce_scatter"] = out.cpu().numpy()
        dist.barrier(group=pg)
        pg.close()
        return got

    results, world = run_ranks(size, body)
    everyone = np.stack([rank_data(r, dtype) for r in range(size)])
    for rank, got in enumerate(results):
        for op in ops:
            if dtype == "bool":
                any_op = op in (dist.ReduceOp.SUM, dist.ReduceOp.MAX)
                want = everyone.any(0) if any_op else everyone.all(0)
            else:
                want = {
                    dist.ReduceOp.SUM: lambda: everyone.sum(0, dtype=everyone.dtype),
                    dist.ReduceOp.AVG: lambda: (everyone.sum(0) / size).astype(everyone.dtype),
                    dist.ReduceOp.PRODUCT: lambda: everyone.prod(0, dtype=everyone.dtype),
                    dist.ReduceOp.MIN: lambda: everyone.min(0),
                    dist.ReduceOp.MAX: lambda: everyone.max(0),
                }[op]()
            np.testing.assert_allclose(
                got[("all_reduce", op)], want, rtol=1e-6, err_msg=f"{op} rank {rank}"
            )
            assert got[("all_reduce", op)].dtype == np.dtype(dtype)
        np.testing.assert_array_equal(got["broadcast"], everyone[size - 1])
        np.testing.assert_array_equal(got["all_gather"], everyone.reshape(size * 3, 4))
        big = np.stack([rank_data(r, dtype, (size, 4)) for r in range(size)])
        want = big.any(0) if dtype == "bool" else big.sum(0, dtype=big.dtype)
        np.testing.assert_allclose(got["reduce_scatter"], want[rank : rank + 1], rtol=1e-6)
    assert sum(1 for _, kind in world.log if kind == "allReduce") == size * (
        len(ops) + 1
    )  # + barrier


def test_nccl_refuses_cpu_tensors_and_integer_avg(strict_cuda):
    def body(rank, pg):
        with pytest.raises(RuntimeError, match="needs CUDA tensors, got a CPU tensor"):
            dist.all_reduce(ag.ones(3), group=pg)
        with pytest.raises(
            TypeError, match=r"ReduceOp\.AVG needs a floating-point tensor, got int64"
        ):
            dist.all_reduce(
                ag.ones(3, dtype="int64", device="cuda"), op=dist.ReduceOp.AVG, group=pg
            )

    run_ranks(2, body)


def test_nccl_timeout_aborts_the_communicator_and_names_the_collective(strict_cuda):
    world = World(1)
    xp = fake_nccl_xp(world, stream_ptr=7)
    boot = Bootstrap(world)
    pg = NCCLBackend(0, 1, 0.05, bootstrap=boot, xp=xp)
    xp.cuda.get_current_stream().never = True
    t = ag.ones(4, device="cuda")
    with pytest.raises(
        RuntimeError, match=r"rank 0: broadcast did not complete within the 0.05 s timeout"
    ):
        dist.broadcast(t, src=0, group=pg)
    assert pg.comm.aborted and boot.aborted == 1


def test_nccl_just_inside_the_timeout_completes(strict_cuda):
    """A stream that needs several polls but finishes within the deadline is waited for."""
    world = World(1)
    xp = fake_nccl_xp(world, stream_ptr=7)
    pg = NCCLBackend(0, 1, 30.0, bootstrap=None, xp=xp)
    t = ag.full((4,), 2.0, device="cuda")
    dist.all_reduce(t, op=dist.ReduceOp.PRODUCT, group=pg)
    assert t.cpu().tolist() == [2.0] * 4 and not pg.comm.aborted


@pytest.mark.cuda
def test_nccl_on_a_real_gpu_one_rank():
    cupy = pytest.importorskip("cupy")
    try:
        from cupy.cuda import nccl

        if cupy.cuda.runtime.getDeviceCount() == 0 or not nccl.available:
            pytest.skip("no GPU or cupy without NCCL")
    except Exception as e:
        pytest.skip(f"no usable GPU/NCCL: {e}")
    pg = NCCLBackend(0, 1, 60.0)
    t = ag.arange(6, dtype="float32", device="cuda")
    dist.all_reduce(t, op=dist.ReduceOp.AVG, group=pg)
    assert t.cpu().tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    out = ag.zeros(6, device="cuda")
    dist.all_gather_into_tensor(out, t, group=pg)
    assert out.cpu().tolist() == t.cpu().tolist()
    pg.close()
