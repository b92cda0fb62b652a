"""Every collective, op and dtype on this rank against a numpy reference (run under mpiexec).

Each rank draws every rank's data from the same seeds, so each can compute the expected result
by itself. Any mismatch raises, which aborts every rank (non-zero exit).
"""

import numpy as np

import autogradcli as ag
import autogradcli.distributed as dist

dist.init_process_group("mpi")
rank, size = dist.get_rank(), dist.get_world_size()

DTYPES = ["float32", "float64", "int32", "int64", "bool"]
OPS = [
    dist.ReduceOp.SUM,
    dist.ReduceOp.AVG,
    dist.ReduceOp.PRODUCT,
    dist.ReduceOp.MIN,
    dist.ReduceOp.MAX,
]


def data(r: int, dtype: str, shape=(3, 5), salt: int = 0) -> np.ndarray:
    g = np.random.default_rng(1000 * r + 7 * salt + len(dtype))
    if dtype == "bool":
        return g.random(shape) < 0.5
    if dtype.startswith("int"):
        return g.integers(-3, 4, size=shape).astype(dtype)
    return g.standard_normal(shape).astype(dtype)


def reference(op, arrays):
    stack = np.stack(arrays)
    if stack.dtype == np.bool_:
        return stack.any(0) if op in (dist.ReduceOp.SUM, dist.ReduceOp.MAX) else stack.all(0)
    if op == dist.ReduceOp.SUM:
        return stack.sum(0, dtype=stack.dtype)
    if op == dist.ReduceOp.AVG:
        return (stack.sum(0, dtype=stack.dtype) / len(arrays)).astype(stack.dtype)
    if op == dist.ReduceOp.PRODUCT:
        return stack.prod(0, dtype=stack.dtype)
    if op == dist.ReduceOp.MIN:
        return stack.min(0)
    return stack.max(0)


def same(got, want, what, dtype):
    got = got.numpy() if hasattr(got, "numpy") else got
    assert got.dtype == np.dtype(dtype), f"{what}: dtype {got.dtype}, want {dtype}"
    if dtype.startswith("float"):
        tol = 1e-6 if dtype == "float32" else 1e-13
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


checked = 0
for dtype in DTYPES:
    for op in OPS:
        mine = data(rank, dtype)
        everyone = [data(r, dtype) for r in range(size)]
        if op == dist.ReduceOp.AVG and dtype in ("int32", "int64", "bool"):
            try:
                dist.all_reduce(ag.tensor(mine), op=op)
            except TypeError as e:
                assert "floating-point" in str(e), e
            else:
                raise AssertionError(f"AVG on {dtype} did not raise")
            continue
        t = ag.tensor(mine)
        v = t._version
        assert dist.all_reduce(t, op=op) is None
        same(t, reference(op, everyone), f"all_reduce {op} {dtype}", dtype)
        assert t._version > v, "all_reduce must bump the version (in place)"
        # async form
        t = ag.tensor(mine)
        work = dist.all_reduce(t, op=op, async_op=True)
        work.wait()
        same(t, reference(op, everyone), f"all_reduce async {op} {dtype}", dtype)
        # reduce_scatter_tensor: rows (size * 2, 4) -> rank's (2, 4)
        big = [data(r, dtype, (size * 2, 4), salt=1) for r in range(size)]
        out = ag.zeros(2, 4, dtype=dtype)
        dist.reduce_scatter_tensor(out, ag.tensor(big[rank]), op=op)
        same(
            out,
            reference(op, big)[2 * rank : 2 * rank + 2],
            f"reduce_scatter_tensor {op} {dtype}",
            dtype,
        )
        # reduce_scatter with a list
        out = ag.zeros(2, 4, dtype=dtype)
        dist.reduce_scatter(
            out, [ag.tensor(big[rank][2 * i : 2 * i + 2]) for i in range(size)], op=op
        )
        same(
            out, reference(op, big)[2 * rank : 2 * rank + 2], f"reduce_scatter {op} {dtype}", dtype
        )
        checked += 4

    # broadcast from every root
    for src in range(size):
        t = ag.tensor(data(rank, dtype, salt=2))
        dist.broadcast(t, src=src)
        same(t, data(src, dtype, salt=2), f"broadcast src={src} {dtype}", dtype)
        checked += 1
    # all_gather / all_gather_into_tensor
    mine = data(rank, dtype, (2, 3), salt=3)
    outs = [ag.zeros(2, 3, dtype=dtype) for _ in range(size)]
    dist.all_gather(outs, ag.tensor(mine))
    for r in range(size):
        same(outs[r], data(r, dtype, (2, 3), salt=3), f"all_gather [{r}] {dtype}", dtype)
    out = ag.zeros(2 * size, 3, dtype=dtype)
    dist.all_gather_into_tensor(out, ag.tensor(mine))
    same(
        out,
        np.concatenate([data(r, dtype, (2, 3), salt=3) for r in range(size)]),
        f"all_gather_into_tensor {dtype}",
        dtype,
    )
    out = ag.zeros(size, 2, 3, dtype=dtype)
    dist.all_gather_into_tensor(out, ag.tensor(mine))
    same(
        out,
        np.stack([data(r, dtype, (2, 3), salt=3) for r in range(size)]),
        f"all_gather_into_tensor stacked {dtype}",
        dtype,
    )
    checked += 3

# errors, as PyTorch words them
for bad, want in [
    (lambda: dist.broadcast(ag.ones(2), src=size), "invalid root rank"),
    (lambda: dist.all_reduce(ag.ones(4, 4).t()), "contiguous"),
    (lambda: dist.all_gather([ag.zeros(3)] * (size + 1), ag.ones(3)), "expected length"),
    (lambda: dist.all_gather_into_tensor(ag.zeros(size * 3 + 1), ag.ones(3)), "world_size times"),
    (lambda: dist.all_reduce(ag.ones(2), op=17), "unsupported reduce op"),
]:
    try:
        bad()
    except (ValueError, TypeError) as e:
        assert want in str(e), (want, str(e))
    else:
        raise AssertionError(f"no error: {want}")

dist.barrier()
dist.destroy_process_group()
assert not dist.is_initialized()
print(f"rank {rank}/{size}: {checked} collectives checked OK", flush=True)
