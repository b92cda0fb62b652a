"""Samplers and dataset combinators against torch.utils.data: lengths, value ranges, frequencies
(on fixed seeds), argument errors, Subset/ConcatDataset/ChainDataset and user-written samplers."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import autogradcli as ag
from autogradcli.utils import data


def test_random_sampler_replacement_and_num_samples() -> None:
    gen = data.Generator(0)
    s = data.RandomSampler(range(5), num_samples=12, generator=gen)
    order = list(s)
    assert len(s) == len(order) == 12
    counts = np.bincount(order, minlength=5)
    assert set(counts.tolist()) == {2, 3}  # two whole permutations, then 2 of a third
    assert sorted(order[:5]) == sorted(order[5:10]) == list(range(5))
    r = data.RandomSampler(range(3), replacement=True, num_samples=3000, generator=gen)
    drawn = np.array(list(r))
    assert drawn.min() == 0 and drawn.max() == 2
    assert np.all(np.abs(np.bincount(drawn) / 3000 - 1 / 3) < 0.05)
    assert len(list(data.RandomSampler(range(4), replacement=True))) == 4
    assert sorted(data.RandomSampler(range(6))) == list(range(6))


def test_subset_random_sampler_is_a_permutation_of_the_subset() -> None:
    s = data.SubsetRandomSampler([7, 3, 9, 1], generator=data.Generator(1))
    first, second = list(s), list(s)
    assert sorted(first) == sorted(second) == [1, 3, 7, 9] and len(s) == 4


def test_weighted_random_sampler_frequencies() -> None:
    w = [1.0, 0.0, 3.0, 4.0]
    s = data.WeightedRandomSampler(w, 20000, generator=data.Generator(2))
    freq = np.bincount(list(s), minlength=4) / 20000
    np.testing.assert_allclose(freq, np.array(w) / 8, atol=0.015)
    assert freq[1] == 0
    once = list(data.WeightedRandomSampler(ag.tensor(w), 3, replacement=False))
    assert sorted(once) == [0, 2, 3]
    # without replacement: first draws follow the weights; zero weights come last (as torch)
    firsts = [
        next(iter(data.WeightedRandomSampler([1.0, 3.0], 2, False, data.Generator(i))))
        for i in range(2000)
    ]
    assert abs(np.mean(firsts) - 0.75) < 0.04
    assert list(data.WeightedRandomSampler([0.0, 1.0, 0.0], 3, replacement=False)) == [1, 0, 2]


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.RandomSampler(range(3), num_samples=0),
        lambda m: m.RandomSampler(range(3), num_samples=1.5),
        lambda m: m.RandomSampler(range(3), replacement=1),
        lambda m: m.WeightedRandomSampler([1.0, 2.0], 0),
        lambda m: m.WeightedRandomSampler([1.0, 2.0], 2, replacement=None),
        lambda m: m.WeightedRandomSampler([[1.0, 2.0]], 2),
        lambda m: m.BatchSampler(range(3), 0, False),
        lambda m: m.BatchSampler(range(3), True, False),
        lambda m: m.BatchSampler(range(3), 2, 1),
    ],
)
def test_sampler_argument_errors_match_torch(make: Any) -> None:
    torch = pytest.importorskip("torch")
    with pytest.raises((TypeError, ValueError)) as theirs:
        make(torch.utils.data)
    with pytest.raises(theirs.type) as ours:
        make(data)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize(
    "args", [([1.0, 2.0], 3, False), ([1.0, -1.0], 1), ([0.0, 0.0], 1), ([1.0, np.inf], 1)]
)
def test_weighted_sampler_bad_distributions_match_torch_errors(args: tuple) -> None:
    """PyTorch finds these when it samples; we refuse them when the sampler is made."""
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError) as theirs:
        list(torch.utils.data.WeightedRandomSampler(*args))
    with pytest.raises(RuntimeError) as ours:
        data.WeightedRandomSampler(*args)
    assert str(ours.value) == str(theirs.value)


def test_batch_sampler_like_torch() -> None:
    torch = pytest.importorskip("torch")
    for bs, drop in [(3, False), (3, True), (5, False), (11, True)]:
        ours = data.BatchSampler(data.SequentialSampler(range(10)), bs, drop)
        theirs = torch.utils.data.BatchSampler(
            torch.utils.data.SequentialSampler(range(10)), bs, drop
        )
        assert list(ours) == list(theirs) and len(ours) == len(theirs)
    assert list(data.BatchSampler([4, 2, 0], 2, False)) == [[4, 2], [0]]  # any iterable


def test_user_sampler_with_only_iter_and_len() -> None:
    class Evens(data.Sampler):
        def __init__(self, n: int) -> None:
            self.n = n

        def __iter__(self) -> Any:
            return iter(range(0, self.n, 2))

        def __len__(self) -> int:
            return (self.n + 1) // 2

    ds = data.TensorDataset(ag.arange(10) * 10)
    loader = data.DataLoader(ds, batch_size=2, sampler=Evens(10))
    assert [b[0].tolist() for b in loader] == [[0, 20], [40, 60], [80]]
    assert len(loader) == 3
    with pytest.raises(NotImplementedError, match="must implement __iter__"):
        iter(data.Sampler())


def test_subset_concat_chain_like_torch() -> None:
    torch = pytest.importorskip("torch")
    t = torch.utils.data
    a, ta = data.TensorDataset(ag.arange(5)), t.TensorDataset(torch.arange(5))
    b, tb = data.TensorDataset(ag.arange(5, 8)), t.TensorDataset(torch.arange(5, 8))
    sub, tsub = data.Subset(a, [4, 0, 2]), t.Subset(ta, [4, 0, 2])
    cat, tcat = data.ConcatDataset([sub, b]), t.ConcatDataset([tsub, tb])
    assert len(cat) == len(tcat) == 6 and cat.cumulative_sizes == tcat.cumulative_sizes
    assert [cat[i][0].item() for i in range(-6, 6)] == [tcat[i][0].item() for i in range(-6, 6)]
    with pytest.raises(
        ValueError, match="absolute value of index should not exceed dataset length"
    ):
        cat[-7]
    assert [x[0].item() for x in (sub + b)] == [4, 0, 2, 5, 6, 7]

    class S(data.IterableDataset):
        def __init__(self, r: range) -> None:
            self.r = r

        def __iter__(self) -> Any:
            return iter(self.r)

        def __len__(self) -> int:
            return len(self.r)

    chain = S(range(2)) + S(range(5, 7))
    assert isinstance(chain, data.ChainDataset) and list(chain) == [0, 1, 5, 6] and len(chain) == 4
    with pytest.raises(AssertionError, match="ConcatDataset does not support IterableDataset"):
        data.ConcatDataset([a, S(range(2))])
    assert [b.tolist() for b in data.DataLoader(chain, batch_size=3)] == [[0, 1, 5], [6]]
