"""DistributedDataParallel and SyncBatchNorm: equivalence with one process on 2 and 3 ranks
(mpiexec), no_sync, unused parameters, the broadcast at construction; bucket assignment and
conversion in-process."""

from __future__ import annotations

import numpy as np
import pytest
from programs.distributed.mpirun import check, run_mpi

import autogradcli as ag
import autogradcli.nn as nn
from autogradcli.nn.parallel import DistributedDataParallel
from autogradcli.nn.parallel.reducer import FIRST_BUCKET_BYTES, assign_buckets, reached_leaves


def _epochs(out: str, mode: str) -> list[tuple[float, float]]:
    rows = []
    for line in out.splitlines():
        if line.startswith(f"{mode} epoch"):
            ddp = float(line.split("max |ddp - single| ")[1].split(",")[0])
            own = float(line.split("max |own share only - single| ")[1])
            rows.append((ddp, own))
    return rows


@pytest.mark.mpi
@pytest.mark.parametrize("n", [2, 3])
def test_mlp_on_n_ranks_matches_one_process_every_epoch(n):
    out = check(run_mpi(n, "ddp_worker.py", "mlp", timeout=300))
    rows = _epochs(out, "mlp")
    assert len(rows) == 3, out
    for ddp, own in rows:  # the worker asserts these too; here they are reported
        assert ddp <= 2e-5 and own > 2e-3


@pytest.mark.mpi
def test_cnn_with_syncbatchnorm_matches_one_process_every_epoch():
    out = check(run_mpi(2, "ddp_worker.py", "cnn", timeout=300))
    rows = _epochs(out, "cnn")
    assert len(rows) == 2, out
    assert all(ddp <= 2e-5 and own > 2e-3 for ddp, own in rows)


@pytest.mark.mpi
@pytest.mark.parametrize("n", [2, 3])
def test_syncbatchnorm_equals_batchnorm_on_the_concatenated_batch(n):
    out = check(run_mpi(n, "ddp_worker.py", "syncbn", timeout=300))
    assert f"syncbn: {n} ranks vs" in out


@pytest.mark.mpi
def test_no_sync_accumulates_locally_then_averages():
    out = check(run_mpi(2, "ddp_worker.py", "no_sync", timeout=300))
    assert "no_sync: 2 local + 1 synced backward" in out


@pytest.mark.mpi
@pytest.mark.parametrize("n", [2, 3])
def test_unused_parameters(n):
    out = check(run_mpi(n, "ddp_worker.py", "unused", timeout=300))
    assert "without it the error names b.weight, b.bias, never.weight, never.bias" in out


@pytest.mark.mpi
def test_broadcast_at_construction():
    out = check(run_mpi(2, "ddp_worker.py", "broadcast", timeout=300))
    assert "every rank holds rank 0's parameters and buffers" in out


# ---------------------------------------------------------------------- in-process
def test_buckets_reverse_order_first_capped_at_1mb_and_split_by_dtype():
    mb = 1024 * 1024
    params = [
        ag.zeros(mb // 4 // 2),  # 0.5 MB float32
        ag.zeros(mb // 4),  # 1 MB
        ag.zeros(3, dtype="float64"),
        ag.zeros(mb // 4 // 2),  # 0.5 MB
        ag.zeros(mb // 4 // 2),  # 0.5 MB
    ]
    buckets = assign_buckets(params, cap_bytes=2 * mb)
    # reverse order: 4 and 3 fill the first (1 MB) bucket; then 2 MB buckets; float64 alone
    assert buckets == [[4, 3], [1, 0], [2]]
    assert mb == FIRST_BUCKET_BYTES
    assert assign_buckets(params, cap_bytes=100) == [[4], [3], [1], [0], [2]]  # 24 B never fills
    assert assign_buckets(params, cap_bytes=100 * mb) == [[4, 3], [1, 0], [2]]


def test_reached_leaves_follows_the_graph():
    a, b, c = (ag.randn(2, requires_grad=True) for _ in range(3))
    out = (a * 2 + b).sum()
    assert reached_leaves(out) == {id(a), id(b)}
    assert reached_leaves({"x": [out, c]}) == {id(a), id(b), id(c)}


def test_ddp_needs_a_process_group_and_parameters():
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        DistributedDataParallel(nn.Linear(2, 2))


def test_convert_sync_batchnorm_shares_parameters_and_statistics():
    torch = pytest.importorskip("torch")
    m = nn.Sequential(
        nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4, momentum=0.2), nn.Sequential(nn.BatchNorm1d(3))
    )
    m[1].eval()
    w, rm = m[1].weight, m[1].running_mean
    c = nn.SyncBatchNorm.convert_sync_batchnorm(m)
    assert type(c[1]) is nn.SyncBatchNorm and type(c[2][0]) is nn.SyncBatchNorm
    assert c[1].weight is w and c[1].running_mean is rm and not c[1].training
    assert c[1].momentum == 0.2
    t = torch.nn.SyncBatchNorm.convert_sync_batchnorm(
        torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3), torch.nn.BatchNorm2d(4, momentum=0.2))
    )
    assert repr(c[1]) == repr(t[1])
    bn = nn.SyncBatchNorm.convert_sync_batchnorm(nn.BatchNorm1d(5))
    assert type(bn) is nn.SyncBatchNorm


def test_syncbatchnorm_without_a_group_is_batchnorm():
    ag.manual_seed(0)
    x = ag.randn(6, 3, 4, requires_grad=True)
    s, b = nn.SyncBatchNorm(3), nn.BatchNorm1d(3)
    ys, yb = s(x), b(x)
    np.testing.assert_array_equal(ys.detach().numpy(), yb.detach().numpy())
    np.testing.assert_array_equal(s.running_var.numpy(), b.running_var.numpy())
    with pytest.raises(ValueError, match="expected at least 2D input"):
        s(ag.randn(3))
