"""distributed.rpc across real worker processes (forked, on localhost): values, errors, RRefs,
futures, async_execution, timeouts and the shutdown barrier; init_rpc's argument checks."""

from __future__ import annotations

import os
import socket
import time

import numpy as np
import pytest

import autogradcli as torch
import autogradcli.distributed.rpc as rpc
import autogradcli.multiprocessing as mp
import autogradcli.nn as nn
from autogradcli.futures import Future


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def run_workers(fn, nprocs: int, *args) -> None:
    """``fn(rank, *args)`` in ``nprocs`` forked workers that join RPC as w0, w1, ..."""
    mp.spawn(_worker, args=(fn, nprocs, free_port(), args), nprocs=nprocs, start_method="fork")


def _worker(rank, fn, world_size, port, args):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = str(port)
    rpc.init_rpc(f"w{rank}", rank=rank, world_size=world_size)
    fn(rank, *args)
    rpc.shutdown()


def add(a, b):
    return a + b


def boom():
    raise ValueError("boom at the callee")


def slow(seconds):
    time.sleep(seconds)
    return seconds


def relay(to, a, b):
    """A nested call: this worker asks ``to``."""
    return rpc.rpc_sync(to, add, args=(a, b)) * 10


def fetch(rref):
    return rref.to_here()


def whoami():
    return rpc.get_worker_info().name


class Counter:
    def __init__(self, start):
        self.n = start

    def bump(self, by):
        self.n += by
        return self.n


@rpc.functions.async_execution
def later(x):
    fut = Future()
    result = fut.then(lambda f: f.wait() + 1)
    rpc.rpc_async(rpc.get_worker_info().id, add, args=(x, x)).add_done_callback(
        lambda f: fut.set_result(f.wait())
    )
    return result


def grad_info(t):
    return (t.requires_grad, t.is_leaf, type(t).__name__)


class Batcher:
    """As pytorch/examples' batch parameter server: an async_execution staticmethod whose callers
    all get their reply when the second one has arrived."""

    def __init__(self):
        self.future = Future()
        self.arrived = 0

    @staticmethod
    @rpc.functions.async_execution
    def arrive(rref, x):
        self = rref.local_value()
        self.arrived += 1
        fut = self.future
        if self.arrived == 2:
            fut.set_result(x * 100)
        return fut


def _calls(rank):
    if rank != 0:
        return
    a = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    # the destination by name, id or WorkerInfo; float32 and int64 kept
    for to in ("w1", 1, rpc.get_worker_info("w1")):
        out = rpc.rpc_sync(to, add, args=(a, 1.5))
        assert out.dtype == torch.float32
        np.testing.assert_array_equal(out.numpy(), a.numpy() + 1.5)
    ints = rpc.rpc_sync("w2", add, args=(torch.arange(3), torch.arange(3)))
    assert ints.dtype == torch.int64 and ints.tolist() == [0, 2, 4]
    p = rpc.rpc_sync("w1", nn.Parameter, args=(a,))
    assert isinstance(p, nn.Parameter) and p.requires_grad
    assert rpc.rpc_sync("w2", add, kwargs={"a": "x", "b": "y"}) == "xy"
    # outside a distributed autograd context a tensor that requires grad arrives as a leaf (torch)
    x = torch.ones(2, requires_grad=True) * 3
    assert rpc.rpc_sync("w1", grad_info, args=(x,)) == (True, True, "Tensor")
    batcher = rpc.remote("w2", Batcher)
    first = rpc.rpc_async("w2", Batcher.arrive, args=(batcher, 1))
    assert not first.done()
    assert rpc.rpc_sync("w2", Batcher.arrive, args=(batcher, 2)) == 200
    assert first.wait() == 200
    assert rpc.get_worker_info() == rpc.WorkerInfo("w0", 0)
    assert repr(rpc.get_worker_info("w2")) == "WorkerInfo(id=2, name=w2)"
    assert rpc.rpc_sync("w2", whoami) == "w2"
    # futures: rpc_async, wait_all, then
    futs = [rpc.rpc_async(f"w{i}", add, args=(i, 10)) for i in (1, 2)]
    assert torch.futures.wait_all(futs) == [11, 12]
    assert rpc.rpc_async("w1", add, args=(2, 3)).then(lambda f: f.wait() * 2).wait() == 10
    # a callback may itself wait on an RPC to the same worker
    chained = rpc.rpc_async("w1", add, args=(2, 3)).then(
        lambda f: rpc.rpc_sync("w1", add, args=(f.wait(), 1))
    )
    assert chained.wait() == 6
    # nested RPC, and RPC to oneself
    assert rpc.rpc_sync("w1", relay, args=("w2", 1, 2)) == 30
    assert rpc.rpc_sync("w0", add, args=(1, 1)) == 2
    # async_execution: the reply waits for the returned Future
    assert rpc.rpc_sync("w2", later, args=(5,)) == 11
    # errors re-raise here with their type and the remote traceback
    with pytest.raises(ValueError, match=r"(?s)On WorkerInfo\(id=1, name=w1\).*boom at the callee"):
        rpc.rpc_sync("w1", boom)
    try:
        rpc.rpc_sync("w1", boom)
    except ValueError as error:
        assert "in boom" in str(error)  # the callee's frame
    with pytest.raises(ValueError):
        rpc.rpc_async("w2", boom).wait()
    # a timeout marks the call with an error (as torch: RuntimeError)
    with pytest.raises(RuntimeError, match="RPC ran for more than set timeout"):
        rpc.rpc_sync("w1", slow, args=(0.5,), timeout=0.05)
    late = rpc.rpc_async("w2", slow, args=(0.3,), timeout=0.05)
    with pytest.raises(RuntimeError, match=r"RPC ran for more than set timeout \(50 ms\)"):
        late.wait()
    assert rpc.rpc_sync("w2", slow, args=(0.01,), timeout=5) == 0.01  # within its timeout
    with pytest.raises(ValueError, match="Unknown destination worker"):
        rpc.rpc_sync("nobody", add, args=(1, 2))


