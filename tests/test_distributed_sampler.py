"""DistributedSampler against PyTorch's: the same index lists without shuffling (padding and
drop_last included), the same structure and full coverage with shuffling."""

from __future__ import annotations

import numpy as np
import pytest

from autogradcli.data import DataLoader, DistributedSampler, TensorDataset
from autogradcli.tensor.factory import arange

SIZES = [1, 2, 5, 7, 10, 11, 12]


def _torch_indices(n, replicas, rank, shuffle, drop_last, seed=0, epoch=0):
    torch = pytest.importorskip("torch")
    from torch.utils.data import DistributedSampler as TorchSampler

    s = TorchSampler(
        range(n), num_replicas=replicas, rank=rank, shuffle=shuffle, seed=seed, drop_last=drop_last
    )
    s.set_epoch(epoch)
    del torch
    return list(s), len(s)


@pytest.mark.parametrize("drop_last", [False, True])
@pytest.mark.parametrize("replicas", [1, 2, 3, 4])
def test_unshuffled_index_lists_equal_torch(replicas, drop_last):
    for n in SIZES:
        if drop_last and n < replicas:
            continue  # torch raises/returns nothing there as well; covered below
        for rank in range(replicas):
            want, want_len = _torch_indices(n, replicas, rank, False, drop_last)
            ours = DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
            assert list(ours) == want, (n, replicas, rank, drop_last)
            assert len(ours) == want_len


@pytest.mark.parametrize("drop_last", [False, True])
@pytest.mark.parametrize("replicas", [2, 3])
def test_shuffled_structure_and_coverage(replicas, drop_last):
    for n in (10, 11, 12, 7):
        for epoch in (0, 1):
            parts = []
            for rank in range(replicas):
                want, want_len = _torch_indices(n, replicas, rank, True, drop_last, 3, epoch)
                s = DistributedSampler(
                    range(n), replicas, rank, shuffle=True, seed=3, drop_last=drop_last
                )
                s.set_epoch(epoch)
                got = list(s)
                assert len(got) == len(s) == want_len == len(want)
                parts.append(got)
            flat = [i for p in parts for i in p]
            if drop_last:  # each sample at most once; exactly n - n % replicas of them
                assert len(set(flat)) == len(flat) == n - n % replicas
            else:  # every sample at least once; the padding repeats len(flat) - n of them
                assert set(flat) == set(range(n))
                assert len(flat) - n == (-n) % replicas


def test_epochs_and_seeds_change_the_order_identically_on_every_rank():
    a = [DistributedSampler(range(50), 2, r, seed=5) for r in range(2)]
    orders = []
    for epoch in (0, 1):
        for s in a:
            s.set_epoch(epoch)
        orders.append([list(s) for s in a])
    assert orders[0] != orders[1]
    assert sorted(orders[0][0] + orders[0][1]) == list(range(50))
    b = DistributedSampler(range(50), 2, 0, seed=5)
    assert list(b) == orders[0][0]  # same seed and epoch: same order
    assert list(DistributedSampler(range(50), 2, 0, seed=6)) != orders[0][0]


def test_single_replica_shuffled_equals_the_global_order():
    """The equivalence tests rely on this: replicas' shares interleave the one-replica order."""
    one = list(DistributedSampler(range(64), 1, 0, seed=9))
    two = [list(DistributedSampler(range(64), 2, r, seed=9)) for r in range(2)]
    assert two[0] == one[0::2] and two[1] == one[1::2]


def test_bad_rank_and_missing_group():
    with pytest.raises(
        ValueError, match=r"Invalid rank 2, rank should be in the interval \[0, 1\]"
    ):
        DistributedSampler(range(4), num_replicas=2, rank=2)
    with pytest.raises(ValueError, match="Invalid rank -1"):
        DistributedSampler(range(4), num_replicas=2, rank=-1)
    with pytest.raises(RuntimeError, match="init_process_group"):
        DistributedSampler(range(4))


def test_dataloader_with_the_sampler():
    ds = TensorDataset(arange(10))
    s = DistributedSampler(ds, num_replicas=3, rank=1, shuffle=False)
    batches = [b[0].tolist() for b in DataLoader(ds, batch_size=2, sampler=s)]
    assert batches == [[1, 4], [7, 0]]  # 10 padded to 12 with 0, 1: rank 1 takes 1 4 7 0
    assert np.array_equal(s.indices(), [1, 4, 7, 0])