def test_rpc_sync_async_values_errors_and_timeouts():
    run_workers(_calls, 3)


def _rrefs(rank):
    if rank != 0:
        return
    r = rpc.remote("w1", Counter, args=(5,))
    assert r.owner() == rpc.WorkerInfo("w1", 1) and r.owner_name() == "w1"
    assert not r.is_owner()
    with pytest.raises(RuntimeError, match="non-local"):
        r.local_value()
    assert r.rpc_sync().bump(2) == 7
    assert r.rpc_async().bump(3).wait() == 10
    bumped = r.remote().bump(1)
    assert bumped.owner_name() == "w1" and bumped.to_here() == 11
    assert r.to_here().n == 11
    # an RRef passed to a third worker still reaches the owner's value
    assert rpc.rpc_sync("w2", fetch, args=(r,)).n == 11
    # an RRef this worker owns, fetched back by another worker
    mine = rpc.RRef(torch.ones(3))
    assert mine.is_owner() and mine.local_value().tolist() == [1.0, 1.0, 1.0]
    assert rpc.rpc_sync("w1", fetch, args=(mine,)).tolist() == [1.0, 1.0, 1.0]
    # remote()'s error surfaces at to_here
    failed = rpc.remote("w2", boom)
    with pytest.raises(ValueError, match="boom at the callee"):
        failed.to_here()


def test_remote_and_rref_proxies():
    run_workers(_rrefs, 3)


def _late_caller(rank, marker):
    if rank == 2:
        time.sleep(0.3)  # the others are already in shutdown: they must still serve this
        assert rpc.rpc_sync("w1", add, args=(2, 2)) == 4
        with open(marker, "w") as f:
            f.write(str(time.monotonic()))
    else:
        with open(f"{marker}.{rank}", "w") as f:
            f.write(str(time.monotonic()))


def test_shutdown_waits_for_every_worker(tmp_path):
    marker = str(tmp_path / "late")
    run_workers(_late_caller, 3, marker)
    assert os.path.exists(marker)


def test_after_shutdown_rpc_is_refused():
    run_workers(_after_shutdown, 2)


def _after_shutdown(rank):
    rpc.shutdown()
    with pytest.raises(RuntimeError, match="not been initialized"):
        rpc.rpc_sync("w0", add, args=(1, 2))
    rpc.init_rpc(f"w{rank}", rank=rank, world_size=2)  # _worker's shutdown needs a group


def test_init_rpc_checks_its_arguments(monkeypatch):
    monkeypatch.delenv("MASTER_ADDR", raising=False)
    monkeypatch.delenv("RANK", raising=False)
    with pytest.raises(ValueError, match="MASTER_ADDR expected, but not set"):
        rpc.init_rpc("w0", rank=0, world_size=1)
    with pytest.raises(ValueError, match="RANK"):
        rpc.init_rpc("w0", world_size=1)
    with pytest.raises(ValueError, match="out of range"):
        rpc.init_rpc("w0", rank=1, world_size=1)
    with pytest.raises(ValueError, match="init_method"):
        rpc.init_rpc(
            "w0",
            rank=0,
            world_size=1,
            rpc_backend_options=rpc.TensorPipeRpcBackendOptions(init_method="file:///x"),
        )
    with pytest.raises(RuntimeError, match="not been initialized"):
        rpc.get_worker_info()


def test_a_single_worker_group_over_tcp_init_method():
    options = rpc.TensorPipeRpcBackendOptions(
        num_worker_threads=2, rpc_timeout=5, init_method=f"tcp://localhost:{free_port()}"
    )
    rpc.init_rpc("solo", rank=0, world_size=1, rpc_backend_options=options)
    try:
        with pytest.raises(RuntimeError, match="already initialized"):
            rpc.init_rpc("solo", rank=0, world_size=1, rpc_backend_options=options)
        assert rpc.rpc_sync("solo", add, args=(2, 3)) == 5
    finally:
        rpc.shutdown()


def test_cuda_tensors_travel_through_host_memory(strict_cuda):
    """A CUDA tensor (the strict cupy stand-in) is pickled from the host copy; it arrives on the
    CPU with its values, dtype and requires_grad, and is noted for distributed autograd."""
    from autogradcli.distributed.rpc import wire

    t = torch.tensor([[1.5, -2.0]], device="cuda", requires_grad=True)
    data, grad_tensors = wire.dumps({"x": t, "n": 3})
    assert grad_tensors == [t]
    out, leaves = wire.loads(data)
    x = out["x"]
    assert x.device.type == "cpu" and x.dtype == torch.float32 and x.requires_grad
    assert x.tolist() == [[1.5, -2.0]] and out["n"] == 3 and leaves == [x]


def _same_name(rank, port):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = str(port)
    rpc.init_rpc("same", rank=rank, world_size=2)


def test_duplicate_worker_names_are_refused():
    with pytest.raises(mp.ProcessRaisedException, match="two workers are named 'same'"):
        mp.spawn(_same_name, args=(free_port(),), nprocs=2, start_method="fork")
